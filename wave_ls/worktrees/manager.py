"""The facade the runtime uses: per operation, the backend that measured fastest.

The choices come from ``benchmarks/bench_worktrees.py`` (figures in ``docs/worktrees.md``).
Without ``git`` on PATH every operation runs on dulwich.
"""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from wave_ls.runtime import git_command, git_dirs
from wave_ls.worktrees import layout
from wave_ls.worktrees.git_cli import GitCliBackend
from wave_ls.worktrees.inspection import WorktreeDirs
from wave_ls.worktrees.model import (
    DEFAULT_EXCLUDE,
    Changes,
    PathLike,
    WorktreeBackend,
    WorktreeDiff,
    WorktreeError,
    WorktreeInfo,
)

if TYPE_CHECKING:
    from wave_ls.worktrees.dulwich_backend import DulwichBackend

Operation = Literal[
    "main_repo", "default_branch", "create", "changes", "diff", "remove", "list", "ensure_excluded"
]
BackendName = Literal["git", "dulwich"]

# Checkout and status are 6-10x faster in git on big repos; lookups that git would answer
# with a process start are faster read straight from disk. See docs/worktrees.md.
PREFERRED: Mapping[Operation, BackendName] = {
    "main_repo": "dulwich",
    "default_branch": "dulwich",
    "create": "git",
    "changes": "git",
    "diff": "git",
    "remove": "git",
    "list": "dulwich",
    "ensure_excluded": "dulwich",
}


class WorktreeManager:
    """A ``WorktreeBackend`` that routes each operation to the better backend."""

    name = "manager"

    def __init__(
        self,
        *,
        git_available: bool | None = None,
        prefer: Mapping[Operation, BackendName] | None = None,
    ) -> None:
        if git_available is None:
            git_available = shutil.which("git") is not None
        self._dulwich: DulwichBackend | None = None
        self.git: GitCliBackend | None = GitCliBackend() if git_available else None
        self.prefer: dict[Operation, BackendName] = {**PREFERRED, **(prefer or {})}

    @property
    def dulwich(self) -> DulwichBackend:
        """The pure-Python backend, made at its first use: dulwich costs ~25 ms to import,
        which a delegation's launch (its plan needs no dulwich) should not pay."""
        if self._dulwich is None:
            from wave_ls.worktrees.dulwich_backend import DulwichBackend

            self._dulwich = DulwichBackend()
        return self._dulwich

    def backend_for(self, operation: Operation) -> WorktreeBackend:
        return self.git if self.backend_for_name(operation) == "git" and self.git else self.dulwich

    def backend_for_name(self, operation: Operation) -> BackendName:
        return "git" if self.prefer[operation] == "git" and self.git is not None else "dulwich"

    def choices(self) -> dict[str, str]:
        """Which backend runs each operation here (for logs and the benchmark)."""
        return {op: self.backend_for(op).name for op in self.prefer}

    def main_repo(self, path: PathLike) -> Path | None:
        if self._from_files("main_repo"):
            return git_dirs.main_repo_of(path)  # the dulwich backend's own lookup
        return self.backend_for("main_repo").main_repo(path)

    def default_branch(self, repo: PathLike) -> str | None:
        main = git_dirs.main_repo_of(repo)
        common = git_dirs.common_dir_of(main) if main is not None else None
        if common is not None:
            known, branch = layout.origin_default_branch(common)  # no dulwich import
            if known:
                return branch
        return self.backend_for("default_branch").default_branch(repo)

    def create(self, repo: PathLike, path: PathLike, branch: str, base_ref: str) -> WorktreeInfo:
        return self.backend_for("create").create(repo, path, branch, base_ref)

    def changes(
        self, worktree_path: PathLike, base_commit: str, *, dirs: WorktreeDirs | None = None
    ) -> Changes:
        return self.start_changes(worktree_path, base_commit, dirs=dirs)()

    def start_changes(
        self, worktree_path: PathLike, base_commit: str, *, dirs: WorktreeDirs | None = None
    ) -> Callable[[], Changes]:
        backend = self.backend_for("changes")
        return backend.start_changes(worktree_path, base_commit, dirs=dirs)

    def diff(
        self, worktree_path: PathLike, base_commit: str, *, dirs: WorktreeDirs | None = None
    ) -> WorktreeDiff:
        return self.backend_for("diff").diff(worktree_path, base_commit, dirs=dirs)

    def remove(
        self, repo: PathLike, path: PathLike, branch: str | None, *, force: bool = False
    ) -> None:
        self.backend_for("remove").remove(repo, path, branch, force=force)

    def remove_unchanged(self, repo: PathLike, path: PathLike, branch: str | None) -> None:
        """Remove a worktree the caller has just found unchanged (``changes``), with its
        branch. Always dulwich: without the dirty check it only deletes files and a ref,
        2-3 ms on a small repository against 10-16 ms for git's ``worktree remove`` and
        ``branch -D`` (two process starts, and a second status)."""
        self.dulwich.remove_unchanged(repo, path, branch)

    def delete_branch_at(self, repo: PathLike, branch: str, commit: str) -> str | None:
        """Delete ``refs/heads/<branch>`` only while it points at ``commit``, in one step
        (a compare-and-delete: ``git update-ref -d <ref> <commit>``, dulwich's
        ``remove_if_equals`` without git), so a commit made on it since is never lost.
        None when it is deleted (or gone already); else the commit it points at now, and
        it stays."""
        main = git_dirs.main_repo_of(repo) or Path(repo)
        ref = f"refs/heads/{branch}"
        if self.git is None:
            return _delete_ref_at_by_dulwich(main, ref, commit)
        try:
            deleted = git_command.run_git(main, "update-ref", "-d", ref, commit)
            if deleted.returncode == 0:
                return None
            now = git_command.run_git(main, "rev-parse", "--verify", "--quiet", ref)
        except git_command.GitCommandError as error:
            raise WorktreeError(str(error)) from error
        return now.stdout.strip() or None if now.returncode == 0 else None

    def list(self, repo: PathLike) -> list[WorktreeInfo]:
        return self.backend_for("list").list(repo)

    def ensure_excluded(self, repo: PathLike, pattern: str = DEFAULT_EXCLUDE) -> None:
        if not self._from_files("ensure_excluded"):
            self.backend_for("ensure_excluded").ensure_excluded(repo, pattern)
            return
        main = git_dirs.main_repo_of(repo)  # as the dulwich backend does
        common = git_dirs.common_dir_of(main) if main is not None else None
        if common is None:
            raise WorktreeError(f"{repo} is not inside a git repository")
        layout.add_exclude(common, pattern)

    def _from_files(self, operation: Operation) -> bool:
        """Whether ``operation`` goes to the dulwich backend, whose lookups of this kind
        read git's files and need no dulwich: done here, so a delegation's plan does not
        import it."""
        return self.backend_for_name(operation) == "dulwich"


def _delete_ref_at_by_dulwich(main: Path, ref: str, commit: str) -> str | None:
    from dulwich.objects import ObjectID
    from dulwich.refs import Ref
    from dulwich.repo import Repo

    name = Ref(ref.encode("utf-8"))
    with Repo(str(main)) as r:
        if name not in r.refs:
            return None
        if r.refs.remove_if_equals(name, ObjectID(commit.encode("ascii"))):
            common = git_dirs.common_dir_of(main)
            if common is not None:  # git drops the reflog with the ref; dulwich appends to it
                with contextlib.suppress(OSError):
                    (common / "logs" / ref).unlink()
            return None
        return r.refs[name].decode("ascii") if name in r.refs else None
