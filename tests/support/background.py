"""Helpers for the end-to-end tests of background tasks over LSP.

A real ``wave-ls`` process (``tests.support.lsp``), the offline model
(``tests.support.fake_model``): starting background work, reading what the model received
(tool results, ``<task-notification>`` messages) and what the client received
(``wave/session/update``, ``$/progress``, ``wave/tasks/*``), and watching processes and
worktrees.
"""

from __future__ import annotations

import os
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from tests.support.fake_model import FakeModelServer, call, reply, route
from tests.support.git_repos import git
from tests.support.lsp import WaveClient
from tests.support.lsp import wave_client as support_client
from tests.support.waiting import until

NOTICE = "A background agent completed a task:"


TASK_ID = re.compile(r"task_id: (agent-[0-9a-f]{8})")


SESSION_ID = re.compile(r"session_id: (sub-[0-9a-f]{8})\n")


OUTPUT_FILE = re.compile(r"output_file: (\S+)")


@asynccontextmanager
async def wave_client(env: dict[str, str], **options: Any) -> AsyncIterator[WaveClient]:
    """``tests.support.lsp.wave_client`` that kills the server when the test fails (else the
    client waits forever for a server that was never told to exit)."""
    async with support_client(env, **options) as client:
        try:
            yield client
        except BaseException:
            if client._server is not None and client._server.returncode is None:
                client._server.kill()
            raise


def script(*routes: dict[str, Any]) -> dict[str, Any]:
    return {"routes": list(routes)}


def delegate_bg(
    prompt: str,
    description: str = "Slow survey",
    subagent_type: str = "general-purpose",
    **extra: Any,
) -> dict[str, Any]:
    args = {
        "description": description,
        "prompt": prompt,
        "subagent_type": subagent_type,
        "run_in_background": True,
        **extra,
    }
    return call("Agent", args)


async def new_session(client: WaveClient, cwd: Path, mode: str = "bypassPermissions") -> str:
    result = await client.request("wave/session/new", {"cwd": str(cwd), "permissionMode": mode})
    return str(result["sessionId"])


async def send(client: WaveClient, sid: str, text: str) -> dict[str, Any]:
    result: dict[str, Any] = await client.request(
        "wave/chat/send", {"sessionId": sid, "text": text}
    )
    return result


async def tasks_of(client: WaveClient, sid: str) -> dict[str, dict[str, Any]]:
    listed = await client.request("wave/tasks/list", {"sessionId": sid})
    return {task["taskId"]: task for task in listed["tasks"]}


async def wait_task(
    client: WaveClient, task_id: str, status: str, timeout: float = 20
) -> dict[str, Any]:
    """The ``task`` update that reports ``task_id`` with ``status``."""
    update = await client.wait_update(
        lambda u: (
            u.get("kind") == "task"
            and u["task"]["taskId"] == task_id
            and u["task"]["status"] == status
        ),
        timeout,
    )
    task: dict[str, Any] = update["task"]
    return task


async def wait_for(predicate: Any, timeout: float = 10, what: str = "condition") -> None:
    await until(predicate, timeout, what)


# A message whose answer proves that the session started no turn of its own: scripts of
# tests that use ``no_turn_of_its_own`` hold ``LAST_WORD_ROUTE``.
LAST_WORD = "anything more to say?"
LAST_WORD_ROUTE = route(LAST_WORD, reply("Nothing more."))


async def no_turn_of_its_own(client: WaveClient, fake: FakeModelServer, sid: str) -> None:
    """Prove, without waiting a time, that the idle session starts no further turn.

    A turn of its own is started only for a pending task notice; a message sent now would
    take such a notice into its own turn first (one turn at a time, notices read before
    each round). So the next model request is the message's, and the history gains the
    message and its answer only.
    """
    asked = len(main_bodies(fake))
    before = (await client.request("wave/session/messages", {"sessionId": sid}))["messages"]
    assert (await send(client, sid, LAST_WORD))["text"] == "Nothing more."
    after = (await client.request("wave/session/messages", {"sessionId": sid}))["messages"]
    assert len(main_bodies(fake)) == asked + 1, "the session asked the model on its own"
    added = [message["content"] for message in after[len(before) :]]
    assert added == [LAST_WORD, "Nothing more."], added


def main_bodies(fake: FakeModelServer) -> list[dict[str, Any]]:
    """The main agent's model requests (only the main agent has the ``Agent`` tool)."""
    return [
        body
        for body in fake.chat_bodies()
        if any(t["function"]["name"] == "Agent" for t in body.get("tools", []))
    ]


def sub_bodies(fake: FakeModelServer) -> list[dict[str, Any]]:
    return [
        body
        for body in fake.chat_bodies()
        if not any(t["function"]["name"] == "Agent" for t in body.get("tools", []))
    ]


def notices(body: dict[str, Any]) -> list[str]:
    """The ``<task-notification>`` messages in a request, in order."""
    return [
        m["content"]
        for m in body["messages"]
        if m["role"] == "user" and "<task-notification>" in (m.get("content") or "")
    ]


def tool_results(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def request_times(fake: FakeModelServer, text: str) -> list[float]:
    """When each request whose last message contains ``text`` arrived."""
    return [
        r["time"]
        for r in fake.requests()
        if isinstance(r.get("body"), dict)
        and text in (r["body"]["messages"][-1].get("content") or "")
    ]


def progress(client: WaveClient, token: str) -> list[Any]:
    """The ``$/progress`` values (begin, report..., end) the client got for ``token``."""
    return list(client.progress_reports.get(token, []))


def started_task(result_text: str) -> tuple[str, str, Path]:
    """The task id, subagent session id and output file of a background ``Agent`` result."""
    task = TASK_ID.search(result_text)
    session = SESSION_ID.search(result_text)
    output = OUTPUT_FILE.search(result_text)
    assert task and session and output, result_text
    return task.group(1), session.group(1), Path(output.group(1))


def new_updates(client: WaveClient) -> Any:
    """A predicate builder that ignores every update received so far."""
    seen = {id(u) for u in client.updates}

    def since(predicate: Any) -> Any:
        return lambda u: id(u) not in seen and predicate(u)

    return since


async def wait_turn_after_last_notice(client: WaveClient, sid: str) -> dict[str, Any]:
    """The ``turnEnded`` of the turn that read the latest notice."""
    updates = client.updates_for(sid)
    last = max(
        i
        for i, u in enumerate(updates)
        if u["kind"] == "userMessage" and (u["message"].get("meta") or {}).get("taskNotification")
    )
    ended = next((u for u in updates[last:] if u["kind"] == "turnEnded"), None)
    if ended is None:
        since = new_updates(client)
        ended = await client.wait_update(
            since(lambda u: u.get("sessionId") == sid and u["kind"] == "turnEnded")
        )
    return ended


def notice_messages(client: WaveClient, sid: str) -> list[dict[str, Any]]:
    """The notices the client saw added to the session (``userMessage`` updates)."""
    return [
        u["message"]
        for u in client.updates_for(sid, "userMessage")
        if (u["message"].get("meta") or {}).get("taskNotification")
    ]


ISOLATED_WORKER = """\
---
name: isolated-worker
description: Works in a worktree of its own.
isolation: worktree
---
You work in your own worktree.
"""


def write_agent(project: Path, name: str, text: str) -> None:
    folder = project / ".wave" / "agents"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.md").write_text(text, encoding="utf-8")


def sleeper(pid_file: Path, *before: dict[str, Any]) -> tuple[dict[str, Any], ...]:
    """Subagent steps: ``before`` (one tool call each), then a Bash that sleeps 30 s."""
    steps = [reply("", step) for step in before]
    command = f"echo $$ > {pid_file}; sleep 30"
    return (*steps, reply("Sleeping.", call("Bash", {"command": command})), reply("Woke up."))


async def pid_of(pid_file: Path) -> int:
    await wait_for(lambda: pid_file.exists() and pid_file.read_text().strip() != "", 15, "pid")
    return int(pid_file.read_text())


def group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    return True


async def wait_group_gone(pgid: int) -> None:
    await wait_for(lambda: not group_alive(pgid), 5, f"process group {pgid} to end")


def worktree_of(client: WaveClient, task_id: str) -> Path:
    """The worktree of an isolated background subagent, from its block's details."""
    for update in client.updates:
        worktree = (
            (update.get("details") or {}).get("worktree")
            if update.get("toolCallId") == task_id
            else None
        )
        if worktree:
            return Path(worktree["path"])
    raise AssertionError(f"no worktree reported for {task_id}")


def branches(repo: Path) -> list[str]:
    return git(repo, "branch", "--format=%(refname:short)").split()


def delegate(prompt: str, description: str, **extra: Any) -> dict[str, Any]:
    args = {"description": description, "prompt": prompt, "subagent_type": "general-purpose"}
    return call("Agent", {**args, **extra})
