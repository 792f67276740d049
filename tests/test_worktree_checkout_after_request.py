"""An isolated delegation's checkout begins once its first model request is on its way
(issue 30): git's processes and the thread's Python no longer compete with that request.
On real repositories (the lifecycle tests'): the run's client sees no worktree yet when it
sends, the worktree is made and ended by the rule after it, a run that ends before any
request still ends it, and one abandoned before it made nothing."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path

from tests import test_isolation_lifecycle as lifecycle
from tests.support.git_repos import git
from wave_ls.runtime.core import ModelClient, ModelRequest, ModelResponse, ToolContext, Usage
from wave_ls.worktrees import registry_file
from wave_ls.worktrees.workspace import Workspace, WorkspaceRequest, open_workspace

clean_git_env, home, origin, repo, template = (
    lifecycle.clean_git_env,
    lifecycle.home,
    lifecycle.origin,
    lifecycle.repo,
    lifecycle.template,
)


class SendingClient:
    """A model client that notes, as it sends, whether the checkout has begun
    (``begun``), then waits for its answer (``answer``) as a real endpoint would."""

    base_url = "http://model.example/v1"

    def __init__(self, begun: Callable[[], bool]) -> None:
        self.begun = begun
        self.begun_at_send: list[bool] = []
        self.begun_while_waiting: list[bool] = []
        self.sent = asyncio.Event()
        self.answer: asyncio.Future[None] | None = None

    async def complete(
        self, request: ModelRequest, on_delta: Callable[[str], None] | None = None
    ) -> ModelResponse:
        self.begun_at_send.append(self.begun())
        self.answer = asyncio.get_running_loop().create_future()
        self.sent.set()
        await self.answer
        self.begun_while_waiting.append(self.begun())
        return ModelResponse("done", [], Usage(), "stop")


def context(cwd: Path, user_home: Path) -> ToolContext:
    return ToolContext(cwd=cwd, home=user_home, session_id="parent", write_root=cwd)


def isolated(user_home: Path) -> WorkspaceRequest:
    return WorkspaceRequest(session_id="sub-1", home=user_home, isolated=True, owner="test")


def branches(repo: Path) -> str:
    return git(repo, "branch", "--list")


async def test_the_checkout_begins_after_the_first_request_is_sent(repo: Path, home: Path) -> None:
    workspace = await open_workspace(isolated(home), context(repo, home))
    planned = workspace.context.cwd
    assert not planned.exists()  # planned: nothing checked out before the request
    assert not workspace.checkout_begun
    client = SendingClient(lambda: workspace.checkout_begun)
    sending = workspace.client(client)
    assert getattr(sending, "base_url", None) == client.base_url  # what the loop reads of it
    asking = asyncio.ensure_future(
        workspace.run(sending.complete(ModelRequest("m", [{"role": "user", "content": "hi"}])))
    )
    await client.sent.wait()
    assert client.begun_at_send == [False]
    assert workspace.checkout_begun  # right after the request went out
    made = await workspace.ready()  # the first tool call's wait
    assert made.cwd == planned and (planned / "README.md").is_file()
    assert client.answer is not None
    client.answer.set_result(None)
    assert (await asyncio.wait_for(asyncio.shield(asking), 30)).content == "done"
    assert client.begun_while_waiting == [True]
    report = await workspace.finish()
    assert report is not None and report.summary is not None
    assert report.summary.startswith("Worktree removed")  # WT-5, as before
    assert not os.path.lexists(planned)
    assert f"worktree-{planned.name}" not in branches(repo)


async def test_a_run_that_ends_before_any_request_still_ends_its_worktree(
    repo: Path, home: Path
) -> None:
    workspace = await open_workspace(isolated(home), context(repo, home))
    planned = workspace.context.cwd
    report = await workspace.finish()
    assert report is not None and report.summary is not None
    assert report.summary.startswith("Worktree removed")
    assert not os.path.lexists(planned)
    assert f"worktree-{planned.name}" not in branches(repo)


async def test_a_run_stopped_before_its_first_request_makes_no_worktree(
    repo: Path, home: Path
) -> None:
    workspace = await open_workspace(isolated(home), context(repo, home))
    planned = workspace.context.cwd
    workspace.abandon()
    workspace.abandon()  # once, however often
    assert await workspace.finish() is not None
    # Nothing begun, nothing made: no folder, no branch, no record.
    assert not os.path.lexists(planned)
    assert f"worktree-{planned.name}" not in branches(repo)
    assert not registry_file.record_path(repo, planned.name).exists()


async def _answered(workspace: Workspace, client: SendingClient, sending: ModelClient) -> None:
    """One request through the run's client, answered."""
    asking = asyncio.ensure_future(sending.complete(ModelRequest("m", [])))
    await client.sent.wait()
    client.sent.clear()
    assert client.answer is not None
    client.answer.set_result(None)
    await asyncio.wait_for(asking, 30)


async def test_the_status_taken_while_the_last_answer_came_ends_an_unchanged_worktree(
    repo: Path, home: Path
) -> None:
    workspace = await open_workspace(isolated(home), context(repo, home))
    client = SendingClient(lambda: workspace.checkout_begun)
    sending = workspace.client(client)
    await _answered(workspace, client, sending)  # begins the checkout
    made = await workspace.ready()
    await _answered(workspace, client, sending)  # the last: its status taken meanwhile
    report = await workspace.finish(settled=True)
    assert report is not None and report.summary is not None
    assert report.summary.startswith("Worktree removed: no changes")
    assert not os.path.lexists(made.cwd)
    assert f"worktree-{made.cwd.name}" not in branches(repo)


async def test_a_change_after_that_status_is_never_deleted(repo: Path, home: Path) -> None:
    # A tool call after the status (another request follows it): the status is taken again.
    workspace = await open_workspace(isolated(home), context(repo, home))
    client = SendingClient(lambda: workspace.checkout_begun)
    sending = workspace.client(client)
    await _answered(workspace, client, sending)
    made = await workspace.ready()
    await _answered(workspace, client, sending)
    (made.cwd / "new.py").write_text("y = 2\n")  # a tool call's change
    await _answered(workspace, client, sending)
    report = await workspace.finish(settled=True)
    assert report is not None and report.worktree is not None and report.worktree.end is not None
    assert report.worktree.end.kept and report.worktree.end.changed_files == 1  # WT-6
    assert (made.cwd / "new.py").is_file()
    # Not settled (a Stop hook ran, or the run failed): taken at the end, whatever came before.
    other = await open_workspace(isolated(home), context(repo, home))
    client = SendingClient(lambda: other.checkout_begun)
    sending = other.client(client)
    await _answered(other, client, sending)
    made = await other.ready()
    await _answered(other, client, sending)
    (made.cwd / "hook.py").write_text("by a Stop hook\n")
    report = await other.finish()
    assert report is not None and report.worktree is not None and report.worktree.end is not None
    assert report.worktree.end.kept and (made.cwd / "hook.py").is_file()


async def test_a_change_nobody_announced_still_stops_the_removal(repo: Path, home: Path) -> None:
    # Something outside the run writes after the status was taken: the result may say
    # removed, but git's own remove refuses a worktree with files in it, and it stays.
    removals: list[asyncio.Future[None]] = []
    workspace = await open_workspace(isolated(home), context(repo, home))
    client = SendingClient(lambda: workspace.checkout_begun)
    sending = workspace.client(client)
    await _answered(workspace, client, sending)
    made = await workspace.ready()
    await _answered(workspace, client, sending)
    (made.cwd / "late.py").write_text("z = 3\n")
    await workspace.finish(removals.append, settled=True)
    for removal in removals:
        await removal
    assert (made.cwd / "late.py").read_text() == "z = 3\n"
