"""What a worktree wave-ls did not make holds (no base commit was recorded for it).

Its uncommitted files are counted against its own ``HEAD``; its commits are only those no
branch (local or remote) holds besides the ``worktree-<name>`` branch that goes with it:
removing it loses nothing else. Any
doubt (git missing or failing) is unknown, and unknown keeps the worktree (WT-8).
"""

from __future__ import annotations

import shutil

from wave_ls.runtime import git_command
from wave_ls.worktrees import layout
from wave_ls.worktrees.isolation import IsolatedWorktree, deletable_branch
from wave_ls.worktrees.manager import WorktreeManager
from wave_ls.worktrees.model import Changes

REV_LIST_TIMEOUT = 30.0


def changes_without_base(wt: IsolatedWorktree, manager: WorktreeManager) -> Changes:
    """``Changes`` of ``wt`` counted without a base commit (see the module's docstring)."""
    # HEAD as registered from the parent's side, not through the worktree's own .git file
    # (which whoever works in it can point elsewhere); branches are the main repository's.
    head = layout.read_head_in(wt.git.git_dir, wt.git.common) if wt.git else None
    if head is None:
        return Changes.unknown("its base commit is unknown and its HEAD cannot be read")
    own = deletable_branch(wt)  # removed with it; any other branch stays and keeps its commits
    excluded = [f"--exclude={own}"] if own else []
    found = _git(wt, "rev-list", "--count", head, "--not", *excluded, "--branches", "--remotes")
    # (``head`` is 40 hex digits: read_head_in accepts nothing else.)
    if found is None and shutil.which("git") is None:
        found = _count_by_dulwich(wt, head, own)
    if found is None or not found.isdigit():
        return Changes.unknown("its base commit is unknown and its commits cannot be counted")
    try:
        files = manager.changes(wt.path, head, dirs=wt.git).changed_files
    except Exception as error:  # fail-safe: unknown means keep
        return Changes.unknown(str(error))
    return Changes(changed_files=files, commits=int(found))


def _count_by_dulwich(wt: IsolatedWorktree, head: str, own: str | None) -> str | None:
    """The same count without a git binary."""
    try:
        from dulwich.repo import Repo

        with Repo(str(wt.main_repo)) as repo:
            others = [
                sha
                for prefix in (b"refs/heads", b"refs/remotes")
                for name, sha in repo.refs.as_dict(prefix).items()  # type: ignore[arg-type]
                if not (prefix == b"refs/heads" and own is not None and name == own.encode())
            ]
            walker = repo.get_walker(include=[head.encode()], exclude=others)  # type: ignore[list-item]
            return str(sum(1 for _ in walker))
    except Exception:  # fail-safe: unknown means keep
        return None


def _git(wt: IsolatedWorktree, *args: str) -> str | None:
    try:
        run = git_command.run_git(wt.main_repo, *args, timeout=REV_LIST_TIMEOUT)
    except (OSError, git_command.subprocess.SubprocessError, git_command.GitCommandError):
        return None
    return run.stdout.strip() if run.returncode == 0 else None
