"""Session worktrees (``reference/worktree.md``): entering and leaving a worktree, the
discard rules, per-session state, and the EnterWorktree/ExitWorktree tools (WT-9)."""

# ruff: noqa: F811  (the repository fixtures are imported from the lifecycle tests)

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.test_isolation_lifecycle import (  # noqa: F401  (fixtures)
    branches,
    clean_git_env,
    commit_all,
    git,
    home,
    manager,
    origin,
    repo,
    template,
    write_settings,
)
from wave_ls.runtime.core import ToolContext, ToolError
from wave_ls.runtime.services import Services
from wave_ls.worktrees import (
    IsolationError,
    SessionWorktrees,
    WorktreeManager,
    create_isolated_worktree,
    enter_session_worktree,
    exit_session_worktree,
)
from wave_ls.worktrees.tools import EnterWorktreeTool, ExitWorktreeTool


async def test_enter_with_generated_name_then_keep(
    repo: Path, manager: WorktreeManager, home: Path
):
    (repo / ".env").write_text("TOKEN=1\n")
    (repo / ".worktreeinclude").write_text(".env\n")
    wt = await enter_session_worktree(repo, "", home, owner="session s1", manager=manager)
    assert re.fullmatch(r"[a-z]+-[a-z]+-[a-z]+", wt.name)
    assert wt.path == repo / ".wave" / "worktrees" / wt.name and wt.branch == f"worktree-{wt.name}"
    assert (wt.path / ".env").exists()  # same copies as -w
    outcome = await exit_session_worktree(wt, "keep", manager=manager)
    assert outcome.kept and wt.path.is_dir() and wt.branch in branches(repo)
    assert outcome.summary == f"Worktree kept: {wt.path} on branch {wt.branch} — no changes."


async def test_remove_clean_worktree(repo: Path, manager: WorktreeManager, home: Path):
    wt = await enter_session_worktree(repo, "clean", home, manager=manager)
    outcome = await exit_session_worktree(wt, "remove", manager=manager)
    assert not outcome.kept and not wt.path.exists() and "worktree-clean" not in branches(repo)


async def test_remove_with_changes_needs_discard(repo: Path, manager: WorktreeManager, home: Path):
    # reference: refused, listing the uncommitted files and the commits; then discard
    wt = await enter_session_worktree(repo, "busy", home, manager=manager)
    (wt.path / "done.py").write_text("d = 1\n")
    commit_all(wt.path, "finish the parser")
    (wt.path / "draft.py").write_text("draft\n")
    with pytest.raises(IsolationError) as caught:
        await exit_session_worktree(wt, "remove", manager=manager)
    message = str(caught.value)
    assert "You have 1 uncommitted file. These will be lost if you remove the worktree." in message
    assert "You have 1 commit on worktree-busy. The branch will be deleted" in message
    assert "discard_changes: true" in message
    if manager.git is not None:  # the listing needs git; the counts do not
        assert "?? draft.py" in message and "finish the parser" in message
    assert wt.path.is_dir() and "worktree-busy" in branches(repo)

    outcome = await exit_session_worktree(wt, "remove", discard_changes=True, manager=manager)
    assert not outcome.kept and not wt.path.exists() and "worktree-busy" not in branches(repo)
    assert outcome.summary.startswith("Worktree removed: changes discarded")


async def test_remove_refused_when_changes_cannot_be_verified(repo: Path, home: Path):
    wt = await enter_session_worktree(repo, "unsure", home)
    wt.base_commit = None
    with pytest.raises(IsolationError, match="its changes cannot be verified"):
        await exit_session_worktree(wt, "remove")
    assert wt.path.is_dir()


async def test_second_session_worktree_from_a_worktree_is_not_nested(repo: Path, home: Path):
    # WT-10 for sessions: entering from inside a worktree still uses the main repo
    first = await enter_session_worktree(repo, "one", home)
    second = await enter_session_worktree(first.path, "two", home)
    assert second.path == repo / ".wave" / "worktrees" / "two"


# ---------------------------------------------------------------------- SessionWorktrees


async def test_session_switch_moves_cwd_and_back(repo: Path, home: Path):
    changes: list[tuple[Path, Path | None]] = []
    (repo / "pkg" / "sub").mkdir()
    (repo / "pkg" / "sub" / "k.py").write_text("k = 1\n")
    commit_all(repo, "sub")
    write_settings(repo, {"worktree": {"baseRef": "head"}})
    session = SessionWorktrees(
        repo / "pkg", home, owner="session s1", on_change=lambda c, w: changes.append((c, w))
    )
    wt = await session.enter("feat")
    assert session.cwd == wt.path / "pkg" and session.write_root == wt.path
    with pytest.raises(IsolationError, match="Already in a worktree session"):
        await session.enter("other")
    outcome = await session.exit("remove", False)
    assert not outcome.kept and session.current is None
    assert changes == [(wt.path / "pkg", wt.path), (repo / "pkg", None)]


async def test_sessions_do_not_share_worktree_state(repo: Path, home: Path):
    # reference: concurrent sessions in one process are isolated from each other
    a, b = SessionWorktrees(repo, home), SessionWorktrees(repo, home)
    wt_a = await a.enter("a")
    assert b.current is None and b.cwd == repo
    wt_b = await b.enter("b")
    (wt_a.path / "work.py").write_text("keep me\n")
    await b.exit("remove", False)
    assert a.current is wt_a and wt_a.path.is_dir() and "worktree-a" in branches(repo)
    assert not wt_b.path.exists()


# ---------------------------------------------------------------------- tools


def context(cwd: Path, home: Path, **services: Any) -> ToolContext:
    return ToolContext(cwd=cwd, home=home, services=Services(**services))


async def test_enter_and_exit_tools(repo: Path, home: Path):
    session = SessionWorktrees(repo, home)
    ctx = context(repo, home, session_worktree=session)
    result = await EnterWorktreeTool().run({"name": "tool-wt"}, ctx)
    wt = session.current
    assert wt is not None and wt.name == "tool-wt"
    assert result.content.startswith(
        f"Created worktree at {wt.path} on branch worktree-tool-wt (based on origin/main)."
    )
    assert result.details["worktree"]["path"] == str(wt.path)
    with pytest.raises(ToolError, match="Already in a worktree session"):
        await EnterWorktreeTool().run({}, ctx)

    (wt.path / "new.py").write_text("n = 1\n")
    with pytest.raises(ToolError, match="You have 1 uncommitted file"):
        await ExitWorktreeTool().run({"action": "remove"}, ctx)
    assert session.current is wt  # a refused removal leaves the session where it was
    result = await ExitWorktreeTool().run({"action": "remove", "discard_changes": True}, ctx)
    assert result.content.startswith(f"Exited the worktree session; the session is back in {repo}.")
    assert "Worktree removed: changes discarded" in result.content
    assert session.current is None and not wt.path.exists()

    result = await ExitWorktreeTool().run({"action": "keep"}, ctx)
    assert not result.is_error and result.content.startswith("No active worktree session")


async def test_enter_reuses_an_existing_worktree(repo: Path, home: Path):
    first = SessionWorktrees(repo, home)
    await first.enter("again")
    await first.exit("keep", False)
    ctx = context(repo, home, session_worktree=SessionWorktrees(repo, home))
    result = await EnterWorktreeTool().run({"name": "again"}, ctx)
    assert result.content.startswith("Entered the existing worktree at ")
    assert result.details["worktree"]["isNew"] is False


async def test_tools_refused_inside_an_isolated_subagent(repo: Path, home: Path):
    # WT-9
    wt = await create_isolated_worktree(repo, home=home)
    ctx = context(wt.path, home, isolated_worktree=wt, session_worktree=SessionWorktrees(repo))
    with pytest.raises(ToolError) as caught:
        await EnterWorktreeTool().run({}, ctx)
    assert str(caught.value) == (
        "EnterWorktree is not available inside an isolated subagent: it already runs in its "
        f"own worktree {wt.path}"
    )
    with pytest.raises(ToolError, match=r"^ExitWorktree is not available inside an isolated"):
        await ExitWorktreeTool().run({"action": "keep"}, ctx)
    # No worktree beside the agent's (its registry record, .registry, may be written later).
    made = [p.name for p in (repo / ".wave" / "worktrees").iterdir() if p.name != ".registry"]
    assert made == [wt.path.name]


async def test_tools_without_a_session_service(tmp_path: Path, home: Path):
    ctx = context(tmp_path, home)
    with pytest.raises(ToolError, match="EnterWorktree is not available here"):
        await EnterWorktreeTool().run({}, ctx)
    with pytest.raises(ToolError, match="Parameter 'action' must be"):
        await ExitWorktreeTool().run({"action": "delete"}, ctx)


async def test_enter_tool_outside_git_fails_clearly(tmp_path: Path, home: Path):
    plain = tmp_path / "plain"
    plain.mkdir()
    ctx = context(plain, home, session_worktree=SessionWorktrees(plain, home))
    with pytest.raises(ToolError, match="is not inside a git repository"):
        await EnterWorktreeTool().run({}, ctx)
    assert list(plain.iterdir()) == []
    shutil.rmtree(plain)


async def test_a_worktree_another_live_session_uses_is_never_removed(repo: Path, home: Path):
    a = SessionWorktrees(repo, home, owner="session A")
    b = SessionWorktrees(repo, home, owner="session B")
    wt = await a.enter("shared")
    await b.enter("shared")  # the same named worktree, reused
    with pytest.raises(IsolationError, match="in use by session A"):
        await b.exit("remove", True)
    assert wt.path.is_dir() and b.current is not None  # refused: b is still in it
    await a.exit("keep", False)
    outcome = await b.exit("remove", True)
    assert not outcome.kept and not wt.path.exists()
