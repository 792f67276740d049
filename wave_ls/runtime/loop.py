"""The conversation loop: model -> tool calls -> results -> model, until an answer.

One ``Conversation`` is one agent's context (the main agent's, or a subagent's). It knows
nothing of LSP, subagents or transcripts: it announces every change on its ``EventSink`` and
hands every appended message to ``on_append`` (how transcripts are written).
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import os
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Protocol, runtime_checkable

from wave_ls.runtime.core import (
    AssistantContentDelta,
    AssistantMessageAdded,
    EventSink,
    Message,
    MessagesChanged,
    ModelClient,
    ModelError,
    ModelRequest,
    NullSink,
    PermissionAsker,
    PermissionDecision,
    PermissionMode,
    PermissionRequest,
    PreviewsChanges,
    Tool,
    ToolBlockUpdated,
    ToolCall,
    ToolContext,
    ToolError,
    ToolResult,
    TurnEnded,
    Usage,
    UsageUpdated,
    UserMessageAdded,
    parsed_arguments,
    tool_schema,
)
from wave_ls.runtime.permissions import decide, permission_summary
from wave_ls.runtime.sandbox import cuts_network, without_network

log = logging.getLogger(__name__)

DEFAULT_MAX_ROUNDS = 100
CANCELLED_TOOL_RESULT = "Interrupted: the user cancelled this tool call."


class ToolHooks(Protocol):
    """Commands run around each tool call of one agent (a subagent's own ``hooks``)."""

    async def before_tool(self, name: str, args: dict[str, Any], ctx: ToolContext) -> str | None:
        """Why the call is blocked (the tool's error for the model), or None to go on."""
        ...

    async def after_tool(
        self, name: str, args: dict[str, Any], result: ToolResult, ctx: ToolContext
    ) -> ToolResult:
        """The result the model reads (the tool's, with any feedback added)."""
        ...


@runtime_checkable
class ShowsArguments(Protocol):
    """A tool whose block shows a call's arguments as the call will run (the ``Agent`` tool
    for an agent that always runs in the background); the model's history keeps its own."""

    def shown_arguments(self, args: dict[str, Any]) -> dict[str, Any] | None: ...


@dataclass
class AgentConfig:
    """What one agent runs with: its prompt, model, tools and permission rules."""

    system_prompt: str
    model: str
    tools: Sequence[Tool]
    permission_mode: PermissionMode = "default"
    params: dict[str, Any] = field(default_factory=dict)
    # Reminder text placed first in the messages (memory); None when memory is off.
    context_reminder: Callable[[], str | None] = lambda: None
    # Plan mode's read-only Bash rules even outside plan mode (Explore, Plan).
    read_only_bash: bool = False
    # Messages waiting for the agent (background task notices), taken before each round.
    inbox: Callable[[], list[Message]] = lambda: []
    # The user turned the session's sandbox on: Bash confined by it needs no approval in
    # default and acceptEdits mode (plan mode and read_only_bash still apply).
    sandbox_auto_allow: bool = False
    # The most model requests of one turn (a subagent's ``maxTurns``).
    max_rounds: int = DEFAULT_MAX_ROUNDS
    tool_hooks: ToolHooks | None = None
    # Folders the agent's file tools may change without asking and outside its write root
    # (a subagent's memory folder); plan mode still refuses.
    free_write_dirs: tuple[Path, ...] = ()


@dataclass
class TurnResult:
    status: Literal["completed", "cancelled", "failed"]
    text: str
    usage: Usage
    error: str | None = None
    # Number of assistant messages this turn produced (subagent outcome rules use it).
    assistant_messages: int = 0
    tool_calls: int = 0
    limit_reached: bool = False  # stopped by ``max_rounds``


class DenyAll:
    """The safe answer when nobody can be asked."""

    def __init__(self, reason: str = "no one is available to approve it") -> None:
        self.reason = reason

    async def ask(self, request: PermissionRequest) -> PermissionDecision:
        return PermissionDecision(False, f"Permission to {request.summary} denied: {self.reason}.")


class Conversation:
    """One agent's messages and the loop that extends them."""

    def __init__(
        self,
        config: AgentConfig,
        client: ModelClient,
        context: ToolContext,
        *,
        sink: EventSink | None = None,
        asker: PermissionAsker | None = None,
        messages: list[Message] | None = None,
        on_append: Callable[[Message], None] | None = None,
        tools_ready: Callable[[], Awaitable[ToolContext]] | None = None,
    ) -> None:
        self.config = config
        self.client = client
        self.context = context
        # The context is still being made (an isolated subagent's worktree): its first tool
        # call waits for the real one, which replaces ``context``; model rounds never wait.
        self.tools_ready = tools_ready
        self.sink = sink or NullSink()
        self.asker = asker or DenyAll()
        self.messages: list[Message] = list(messages or [])
        self.on_append = on_append
        self.usage = sum((usage_of(m) for m in self.messages), Usage())
        self._streamed: list[str] = []
        self._pending: dict[str, Any] = {}
        self._in_turn = False
        self._reminder: str | None = None  # this turn's memory reminder (read once per turn)
        self._shown: dict[str, str] = {}  # tool call id -> the arguments its block shows

    # ------------------------------------------------------------------ public

    def append(self, message: Message) -> None:
        self.messages.append(message)
        if self.on_append:
            self.on_append(message)
        if message.role == "user":
            self.sink.emit(UserMessageAdded(message))
        elif message.role == "assistant":
            self.sink.emit(AssistantMessageAdded(message))

    def reconfigure(
        self, *, permission_mode: PermissionMode | None = None, model: str | None = None
    ) -> None:
        """Change the permission mode or the model from the next model round (at once when
        no turn runs)."""
        if permission_mode is not None:
            self._pending["permission_mode"] = permission_mode
        if model is not None:
            self._pending["model"] = model
        if not self._in_turn:
            self._apply_pending()

    def upcoming(self, name: str) -> Any:
        """The value of the config field ``name`` from the next model round on."""
        return self._pending.get(name, getattr(self.config, name))

    def _apply_pending(self) -> None:
        for name, value in self._pending.items():
            setattr(self.config, name, value)
        self._pending.clear()

    async def run_turn(self, user_messages: Sequence[Message] = ()) -> TurnResult:
        """Add ``user_messages`` and run rounds until an answer without tool calls."""
        self._in_turn = True
        try:
            return await self._run_turn(user_messages)
        finally:
            self._in_turn = False
            self._apply_pending()

    async def _run_turn(self, user_messages: Sequence[Message]) -> TurnResult:
        for message in user_messages:
            self.append(message)
        self.sink.emit(MessagesChanged(list(self.messages)))
        turn_usage = Usage()
        answers = 0
        calls = 0
        last_text = ""
        try:
            # Memory files are read once per turn, in a worker thread: every round of the
            # turn sends the same reminder, and no round waits on the disk.
            self._reminder = await asyncio.to_thread(self.config.context_reminder)
            for _round in range(self.config.max_rounds):
                for message in self.config.inbox():
                    self.append(message)
                response = await self._model_round()
                turn_usage = turn_usage + response.usage
                answers += 1
                last_text = response.content or last_text
                if not response.tool_calls:
                    return self._end(
                        TurnResult("completed", last_text, turn_usage, None, answers, calls)
                    )
                calls += len(response.tool_calls)
                await self._run_tool_calls(response.tool_calls)
            error = f"stopped after {self.config.max_rounds} model rounds (turn limit)"
            result = TurnResult("failed", last_text, turn_usage, error, answers, calls, True)
            return self._end(result)
        except ModelError as exc:
            return self._end(TurnResult("failed", last_text, turn_usage, str(exc), answers, calls))
        except Exception as exc:  # a bug of ours: this turn fails, the session goes on
            log.exception("the turn failed")
            with contextlib.suppress(Exception):  # what failed may fail again here
                self._close_open_tool_calls()
            error = f"internal error: {type(exc).__name__}: {exc}"
            return self._end(TurnResult("failed", last_text, turn_usage, error, answers, calls))
        except asyncio.CancelledError:
            self._close_open_tool_calls()
            self._end(TurnResult("cancelled", last_text, turn_usage, "cancelled", answers, calls))
            raise

    def request_messages(self) -> list[dict[str, Any]]:
        """The messages exactly as the next model round will receive them."""
        out: list[dict[str, Any]] = [{"role": "system", "content": self.config.system_prompt}]
        reminder = self._reminder if self._in_turn else self.config.context_reminder()
        if reminder:
            out.append({"role": "user", "content": reminder})
        out.extend(message.to_openai() for message in self.messages)
        return out

    # ------------------------------------------------------------------ model

    @property
    def streamed_text(self) -> str:
        """The assistant text streamed so far in the current round."""
        return "".join(self._streamed)

    async def _model_round(self) -> Any:
        self._apply_pending()
        self._streamed = []  # appended to, never re-joined per delta: linear in the answer

        def on_delta(delta: str) -> None:
            self._streamed.append(delta)
            self.sink.emit(AssistantContentDelta(delta))

        request = ModelRequest(
            model=self.config.model,
            messages=self.request_messages(),
            tools=[tool_schema(tool) for tool in self.config.tools],
            params=dict(self.config.params),
        )
        try:
            response = await self.client.complete(request, on_delta)
        except asyncio.CancelledError:
            if self._streamed:  # what the user already saw stays in the history
                self.append(Message("assistant", self.streamed_text, meta={"interrupted": True}))
            raise
        self.usage = self.usage + response.usage
        # The round's usage rides along in meta (the model never sees it): a resumed session
        # starts from its total, and a client can show each round's cost.
        meta = {"usage": response.usage.to_json()} if response.usage.total_tokens else {}
        self.append(Message("assistant", response.content, list(response.tool_calls), meta=meta))
        self.sink.emit(UsageUpdated(response.usage, self.usage))
        return response

    # ------------------------------------------------------------------ tools

    async def _run_tool_calls(self, calls: list[ToolCall]) -> None:
        for call in calls:
            tool = self._find(call.name)
            if isinstance(tool, ShowsArguments):
                shown = tool.shown_arguments(parsed_arguments(call.arguments))
                if shown is not None:
                    self._shown[call.id] = json.dumps(shown, ensure_ascii=False)
            self._block(call, "pending")
        if self.tools_ready is not None:
            self.context = await self.tools_ready()
            self.tools_ready = None
        # Consecutive concurrency-safe calls run together; the others one at a time, in order.
        batch: list[ToolCall] = []
        for call in calls:
            if self._concurrency_safe(call):
                batch.append(call)
                continue
            await self._run_batch(batch)
            batch = []
            await self._run_batch([call])
        await self._run_batch(batch)

    async def _run_batch(self, batch: list[ToolCall]) -> None:
        if not batch:
            return
        results = await asyncio.gather(*(self._run_one(call) for call in batch))
        for call, result in zip(batch, results, strict=True):
            # What the tool block showed stays with the result in the history (the model
            # never sees ``meta``), so a replayed session shows it as it was.
            meta: dict[str, Any] = {}
            if result.short_result:
                meta["shortResult"] = result.short_result
            if result.details:
                meta["details"] = result.details
            if result.is_error:
                meta["isError"] = True
            if result.details.get("permission"):  # the session rule that let it run
                meta["permission"] = result.details["permission"]
            self.append(
                Message("tool", result.content, tool_call_id=call.id, name=call.name, meta=meta)
            )
            status: Literal["completed", "failed"] = "failed" if result.is_error else "completed"
            self._block(call, status, result.short_result, result.content, result.details)
            self._shown.pop(call.id, None)

    def _concurrency_safe(self, call: ToolCall) -> bool:
        tool = self._find(call.name)
        if tool is None:
            return True
        return tool.concurrency_safe

    def _find(self, name: str) -> Tool | None:
        return next((tool for tool in self.config.tools if tool.name == name), None)

    async def _run_one(self, call: ToolCall) -> ToolResult:
        tool = self._find(call.name)
        if tool is None:
            return ToolResult(f"Tool '{call.name}' not found", is_error=True)
        try:
            args = json.loads(call.arguments) if call.arguments.strip() else {}
        except json.JSONDecodeError as exc:
            return ToolResult(f"Invalid JSON arguments for {call.name}: {exc}", is_error=True)
        if not isinstance(args, dict):
            return ToolResult(f"Arguments for {call.name} must be a JSON object", is_error=True)
        free_dir = self._free_write_dir(tool, args)
        sandbox = self.context.sandbox
        if tool.effect == "execute" and (
            self.config.read_only_bash or self.config.permission_mode == "plan"
        ):
            sandbox = without_network(sandbox)  # read-only commands cannot send (issue 25)
        context = dataclasses.replace(
            self.context,
            tool_call_id=call.id,
            report=lambda text, details=None: self._block(call, "running", text, None, details),
            write_root=self.context.write_root if free_dir is None else free_dir,
            sandbox=sandbox,
        )
        hooks = self.config.tool_hooks
        try:
            blocked = await hooks.before_tool(call.name, args, context) if hooks else None
            if blocked is not None:
                return ToolResult(blocked, is_error=True, short_result="blocked by hook")
            if free_dir is not None:
                decision = PermissionDecision(True)
            else:
                decision = await self._permission(tool, args, context)
            if not decision.allowed:
                return ToolResult(decision.message, is_error=True, short_result="denied")
            self._block(call, "running")
            result = await tool.run(args, context)
            if hooks is not None:
                result = await hooks.after_tool(call.name, args, result, context)
        except ToolError as exc:
            return ToolResult(str(exc), is_error=True, short_result="error")
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            log.exception("tool %s crashed", call.name)
            return ToolResult(f"{call.name} failed: {exc}", is_error=True, short_result="error")
        if decision.rule:
            result.details = {**result.details, "permission": decision.rule}
        return result

    def _free_write_dir(self, tool: Tool, args: dict[str, Any]) -> Path | None:
        """The free folder (``AgentConfig.free_write_dirs``) a file change lies in, if any."""
        target = args.get("file_path") or args.get("notebook_path")
        if tool.effect != "edit" or self.config.permission_mode == "plan":
            return None
        if not self.config.free_write_dirs or not isinstance(target, str) or not target:
            return None
        real = os.path.realpath(self.context.resolve(target))
        for folder in self.config.free_write_dirs:
            root = os.path.realpath(folder)
            if real == root or real.startswith(root.rstrip(os.sep) + os.sep):
                return Path(root)
        return None

    async def _permission(
        self, tool: Tool, args: dict[str, Any], ctx: ToolContext
    ) -> PermissionDecision:
        """The policy's verdict; a person (the asker) decides what the policy leaves open.

        A tool that previews its change (Write, Edit) computes the preview first; a preview
        that fails (``ToolError``: the text to replace is not there) fails the call without
        asking anybody.
        """
        verdict = decide(
            self.config.permission_mode,
            tool.name,
            args,
            effect=tool.effect,
            read_only_bash=self.config.read_only_bash,
            sandboxed=self.config.sandbox_auto_allow
            and ctx.sandbox is not None
            and ctx.sandbox.confined,
            offline=cuts_network(ctx.sandbox),
        )
        if verdict.action != "ask":
            return PermissionDecision(verdict.action == "allow", verdict.message)
        summary = permission_summary(tool.name, args)
        preview = await tool.preview(args, ctx) if isinstance(tool, PreviewsChanges) else None
        request = PermissionRequest(
            tool.name,
            args,
            summary,
            effect=tool.effect,
            cwd=ctx.cwd,
            preview=preview,
            tool_call_id=ctx.tool_call_id,
        )
        decision = await self.asker.ask(request)
        if not decision.allowed and not decision.message:
            decision.message = f"The user denied permission to {summary}."
        return decision

    def _block(
        self,
        call: ToolCall,
        status: Literal["pending", "running", "completed", "failed"],
        short_result: str = "",
        result: str | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        arguments = self._shown.get(call.id, call.arguments)
        self.sink.emit(
            ToolBlockUpdated(
                call.id, call.name, arguments, status, short_result, result, details or {}
            )
        )

    def _close_open_tool_calls(self) -> None:
        """Give every unanswered tool call a result so the history stays valid."""
        answered = {m.tool_call_id for m in self.messages if m.role == "tool"}
        for message in list(self.messages):
            for call in message.tool_calls:
                if call.id not in answered:
                    self.append(
                        Message("tool", CANCELLED_TOOL_RESULT, tool_call_id=call.id, name=call.name)
                    )
                    self._block(call, "failed", "cancelled", CANCELLED_TOOL_RESULT)

    def _end(self, result: TurnResult) -> TurnResult:
        self.sink.emit(MessagesChanged(list(self.messages)))
        self.sink.emit(TurnEnded(result.status, result.text, result.error))
        return result


def usage_of(message: Message) -> Usage:
    """The token usage an assistant message's round cost (kept in ``meta.usage``)."""
    recorded = message.meta.get("usage") if message.role == "assistant" else None
    if not isinstance(recorded, dict):
        return Usage()
    try:
        return Usage(
            int(recorded.get("prompt_tokens", 0)),
            int(recorded.get("completion_tokens", 0)),
            int(recorded.get("total_tokens", 0)),
        )
    except (TypeError, ValueError):
        return Usage()


def last_assistant_text(messages: Sequence[Message]) -> str | None:
    """The text of the last assistant message that has any (a round cut off mid-stream,
    ``meta.interrupted``, is no answer)."""
    for message in reversed(messages):
        if message.role == "assistant" and message.content.strip():
            if message.meta.get("interrupted"):
                continue
            return message.content
    return None
