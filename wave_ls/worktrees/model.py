"""What the worktree manager talks in: results, errors and the backend protocol."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

if TYPE_CHECKING:
    from wave_ls.worktrees.inspection import WorktreeDirs

PathLike = str | os.PathLike[str]

DEFAULT_EXCLUDE = ".wave/worktrees/"


class WorktreeError(Exception):
    """A worktree operation was refused or failed; ``str(error)`` says what and what to do."""


class IsolationError(Exception):
    """A worktree could not be made or removed; ``str(error)`` says why and what to do."""


@dataclass(frozen=True)
class WorktreeInfo:
    """One worktree of a repository.

    ``branch`` is the short branch name (``worktree-x``), None when HEAD is detached.
    ``base_commit`` (set by ``create``) is the worktree's HEAD when it was created, the base
    for counting its commits; for a reused worktree it is its HEAD when it was found.
    """

    path: Path
    branch: str | None
    head: str | None
    is_main: bool = False
    base_commit: str | None = None
    is_new: bool = False
    prunable: bool = False


@dataclass(frozen=True)
class Changes:
    """What a worktree holds beyond its base: uncommitted files and new commits.

    ``determinable=False`` means status or the commit walk failed; callers then keep the
    worktree (fail-safe, WT-8) and show ``error``.
    """

    changed_files: int
    commits: int
    determinable: bool = True
    error: str | None = None

    @property
    def has_changes(self) -> bool:
        """True when there is something to keep, or when nobody can tell (fail-safe)."""
        return not self.determinable or self.changed_files > 0 or self.commits > 0

    @classmethod
    def unknown(cls, error: str) -> Changes:
        return cls(changed_files=0, commits=0, determinable=False, error=error)


FileStatus = Literal["added", "modified", "deleted", "renamed"]
# A review of a huge generated file must not flood the editor: the patch stops here.
MAX_PATCH_CHARS = 4_000_000


@dataclass(frozen=True)
class FileChange:
    """One file of a worktree diff; ``path`` is relative to the worktree's root (the new
    path of a rename, whose old one is ``old_path``). A binary file counts no lines."""

    path: str
    status: FileStatus
    additions: int = 0
    deletions: int = 0
    binary: bool = False
    old_path: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "path": self.path,
            "status": self.status,
            "additions": self.additions,
            "deletions": self.deletions,
        }
        if self.binary:
            out["binary"] = True
        if self.old_path is not None:
            out["oldPath"] = self.old_path
        return out


@dataclass(frozen=True)
class WorktreeDiff:
    """Everything a worktree holds against a base commit (commits, staged, unstaged and
    untracked files): a per-file summary and one unified diff (binary files named only).
    Build it with ``make``, which caps the patch."""

    base_commit: str
    files: list[FileChange] = field(default_factory=list)
    patch: str = ""
    truncated: bool = False

    @classmethod
    def make(cls, base_commit: str, files: list[FileChange], patch: str) -> WorktreeDiff:
        files = sorted(files, key=lambda change: change.path)
        if len(patch) <= MAX_PATCH_CHARS:
            return cls(base_commit, files, patch)
        cut = patch.rfind("\n", 0, MAX_PATCH_CHARS) + 1
        note = f"... the patch is cut here: {len(patch) - cut} more characters not shown\n"
        return cls(base_commit, files, patch[:cut] + note, truncated=True)

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "baseCommit": self.base_commit,
            "files": [change.to_json() for change in self.files],
            "patch": self.patch,
        }
        if self.truncated:
            out["truncated"] = True
        return out


@runtime_checkable
class WorktreeBackend(Protocol):
    """The operations the runtime needs on git worktrees; see ``docs/worktrees.md``.

    Every ``repo`` argument may be any path inside the main repository or inside one of its
    linked worktrees: backends always work on the main repository.
    """

    name: str

    def main_repo(self, path: PathLike) -> Path | None:
        """The main repository's work tree for ``path``, or None outside git."""
        ...

    def default_branch(self, repo: PathLike) -> str | None:
        """Origin's default branch (``main``), or None without an origin."""
        ...

    def create(self, repo: PathLike, path: PathLike, branch: str, base_ref: str) -> WorktreeInfo:
        """``git worktree add -b <branch> <path> <base_ref>``; reuses a worktree at ``path``."""
        ...

    def changes(
        self, worktree_path: PathLike, base_commit: str, *, dirs: WorktreeDirs | None = None
    ) -> Changes:
        """Changed files (status entries) and commits since ``base_commit``; ``dirs`` are
        the worktree's git dirs recorded before an agent ran in it (else found from the
        parent's side, see ``inspection.py``)."""
        ...

    def start_changes(
        self, worktree_path: PathLike, base_commit: str, *, dirs: WorktreeDirs | None = None
    ) -> Callable[[], Changes]:
        """``changes`` begun in the caller's thread, its result when the returned call is
        made (blocking: from another thread). git's processes start here; dulwich's whole
        work waits for the call."""
        ...

    def remove(
        self, repo: PathLike, path: PathLike, branch: str | None, *, force: bool = False
    ) -> None:
        """Delete the worktree (refused when dirty unless ``force``) and then ``branch``."""
        ...

    def list(self, repo: PathLike) -> list[WorktreeInfo]:
        """The main worktree first, then linked worktrees sorted by path."""
        ...

    def diff(
        self, worktree_path: PathLike, base_commit: str, *, dirs: WorktreeDirs | None = None
    ) -> WorktreeDiff:
        """Everything in the worktree (commits, index, working files, untracked files that
        are not ignored) against ``base_commit``; the worktree's own index is not touched."""
        ...

    def ensure_excluded(self, repo: PathLike, pattern: str = DEFAULT_EXCLUDE) -> None:
        """Add ``pattern`` to the main repository's ``info/exclude`` if missing."""
        ...
