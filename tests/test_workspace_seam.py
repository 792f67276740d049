"""The ``Workspace`` seam (issue 29): one object per delegation's workspace, in place or in
an isolated worktree, with one call per phase, and the typed report whose JSON is the
``Agent`` block's ``details.worktree`` / ``details.sandbox`` (docs/protocol.md), on real
repositories (SPEC section 6: WT-1, WT-5, WT-6, WT-11; FORK-2's in-place fallback)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from tests import test_isolation_lifecycle as lifecycle
from tests.support.git_repos import git
from tests.support.python_probe import run_python
from wave_ls.runtime.core import ToolContext
from wave_ls.subagents.record import DelegationRecord
from wave_ls.worktrees import IsolationError, WorktreeManager, create_isolated_worktree, layout
from wave_ls.worktrees.isolation import finish_isolated_worktree
from wave_ls.worktrees.report import SandboxReport, WorkspaceReport, WorktreeReport
from wave_ls.worktrees.workspace import WorkspaceRequest, open_workspace

# The real repositories of the lifecycle tests (a bare origin and its clone), and a home.
clean_git_env, home, origin, repo, template = (
    lifecycle.clean_git_env,
    lifecycle.home,
    lifecycle.origin,
    lifecycle.repo,
    lifecycle.template,
)


def context(cwd: Path, user_home: Path) -> ToolContext:
    return ToolContext(cwd=cwd, home=user_home, session_id="parent", write_root=cwd)


def request(user_home: Path, **kw: object) -> WorkspaceRequest:
    return WorkspaceRequest(session_id="sub-1", home=user_home, owner="test", **kw)  # type: ignore[arg-type]


async def test_in_place_is_the_callers_folder_and_nothing_to_wait_for(
    repo: Path, home: Path
) -> None:
    shown: list[WorkspaceReport | None] = []
    workspace = await open_workspace(request(home), context(repo, home), shown.append)
    assert workspace.context.cwd == repo and workspace.context.write_root == repo
    assert workspace.context.session_id == "sub-1"
    assert workspace.tools_ready is None and workspace.intro == ""
    assert await workspace.run(_value(7)) == 7
    assert await workspace.finish() is None  # nothing to report: it ran as its caller
    assert shown == [None]


async def test_isolated_phases_report_made_then_ended_and_remove_an_unchanged_worktree(
    repo: Path, home: Path
) -> None:
    shown: list[WorkspaceReport | None] = []
    ctx = context(repo, home)
    workspace = await open_workspace(request(home, isolated=True), ctx, shown.append)
    planned = workspace.context.cwd
    assert planned.parent == repo / ".wave" / "worktrees"  # WT-1: known before the checkout
    assert workspace.context.sandbox is None  # its own, once made
    assert shown[0] is not None and shown[0].worktree is not None and shown[0].sandbox is None
    assert workspace.tools_ready is not None
    made = await workspace.ready()
    assert made.cwd == planned and made.write_root == planned and made.sandbox is not None
    assert made.services.isolated_worktree is not None
    assert (planned / "README.md").is_file()
    assert shown[-1] is not None and shown[-1].sandbox == SandboxReport.of(made.sandbox)
    report = await workspace.finish()
    assert report is not None and report.worktree is not None and report.worktree.end is not None
    assert report.worktree.end.kept is False  # WT-5: nothing changed, removed
    assert report.summary is not None and report.summary.startswith("Worktree removed")
    assert not os.path.lexists(planned)
    assert shown[-1] == report
    wire = report.worktree.to_json()
    assert list(wire)[-4:] == ["kept", "changedFiles", "commits", "summary"]


async def test_a_changed_worktree_is_kept_and_said_so(repo: Path, home: Path) -> None:
    workspace = await open_workspace(request(home, isolated=True), context(repo, home))
    made = await workspace.ready()
    (made.cwd / "new.py").write_text("y = 2\n")
    report = await workspace.finish()
    assert report is not None and report.worktree is not None and report.worktree.end is not None
    assert report.worktree.end.kept and report.worktree.end.changed_files == 1  # WT-6
    assert (made.cwd / "new.py").is_file()


async def test_an_unchanged_worktree_is_removed_after_the_report_and_a_changed_one_never(
    repo: Path, home: Path
) -> None:
    removals: list[asyncio.Future[None]] = []
    workspace = await open_workspace(request(home, isolated=True), context(repo, home))
    made = await workspace.ready()
    report = await workspace.finish(removals.append)
    assert report is not None and report.summary is not None
    assert report.summary.startswith("Worktree removed: no changes")
    assert len(removals) == 1  # the result need not wait for git's remove
    await removals[0]
    assert not os.path.lexists(made.cwd)
    assert f"worktree-{made.cwd.name}" not in git(repo, "branch", "--list")

    changed = await open_workspace(request(home, isolated=True), context(repo, home))
    kept = await changed.ready()
    (kept.cwd / "new.py").write_text("y = 2\n")
    report = await changed.finish(removals.append)
    assert report is not None and report.worktree is not None and report.worktree.end is not None
    assert report.worktree.end.kept and len(removals) == 2  # its end, held before deciding
    await removals[1]
    assert (kept.cwd / "new.py").is_file()


async def test_no_worktree_fails_or_falls_back_to_the_callers_folder(
    tmp_path: Path, home: Path
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(IsolationError, match="not inside a git repository"):  # WT-11
        await open_workspace(request(home, isolated=True), context(plain, home))
    shown: list[WorkspaceReport | None] = []
    ask = request(home, isolated=True, in_place_fallback=True)
    workspace = await open_workspace(ask, context(plain, home), shown.append)
    assert workspace.context.cwd == plain and workspace.tools_ready is None
    assert shown[0] is not None and shown[0].worktree is not None and shown[0].worktree.in_place
    assert shown[0].summary is not None and "ran in place" in shown[0].summary
    assert shown[0].worktree.to_json() == {
        "inPlace": True,
        "path": str(plain),
        "summary": shown[0].summary,
    }
    assert await workspace.finish() == shown[0]


async def test_the_reports_json_is_the_blocks_details_as_before(repo: Path, home: Path) -> None:
    manager = WorktreeManager()
    wt = await create_isolated_worktree(repo, home=home, manager=manager)
    before = wt.to_json()
    ended = await finish_isolated_worktree(wt, manager=manager)
    assert WorktreeReport.made(wt).to_json() == before
    summary = ended.summary + "\nnote"
    as_before = {**wt.to_json(), **ended.to_json(), "summary": summary}
    report = WorktreeReport.ended(wt, ended, summary)
    assert report.to_json() == as_before and list(report.to_json()) == list(as_before)
    sandbox = {"mechanism": "none", "writable": ["/a"], "note": "unsandboxed"}
    record = DelegationRecord("coder", "d", "sub-1")
    record.show(WorkspaceReport(report, SandboxReport.from_json(sandbox)))
    details = record.to_json()
    assert details["worktree"] == as_before and details["sandbox"] == sandbox
    again = DelegationRecord.from_json(details)
    assert again.to_json() == details and again.worktree_summary == summary


async def test_reading_back_odd_details_never_fails() -> None:
    record = DelegationRecord.from_json({"worktree": "x", "sandbox": [1]})
    assert record.workspace == WorkspaceReport() and record.worktree_summary is None
    assert DelegationRecord.from_json({}).workspace is None
    odd = {"path": 3, "kept": True, "changedFiles": "2", "future": 1}
    report = WorktreeReport.from_json(odd)
    assert report is not None and report.end is not None and report.end.changed_files is None
    assert report.to_json()["future"] == 1


async def _value(value: int) -> int:
    return value


def test_origin_default_branch_is_read_from_the_ref_files_as_dulwich_reads_it(
    repo: Path,
) -> None:
    common = repo / ".git"
    dulwich = WorktreeManager(git_available=False).dulwich
    assert (
        layout.origin_default_branch(common)
        == (True, "main")
        == (True, dulwich.default_branch(repo))
    )
    git(repo, "pack-refs", "--all")
    (common / "refs" / "remotes" / "origin" / "HEAD").unlink()
    assert layout.origin_default_branch(common) == (True, "main")  # origin/main, packed
    assert dulwich.default_branch(repo) == "main"
    git(repo, "update-ref", "-d", "refs/remotes/origin/main")
    assert (
        layout.origin_default_branch(common) == (True, None) == (True, dulwich.default_branch(repo))
    )


def test_what_isolation_imports_loads_once_a_parent_request_is_out() -> None:
    # Issue 30: the first isolated delegation of a `wave-ls run` imported ~15 ms of modules
    # on its launch's path; they now load in a thread while the parent's model reads.
    probe = (
        "import asyncio, sys\n"
        "from pathlib import Path\n"
        "from wave_ls.subagents.runner import SubagentHost\n"
        "from wave_ls.worktrees.workspace import ISOLATION_MODULES\n"
        "loaded = lambda: all(m in sys.modules for m in ISOLATION_MODULES)\n"
        "host = SubagentHost(None, None, None, None, Path('.'), Path('.'))\n"
        "async def main():\n"
        "    before = loaded()\n"
        "    host.parent_request_sent(); host.parent_request_sent()\n"
        "    at_once = loaded()  # not in the request's own moment\n"
        "    for _ in range(300):\n"
        "        if loaded(): break\n"
        "        await asyncio.sleep(0.05)\n"
        "    print(before, at_once, loaded())\n"
        "asyncio.run(main())\n"
    )
    done = run_python(probe)
    assert (done.returncode, done.stdout.strip()) == (0, "False False True"), done.stderr
