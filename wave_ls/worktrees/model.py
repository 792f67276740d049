"""What the worktree manager talks in: results, errors and the backend protocol."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol, runtime_checkable

PathLike = str | os.PathLike[str]

DEFAULT_EXCLUDE = ".wave/worktrees/"


class WorktreeError(Exception):
    """A worktree operation was refused or failed; ``str(error)`` says what and what to do."""


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

    def changes(self, worktree_path: PathLike, base_commit: str) -> Changes:
        """Changed files (status entries) and commits since ``base_commit``."""
        ...

    def remove(
        self, repo: PathLike, path: PathLike, branch: str | None, *, force: bool = False
    ) -> None:
        """Delete the worktree (refused when dirty unless ``force``) and then ``branch``."""
        ...

    def list(self, repo: PathLike) -> list[WorktreeInfo]:
        """The main worktree first, then linked worktrees sorted by path."""
        ...

    def ensure_excluded(self, repo: PathLike, pattern: str = DEFAULT_EXCLUDE) -> None:
        """Add ``pattern`` to the main repository's ``info/exclude`` if missing."""
        ...
