"""The conversation loop on its own: ``Conversation`` driven by a scripted model client.

Everything here was tested only end to end (over LSP or ACP, through the fake model over
HTTP). The client below implements the ``ModelClient`` protocol and plays a script of
answers; the tools implement ``Tool``; the events are what the loop emits on its sink.
Nothing of the loop is replaced: each test runs real turns and reads their outcome.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from wave_ls.runtime.core import (
    AssistantContentDelta,
    AssistantMessageAdded,
    Effect,
    Event,
    Message,
    MessagesChanged,
    ModelError,
    ModelRequest,
    ModelResponse,
    PermissionDecision,
    PermissionRequest,
    ToolBlockUpdated,
    ToolCall,
    ToolContext,
    ToolResult,
    TurnEnded,
    Usage,
    UsageUpdated,
    UserMessageAdded,
)
from wave_ls.runtime.cut_off import CONTINUE_TEXT
from wave_ls.runtime.loop import CANCELLED_TOOL_RESULT, AgentConfig, Conversation
from wave_ls.runtime.memory import memory_reminder_for

# ----------------------------------------------------------------------------- the script

Step = ModelResponse | ModelError | Callable[[ModelRequest], Awaitable[ModelResponse]]


def answer(text: str, *calls: ToolCall, finish: str = "stop") -> ModelResponse:
    return ModelResponse(text, list(calls), Usage(10, 5, 15), finish if not calls else "tool_calls")


def tool_call(name: str, call_id: str, **arguments: Any) -> ToolCall:
    return ToolCall(call_id, name, json.dumps(arguments))


class ScriptedClient:
    """A ``ModelClient`` that answers each round with the next step of its script (the last
    step again when the script runs out) and keeps every request it was sent."""

    def __init__(self, *steps: Step) -> None:
        self.steps = list(steps)
        self.requests: list[ModelRequest] = []

    async def complete(
        self, request: ModelRequest, on_delta: Callable[[str], None] | None = None
    ) -> ModelResponse:
        self.requests.append(request)
        step = self.steps.pop(0) if len(self.steps) > 1 else self.steps[0]
        if isinstance(step, ModelError):
            raise step
        response = step if isinstance(step, ModelResponse) else await step(request)
        if on_delta is not None and response.content:
            for word in response.content.split(" "):  # a stream, one piece at a time
                on_delta(word)
        return response


class Recorder:
    """An ``EventSink`` that keeps every event and wakes whoever waits for one."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self._changed = asyncio.Event()

    def emit(self, event: Event) -> None:
        self.events.append(event)
        self._changed.set()

    async def wait_for(self, predicate: Callable[[Event], bool], timeout: float = 5) -> Event:
        async def seen() -> Event:
            while True:
                found = next((e for e in self.events if predicate(e)), None)
                if found is not None:
                    return found
                self._changed.clear()
                await self._changed.wait()

        return await asyncio.wait_for(seen(), timeout)

    def blocks(self, call_id: str) -> list[str]:
        return [
            e.status
            for e in self.events
            if isinstance(e, ToolBlockUpdated) and e.tool_call_id == call_id
        ]


@dataclass
class ScriptedTool:
    """A ``Tool`` whose run is the test's coroutine (by default: echo the arguments)."""

    name: str
    effect: Effect = "read"
    concurrency_safe: bool = True
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object"})
    body: Callable[[dict[str, Any], ToolContext], Awaitable[ToolResult]] | None = None
    calls: list[dict[str, Any]] = field(default_factory=list)

    @property
    def description(self) -> str:
        return f"The {self.name} tool of the test."

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        self.calls.append(args)
        if self.body is not None:
            return await self.body(args, ctx)
        return ToolResult(f"{self.name} got {json.dumps(args, sort_keys=True)}", short_result="ok")


class Asker:
    """A person at the permission prompt: answers ``allowed`` and keeps each question."""

    def __init__(self, allowed: bool) -> None:
        self.allowed = allowed
        self.requests: list[PermissionRequest] = []

    async def ask(self, request: PermissionRequest) -> PermissionDecision:
        self.requests.append(request)
        return PermissionDecision(self.allowed)


def conversation(
    client: ScriptedClient,
    tmp_path: Path,
    *,
    tools: Sequence[ScriptedTool] = (),
    sink: Recorder | None = None,
    asker: Asker | None = None,
    **config: Any,
) -> Conversation:
    agent = AgentConfig(system_prompt="You are a test.", model="m1", tools=list(tools), **config)
    context = ToolContext(cwd=tmp_path, home=tmp_path)
    return Conversation(agent, client, context, sink=sink, asker=asker)


def user(text: str) -> Message:
    return Message("user", text)


def roles(messages: Sequence[dict[str, Any]]) -> list[str]:
    return [m["role"] for m in messages]


# ----------------------------------------------------------------------------- answers


async def test_an_answer_without_tool_calls_ends_the_turn(tmp_path: Path) -> None:
    sink = Recorder()
    client = ScriptedClient(answer("Hello there."))
    chat = conversation(client, tmp_path, sink=sink)
    result = await chat.run_turn([user("hi")])

    assert (result.status, result.text, result.error) == ("completed", "Hello there.", None)
    assert (result.assistant_messages, result.tool_calls, result.limit_reached) == (1, 0, False)
    assert result.usage == Usage(10, 5, 15) == chat.usage
    assert [(m.role, m.content) for m in chat.messages] == [
        ("user", "hi"),
        ("assistant", "Hello there."),
    ]
    assert chat.messages[1].meta["usage"] == {
        "prompt_tokens": 10,
        "completion_tokens": 5,
        "total_tokens": 15,
    }
    [request] = client.requests
    assert request.model == "m1"
    assert request.messages == [
        {"role": "system", "content": "You are a test."},
        {"role": "user", "content": "hi"},
    ]
    kinds = [type(e) for e in sink.events]
    assert kinds[:2] == [UserMessageAdded, MessagesChanged]
    assert kinds[-4:] == [AssistantMessageAdded, UsageUpdated, MessagesChanged, TurnEnded]
    deltas = [e.delta for e in sink.events if isinstance(e, AssistantContentDelta)]
    assert deltas == ["Hello", "there."]
    assert sink.events[-1] == TurnEnded("completed", "Hello there.", None)


async def test_memory_follows_the_system_prompt_of_every_request_and_stays_out_of_history(
    tmp_path: Path,
) -> None:
    # The memory reminder is a user-role message after the system prompt, in each round of
    # a turn, read once per turn; the history (what transcripts keep) never holds it.
    project, home = tmp_path / "project", tmp_path / "home"
    project.mkdir()
    home.mkdir()
    (project / "AGENTS.md").write_text("Always use pnpm.", encoding="utf-8")
    reads: list[str | None] = []

    def reminder() -> str | None:
        reads.append(text := memory_reminder_for(project, home))
        return text

    client = ScriptedClient(answer("", tool_call("Look", "c1")), answer("Done."))
    chat = conversation(client, tmp_path, tools=[ScriptedTool("Look")], context_reminder=reminder)
    await chat.run_turn([user("go")])

    assert len(client.requests) == 2 and len(reads) == 1
    for request in client.requests:
        assert request.messages[0]["role"] == "system"
        assert request.messages[1]["role"] == "user"
        assert "Always use pnpm." in request.messages[1]["content"]
        assert request.messages[1]["content"].startswith("<system-reminder>")
    assert not any("pnpm" in m.content for m in chat.messages)


# ----------------------------------------------------------------------------- tools


async def test_tool_results_reach_the_next_request(tmp_path: Path) -> None:
    sink = Recorder()
    look = ScriptedTool("Look")
    client = ScriptedClient(
        answer("Let me look.", tool_call("Look", "c1", path="src")), answer("Found it.")
    )
    chat = conversation(client, tmp_path, tools=[look], sink=sink)
    result = await chat.run_turn([user("find it")])

    assert (result.status, result.text) == ("completed", "Found it.")
    assert (result.assistant_messages, result.tool_calls) == (2, 1)
    assert look.calls == [{"path": "src"}]
    second = client.requests[1].messages
    assert roles(second) == ["system", "user", "assistant", "tool"]
    assert second[2]["tool_calls"][0]["id"] == "c1"
    assert second[3] == {
        "role": "tool",
        "content": 'Look got {"path": "src"}',
        "tool_call_id": "c1",
    }
    assert client.requests[0].tools[0]["function"]["name"] == "Look"
    assert sink.blocks("c1") == ["pending", "running", "completed"]
    assert chat.messages[2].meta == {"shortResult": "ok"}


async def test_a_missing_tool_or_bad_arguments_are_errors_the_model_reads(tmp_path: Path) -> None:
    sink = Recorder()
    broken = ToolCall("c2", "Look", "[1, 2]")
    client = ScriptedClient(answer("", tool_call("Nope", "c1"), broken), answer("Sorry."))
    chat = conversation(client, tmp_path, tools=[ScriptedTool("Look")], sink=sink)
    result = await chat.run_turn([user("go")])

    assert result.status == "completed"
    results = {m.tool_call_id: m for m in chat.messages if m.role == "tool"}
    assert results["c1"].content == "Tool 'Nope' not found"
    assert results["c2"].content.startswith("This call was not run: its arguments are not a")
    # The history holds {} in their place (an endpoint refuses a history with bad JSON).
    assert chat.messages[1].tool_calls[1].arguments == "{}"
    assert chat.messages[1].meta["brokenArguments"] == {"c2": "[1, 2]"}
    assert all(m.meta.get("isError") for m in results.values())
    assert sink.blocks("c1")[-1] == sink.blocks("c2")[-1] == "failed"


async def test_a_crashing_tool_fails_its_call_not_the_turn(tmp_path: Path) -> None:
    async def crash(_args: dict[str, Any], _ctx: ToolContext) -> ToolResult:
        raise RuntimeError("disk on fire")

    client = ScriptedClient(answer("", tool_call("Boom", "c1")), answer("It failed."))
    chat = conversation(client, tmp_path, tools=[ScriptedTool("Boom", body=crash)])
    result = await chat.run_turn([user("go")])

    assert (result.status, result.text) == ("completed", "It failed.")
    [tool_message] = [m for m in chat.messages if m.role == "tool"]
    assert tool_message.content == "Boom failed: disk on fire"


async def test_concurrency_safe_calls_run_together_and_the_others_one_at_a_time(
    tmp_path: Path,
) -> None:
    # Two safe calls each wait until both have started: they can only finish together.
    started: list[str] = []
    both = asyncio.Event()
    order: list[str] = []

    async def meet(args: dict[str, Any], _ctx: ToolContext) -> ToolResult:
        started.append(args["n"])
        if len(started) == 2:
            both.set()
        await asyncio.wait_for(both.wait(), 5)
        order.append(args["n"])
        return ToolResult("met")

    async def alone(args: dict[str, Any], _ctx: ToolContext) -> ToolResult:
        order.append(args["n"])
        return ToolResult("alone")

    safe = ScriptedTool("Meet", body=meet)
    unsafe = ScriptedTool("Alone", concurrency_safe=False, body=alone)
    calls = [
        tool_call("Meet", "c1", n="a"),
        tool_call("Meet", "c2", n="b"),
        tool_call("Alone", "c3", n="c"),
        tool_call("Alone", "c4", n="d"),
    ]
    client = ScriptedClient(answer("", *calls), answer("All done."))
    chat = conversation(client, tmp_path, tools=[safe, unsafe])
    result = await chat.run_turn([user("go")])

    assert result.status == "completed"
    assert sorted(order[:2]) == ["a", "b"] and order[2:] == ["c", "d"]
    answered = [m.tool_call_id for m in chat.messages if m.role == "tool"]
    assert answered == ["c1", "c2", "c3", "c4"]  # in the order of the calls


# ----------------------------------------------------------------------------- permissions


async def test_an_edit_in_default_mode_asks_and_a_denial_reaches_the_model(
    tmp_path: Path,
) -> None:
    asker = Asker(allowed=False)
    edit = ScriptedTool("Change", effect="edit")
    client = ScriptedClient(
        answer("", tool_call("Change", "c1", file_path="a.txt")), answer("Not allowed, then.")
    )
    chat = conversation(client, tmp_path, tools=[edit], asker=asker)
    result = await chat.run_turn([user("change a.txt")])

    assert result.status == "completed"
    [request] = asker.requests
    assert (request.tool_name, request.effect, request.tool_call_id) == ("Change", "edit", "c1")
    assert request.cwd == tmp_path
    assert edit.calls == []
    [denied] = [m for m in chat.messages if m.role == "tool"]
    assert denied.content.startswith("The user denied permission to ")
    assert denied.meta["isError"] is True


async def test_nobody_to_ask_is_a_denial_and_bypass_asks_nobody(tmp_path: Path) -> None:
    edit = ScriptedTool("Change", effect="edit")
    script = (answer("", tool_call("Change", "c1", file_path="a.txt")), answer("Ok."))
    chat = conversation(ScriptedClient(*script), tmp_path, tools=[edit])
    await chat.run_turn([user("change it")])
    assert edit.calls == []
    assert "denied" in next(m.content for m in chat.messages if m.role == "tool")

    asker = Asker(allowed=False)
    chat = conversation(
        ScriptedClient(*script),
        tmp_path,
        tools=[edit],
        asker=asker,
        permission_mode="bypassPermissions",
    )
    await chat.run_turn([user("change it")])
    assert asker.requests == [] and edit.calls == [{"file_path": "a.txt"}]


# ----------------------------------------------------------------------------- ends of a turn


async def test_the_turn_limit_fails_the_turn_and_says_so(tmp_path: Path) -> None:
    client = ScriptedClient(answer("again", tool_call("Look", "c1")))
    chat = conversation(client, tmp_path, tools=[ScriptedTool("Look")], max_rounds=3)
    result = await chat.run_turn([user("loop")])

    assert (result.status, result.limit_reached) == ("failed", True)
    assert result.error is not None and "3 model rounds" in result.error
    assert len(client.requests) == 3
    # Every call was answered: the history can be sent again.
    calls = {c.id for m in chat.messages for c in m.tool_calls}
    assert calls <= {m.tool_call_id for m in chat.messages if m.role == "tool"}


async def test_a_model_error_fails_the_turn_and_the_next_turn_runs(tmp_path: Path) -> None:
    sink = Recorder()
    client = ScriptedClient(ModelError("The endpoint said no."), answer("Back again."))
    chat = conversation(client, tmp_path, sink=sink)
    failed = await chat.run_turn([user("one")])
    assert (failed.status, failed.error) == ("failed", "The endpoint said no.")
    assert TurnEnded("failed", "", "The endpoint said no.") in sink.events

    again = await chat.run_turn([user("two")])
    assert (again.status, again.text) == ("completed", "Back again.")
    assert roles(client.requests[1].messages) == ["system", "user", "user"]


async def test_an_answer_cut_off_is_continued_once_then_the_turn_fails(tmp_path: Path) -> None:
    client = ScriptedClient(answer("part one", finish="length"))
    chat = conversation(client, tmp_path, params={"max_tokens": 50})
    result = await chat.run_turn([user("write a lot")])

    assert len(client.requests) == 2
    assert client.requests[1].messages[-1] == {"role": "user", "content": CONTINUE_TEXT}
    assert result.status == "failed" and result.text == "part one"
    assert result.error is not None and "(max_tokens 50)" in result.error
    assert [m.meta.get("cutOff") for m in chat.messages if m.role == "assistant"] == [True, True]


async def test_cancelling_mid_stream_keeps_what_was_streamed(tmp_path: Path) -> None:
    sink = Recorder()

    # A round that streams, then hangs until it is cancelled.
    class HangingClient(ScriptedClient):
        async def complete(
            self, request: ModelRequest, on_delta: Callable[[str], None] | None = None
        ) -> ModelResponse:
            self.requests.append(request)
            assert on_delta is not None
            on_delta("Half an answer")
            await asyncio.Event().wait()
            raise AssertionError("not reached")

    chat = conversation(HangingClient(answer("unused")), tmp_path, sink=sink)
    turn = asyncio.create_task(chat.run_turn([user("talk")]))
    await sink.wait_for(lambda e: isinstance(e, AssistantContentDelta))
    turn.cancel()
    with pytest.raises(asyncio.CancelledError):
        await turn

    last = chat.messages[-1]
    assert (last.role, last.content, last.meta) == (
        "assistant",
        "Half an answer",
        {"interrupted": True},
    )
    assert sink.events[-1] == TurnEnded("cancelled", "", "cancelled")


async def test_cancelling_a_running_tool_answers_its_call(tmp_path: Path) -> None:
    sink = Recorder()
    running = asyncio.Event()

    async def hang(_args: dict[str, Any], _ctx: ToolContext) -> ToolResult:
        running.set()
        await asyncio.Event().wait()
        raise AssertionError("not reached")

    client = ScriptedClient(answer("", tool_call("Hang", "c1")))
    chat = conversation(client, tmp_path, tools=[ScriptedTool("Hang", body=hang)], sink=sink)
    turn = asyncio.create_task(chat.run_turn([user("wait")]))
    await asyncio.wait_for(running.wait(), 5)
    turn.cancel()
    with pytest.raises(asyncio.CancelledError):
        await turn

    [answered] = [m for m in chat.messages if m.role == "tool"]
    assert (answered.tool_call_id, answered.content) == ("c1", CANCELLED_TOOL_RESULT)
    assert sink.blocks("c1")[-1] == "failed"


# ----------------------------------------------------------------------------- between rounds


async def test_a_change_of_model_during_a_turn_applies_from_the_next_round(
    tmp_path: Path,
) -> None:
    async def switch(_args: dict[str, Any], _ctx: ToolContext) -> ToolResult:
        chat.reconfigure(model="m2", permission_mode="plan")
        assert chat.config.model == "m1"  # this round is still the old model's
        assert chat.upcoming("model") == "m2"
        return ToolResult("switched")

    client = ScriptedClient(answer("", tool_call("Switch", "c1")), answer("On m2."))
    chat = conversation(client, tmp_path, tools=[ScriptedTool("Switch", body=switch)])
    await chat.run_turn([user("switch")])

    assert [r.model for r in client.requests] == ["m1", "m2"]
    assert (chat.config.model, chat.config.permission_mode) == ("m2", "plan")


async def test_inbox_messages_join_before_each_round(tmp_path: Path) -> None:
    waiting = [[Message("user", "a task ended", meta={"isMeta": True})], [], []]
    client = ScriptedClient(answer("", tool_call("Look", "c1")), answer("Seen."))
    chat = conversation(
        client, tmp_path, tools=[ScriptedTool("Look")], inbox=lambda: waiting.pop(0)
    )
    await chat.run_turn([user("go")])

    first, second = (r.messages for r in client.requests)
    assert [m["content"] for m in first[1:]] == ["go", "a task ended"]
    assert roles(second) == ["system", "user", "user", "assistant", "tool"]
