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
from wave_ls.runtime.core import ModelRequest, ModelResponse, ToolContext, Usage
from wave_ls.worktrees import registry_file
from wave_ls.worktrees.workspace import WorkspaceRequest, open_workspace

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
    assert workspace.client(client) is client  # begun: later requests go straight through
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
