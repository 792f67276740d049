"""An unchanged isolated worktree removed after its result (issue 30), on real repositories:
the end is one task the host holds before anything is awaited, so a caller cancelled while
the status is taken still leaves nothing behind once ``SubagentHost.settle`` returns; the
worktree stays in use until it is gone; and its branch is deleted only at the commit it was
made at (a commit made on it after the status is kept)."""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import cast

import pytest

from tests import test_isolation_lifecycle as lifecycle
from tests.support.git_repos import git
from wave_ls.runtime.core import ModelClient
from wave_ls.subagents.runner import SubagentHost
from wave_ls.worktrees import WorktreeManager, create_isolated_worktree, in_use, registry_file
from wave_ls.worktrees.inspection import WorktreeDirs
from wave_ls.worktrees.isolation import (
    IsolatedWorktree,
    confine_isolated_worktree,
    finish_isolated_worktree_soon,
)
from wave_ls.worktrees.model import Changes, PathLike

clean_git_env, home, origin, repo, template = (
    lifecycle.clean_git_env,
    lifecycle.home,
    lifecycle.origin,
    lifecycle.repo,
    lifecycle.template,
)
OWNER = "subagent sub-test"


class GatedManager(WorktreeManager):
    """The real manager, whose status and removal each wait at a gate the test opens (so
    the test acts at the moment it means to, not after some time)."""

    def __init__(self) -> None:
        super().__init__()
        self.status_started = threading.Event()
        self.status_gate = threading.Event()
        self.remove_started = threading.Event()
        self.remove_gate = threading.Event()
        self.status_gate.set()
        self.remove_gate.set()

    def start_changes(
        self, worktree_path: PathLike, base_commit: str, *, dirs: WorktreeDirs | None = None
    ) -> Callable[[], Changes]:
        finish = super().start_changes(worktree_path, base_commit, dirs=dirs)

        def gated() -> Changes:  # the wait for git's answer, in finish's thread
            self.status_started.set()
            assert self.status_gate.wait(30)
            return finish()

        return gated

    def remove(
        self, repo: PathLike, path: PathLike, branch: str | None, *, force: bool = False
    ) -> None:
        self.remove_started.set()
        assert self.remove_gate.wait(30)
        super().remove(repo, path, branch, force=force)


def host(repo: Path, home: Path) -> SubagentHost:
    """A host for its endings only (``after_return``, ``settle``): no model is asked."""
    return SubagentHost(
        client=cast(ModelClient, None),
        catalog=lambda: None,  # type: ignore[arg-type,return-value]
        parent_config=lambda: None,  # type: ignore[arg-type,return-value]
        asker=lambda: None,  # type: ignore[arg-type,return-value]
        memory_cwd=repo,
        home=home,
    )


def branches(repo: Path) -> str:
    return git(repo, "branch", "--list")


def record_exists(wt: IsolatedWorktree) -> bool:
    return registry_file.record_path(wt.main_repo, wt.name).exists()


async def made(repo: Path, home: Path, manager: WorktreeManager) -> IsolatedWorktree:
    wt = await create_isolated_worktree(repo, home=home, owner=OWNER, manager=manager)
    registry_file.settle(registry_file.record_path(wt.main_repo, wt.name))
    assert wt.branch in branches(repo) and record_exists(wt)
    return wt


@pytest.mark.parametrize("changed", [False, True])
async def test_a_caller_cancelled_while_the_status_is_taken_leaves_nothing_behind_settle(
    repo: Path, home: Path, changed: bool
) -> None:
    manager = GatedManager()
    wt = await made(repo, home, manager)
    if changed:
        (wt.path / "new.py").write_text("y = 2\n")
    box = await asyncio.to_thread(confine_isolated_worktree, wt)
    session = host(repo, home)
    manager.status_gate.clear()
    ending = asyncio.ensure_future(
        finish_isolated_worktree_soon(wt, session.after_return, manager=manager, sandbox=box)
    )
    assert await asyncio.to_thread(manager.status_started.wait, 30)  # in finish's thread now
    ending.cancel()
    with pytest.raises(asyncio.CancelledError):
        await ending
    manager.status_gate.set()
    await session.settle()
    assert in_use.holders(wt.path) == []
    if changed:  # a worktree with changes is never removed
        assert (wt.path / "new.py").is_file()
        assert wt.branch in branches(repo) and record_exists(wt)
    else:
        assert not os.path.lexists(wt.path)
        assert wt.branch not in branches(repo) and not record_exists(wt)
        assert wt.name not in git(repo, "worktree", "list")


async def test_the_worktree_stays_in_use_until_it_is_removed(repo: Path, home: Path) -> None:
    manager = GatedManager()
    wt = await made(repo, home, manager)
    session = host(repo, home)
    manager.remove_gate.clear()
    outcome = await finish_isolated_worktree_soon(wt, session.after_return, manager=manager)
    assert not outcome.kept  # the result: removed (after)
    assert await asyncio.to_thread(manager.remove_started.wait, 30)
    assert OWNER in in_use.holders(wt.path)  # no EnterWorktree or remove may take it now
    manager.remove_gate.set()
    await session.settle()
    assert in_use.holders(wt.path) == [] and not os.path.lexists(wt.path)


async def test_a_commit_made_on_the_branch_after_the_status_keeps_the_branch(
    repo: Path, home: Path
) -> None:
    manager = GatedManager()
    wt = await made(repo, home, manager)
    session = host(repo, home)
    manager.remove_gate.clear()
    outcome = await finish_isolated_worktree_soon(wt, session.after_return, manager=manager)
    assert not outcome.kept  # unchanged when the status was taken
    assert await asyncio.to_thread(manager.remove_started.wait, 30)
    # A command that outlived the run commits now, between the status and the removal.
    git(wt.path, "commit", "--allow-empty", "-m", "late work")
    late = git(wt.path, "rev-parse", "HEAD").strip()
    manager.remove_gate.set()
    await session.settle()
    assert not os.path.lexists(wt.path)  # the worktree itself held no files of its own
    assert git(repo, "rev-parse", f"refs/heads/{wt.branch}").strip() == late
    assert "late work" in git(repo, "log", "-1", "--format=%s", wt.branch)


@pytest.mark.parametrize("git_available", [True, False])
def test_the_branch_is_deleted_only_at_the_expected_commit(repo: Path, git_available: bool) -> None:
    manager = WorktreeManager(git_available=git_available)
    base = git(repo, "rev-parse", "HEAD").strip()
    git(repo, "branch", "worktree-a", base)
    git(repo, "branch", "worktree-b", base)
    git(repo, "commit", "--allow-empty", "-m", "moved")
    git(repo, "branch", "-f", "worktree-b", "HEAD")
    moved = git(repo, "rev-parse", "HEAD").strip()
    assert manager.delete_branch_at(repo, "worktree-a", base) is None
    assert "worktree-a" not in branches(repo)
    assert manager.delete_branch_at(repo, "worktree-b", base) == moved  # kept, and where
    assert git(repo, "rev-parse", "refs/heads/worktree-b").strip() == moved
    assert manager.delete_branch_at(repo, "worktree-gone", base) is None
