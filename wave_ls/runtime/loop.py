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

from wave_ls.runtime.context.compaction import (
    MAX_KEPT_EXCHANGES,
    flatten,
    is_marker,
    marker_index,
    marker_message,
    sent_messages,
    summary_messages,
    tail_start,
)
from wave_ls.runtime.context.policy import KEEP_SHARE, ContextPolicy
from wave_ls.runtime.context.tokens import (
    CHARS_PER_TOKEN,
    calibrated,
    chars_to_tokens,
    message_chars,
    request_chars,
    tools_ignored,
)
from wave_ls.runtime.context.tool_output import cut_output, output_limit_chars
from wave_ls.runtime.core import (
    AssistantContentDelta,
    AssistantMessageAdded,
    AssistantThinkingDelta,
    ContextCompacted,
    ContextLengthError,
    ContextUsage,
    EventSink,
    Message,
    MessagesChanged,
    ModelClient,
    ModelError,
    ModelRequest,
    ModelResponse,
    Notice,
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
    ToolKind,
    ToolResult,
    TurnEnded,
    Usage,
    UsageUpdated,
    UserMessageAdded,
    parsed_arguments,
    tool_schema,
)
from wave_ls.runtime.cut_off import CONTINUE_TEXT, repair_calls
from wave_ls.runtime.model_settings import ModelOptions, forcing
from wave_ls.runtime.permissions import decide, permission_summary
from wave_ls.runtime.sandbox import Confinement, cuts_network, without_network
from wave_ls.runtime.tools import find_tool
from wave_ls.runtime.tools.descriptor import describe

log = logging.getLogger(__name__)

DEFAULT_MAX_ROUNDS = 100
CANCELLED_TOOL_RESULT = "Interrupted: the user cancelled this tool call."
# How often one turn asks the model to go on after an answer cut off by the output limit.
MAX_CONTINUATIONS = 1
# A summary request refused for its length is sent again with half the conversation's text.
SUMMARY_ATTEMPTS = 3
MIN_SUMMARY_TOKENS = 256
# An automatic compaction is not tried for less history than this (a summary of a few short
# messages is as long as they are: 6,997 -> 7,016 tokens was seen).
MIN_SUMMARISED_TOKENS = 400
FUTILE_COMPACTION = (
    "Compaction skipped: a summary would not make the conversation smaller ({before:,} "
    "tokens now{summary}; the system prompt and tool definitions alone take {fixed:,}). "
    "The conversation is unchanged."
)
TOOLS_DROPPED = (
    "The model endpoint {url} seems to ignore the tool definitions: it counted {prompt:,} "
    "prompt tokens for a request of about {estimate:,}, of which the tools alone are about "
    "{tools:,}. The agent cannot call tools through it. A chat template without tool support "
    "does this (llama.cpp: start llama-server with --jinja); see docs/endpoints.md."
)
TEXT_TOOL_CALL = (
    "The model wrote a tool call as text ({marker}) instead of calling the tool: the "
    "endpoint does not turn its output into tool calls (llama.cpp: start llama-server with "
    "--jinja; vLLM: --enable-auto-tool-choice with a --tool-call-parser); see "
    "docs/endpoints.md."
)
TEXT_CALL_MARKERS = ("<tool_call>", "<|tool_call|>", "[TOOL_CALLS]", "<function=", "<|python_tag|>")


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
    # ``tool_choice`` to send; a forcing one (``required``, a function) on a turn's first
    # request only (``runtime/model_settings``).
    tool_choice: str | dict[str, Any] | None = None
    # The start of the assistant's reply on a turn's first request (llama.cpp's prefill).
    reply_prefix: str | None = None
    # The context window's rules (compaction, cut tool outputs); None: unbounded.
    context: ContextPolicy | None = None


@dataclass(frozen=True)
class Compaction:
    """What a compaction did (``compacted`` false: there was nothing to summarize)."""

    compacted: bool
    tokens_before: int
    tokens_after: int


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
        self._broken: dict[str, str] = {}  # tool call id -> why it did not run (cut off)
        self._ratio = 1.0  # reported / estimated tokens of the last request (tokens.py)
        self._just_compacted = False  # no second automatic compaction before a round
        # The tokens at an automatic compaction that could not help: none again until the
        # conversation has grown by a summary's worth.
        self._futile_at: int | None = None
        self._schemas_key: tuple[tuple[Tool, str], ...] | None = None
        self._schemas: list[dict[str, Any]] = []
        self._schemas_chars = 0  # request_chars of ``_schemas`` alone
        self._endpoint_checked = False  # the tools-dropped check runs once

    # ------------------------------------------------------------------ public

    def append(self, message: Message) -> None:
        self.messages.append(message)
        if self.on_append:
            self.on_append(message)
        if is_marker(message):
            meta = message.meta
            self.sink.emit(ContextCompacted(meta["tokensBefore"], meta["tokensAfter"], message))
        elif message.role == "user":
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

    def set_permission_mode(self, mode: PermissionMode) -> None:
        """Switch the permission mode at once, within a running round too (an approved
        ``ExitPlanMode``); a switch ``reconfigure`` holds for the next round still comes."""
        self.config.permission_mode = mode

    def move_to(self, cwd: Path, write_root: Path | None, system_prompt: str) -> None:
        """Run the tools in ``cwd`` from now on, writing only under ``write_root`` (None: no
        such bound); ``system_prompt`` (which names the folder) replaces the prompt only
        while nothing has been said, so the model never sees its prompt change."""
        self.context = dataclasses.replace(self.context, cwd=cwd, write_root=write_root)
        if not self.messages:
            self.config.system_prompt = system_prompt

    def use_sandbox(self, sandbox: Confinement | None) -> None:
        """Confine the next commands with ``sandbox`` (None: unconfined); a confined Bash
        needs no approval outside plan mode."""
        self.context = dataclasses.replace(self.context, sandbox=sandbox)
        self.config.sandbox_auto_allow = sandbox is not None

    def use_model_options(self, options: ModelOptions) -> None:
        """Send ``options`` (a model's own settings: request parameters, ``tool_choice``, the
        reply prefix) with the next requests."""
        self.config.params = options.params()
        self.config.tool_choice = options.tool_choice
        self.config.reply_prefix = options.reply_prefix

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
        continuations = 0
        last_text = ""
        try:
            # Memory files are read once per turn, in a worker thread: every round of the
            # turn sends the same reminder, and no round waits on the disk.
            self._reminder = await asyncio.to_thread(self.config.context_reminder)
            for _round in range(self.config.max_rounds):
                for message in self.config.inbox():
                    self.append(message)
                response = await self._model_round(first=_round == 0)
                turn_usage = turn_usage + response.usage
                answers += 1
                last_text = response.content or last_text
                if not response.tool_calls and response.finish_reason == "length":
                    # Cut off by the output limit: go on once, then say so (never a loop).
                    if continuations < MAX_CONTINUATIONS:
                        continuations += 1
                        self.append(Message("user", CONTINUE_TEXT, meta={"reminder": "cutOff"}))
                        continue
                    error = self._cut_off_error()
                    result = TurnResult("failed", last_text, turn_usage, error, answers, calls)
                    return self._end(result)
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
        """The messages exactly as the next model round will receive them (since the last
        compaction: its summary, the messages it kept, and what came after)."""
        out = self._leading_messages()
        out.extend(message.to_openai() for message in sent_messages(self.messages))
        return out

    def _leading_messages(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = [{"role": "system", "content": self.config.system_prompt}]
        reminder = self._reminder if self._in_turn else self.config.context_reminder()
        if reminder:
            out.append({"role": "user", "content": reminder})
        return out

    # ------------------------------------------------------------------ context window

    def context_tokens(self) -> int:
        """The tokens the next request holds: the endpoint's count of the last request and
        its answer, plus an estimate of only what was added since (of the whole request
        when the endpoint reported nothing since the last compaction)."""
        messages = self.messages
        marker = marker_index(messages)
        first = 0 if marker is None else marker + 1
        added = 0
        for index in range(len(messages) - 1, first - 1, -1):
            message = messages[index]
            if message.role == "assistant":
                usage = usage_of(message)
                if usage.prompt_tokens > 0:
                    reported = usage.prompt_tokens + usage.completion_tokens
                    return reported + chars_to_tokens(added, self._ratio)
            added += message_chars(message)
        return chars_to_tokens(self._request_chars(), self._ratio)

    def _request_chars(self, messages: list[Message] | None = None) -> int:
        view = sent_messages(self.messages) if messages is None else messages
        return request_chars(self._leading_messages(), view, self._tool_schemas())

    def _tool_schemas(self) -> list[dict[str, Any]]:
        """The tools as sent: the same list while the tools and their descriptions stay the
        same (a description may be computed: the Agent tool's lists the agents), so that
        neither the model client nor the token count serializes ~22 KB of schemas again
        every round."""
        key = tuple((tool, tool.description) for tool in self.config.tools)
        if key != self._schemas_key:
            self._schemas_key = key
            self._schemas = [tool_schema(tool) for tool in self.config.tools]
            self._schemas_chars = request_chars([], [], self._schemas)
        return self._schemas

    async def compact(
        self, instructions: str | None = None, *, reason: str = "manual"
    ) -> Compaction:
        """Summarize the conversation so far in place of its oldest messages: the model
        writes the summary; the last few exchanges stay verbatim, and ``messages`` keeps
        everything (one ``compacted`` message marks the place). Raises ``ModelError``
        when the summary request fails."""
        policy = self.config.context or ContextPolicy()
        before = self.context_tokens()
        window = policy.window.tokens
        fixed_chars = request_chars(self._leading_messages(), [], self._tool_schemas())
        fixed = chars_to_tokens(fixed_chars, self._ratio)
        room = policy.limit(self._max_tokens()) - fixed - policy.summary_tokens()
        keep_tokens = max(0, min(int(window * KEEP_SHARE), room))
        # Asked for, everything is summarized; when the window fills up, the last few
        # exchanges stay verbatim (the work in progress), fewer when keeping them would
        # leave nothing to summarize.
        budget = int(keep_tokens * CHARS_PER_TOKEN / self._ratio)
        for exchanges in (MAX_KEPT_EXCHANGES, 1, 0) if reason != "manual" else (0,):
            tail = tail_start(self.messages, budget, exchanges)
            summarised = sent_messages(self.messages[:tail])
            if any(not is_marker(message) for message in summarised):
                break
        else:
            return Compaction(False, before, before)
        if reason != "manual":
            worth = chars_to_tokens(sum(message_chars(m) for m in summarised), self._ratio)
            if worth < MIN_SUMMARISED_TOKENS:
                return self._futile(before, fixed, None)
        # The summary is an answer like any: within model.maxTokens when one is set (but
        # never under MIN_SUMMARY_TOKENS).
        summary_tokens = policy.summary_tokens()
        asked = self.config.params.get("max_tokens")
        if isinstance(asked, int):
            summary_tokens = min(summary_tokens, max(MIN_SUMMARY_TOKENS, asked))
        params = {k: v for k, v in self.config.params.items() if k != "tool_choice"}
        params["max_tokens"] = summary_tokens
        # What the summary request may hold: the window less the summary and instructions;
        # halved when the endpoint refuses it all the same (text denser than estimated).
        input_tokens = window - summary_tokens - 1_000
        budget = max(4_000, int(input_tokens * CHARS_PER_TOKEN / self._ratio * 0.9))
        for attempt in range(SUMMARY_ATTEMPTS):
            text = flatten(summarised, budget)
            request = ModelRequest(
                model=self.config.model,
                messages=summary_messages(text, policy.state(), instructions),
                params=params,
            )
            try:
                response = await self.client.complete(request)
                break
            except ContextLengthError:
                if attempt == SUMMARY_ATTEMPTS - 1:
                    raise
                budget = len(text) // 2
        summary = response.content.strip()
        if not summary:
            raise ModelError(
                f"Compaction failed: the model ({self.config.model}) wrote an empty summary."
            )
        self.usage = self.usage + response.usage
        self.sink.emit(UsageUpdated(response.usage, self.usage))
        kept = len(self.messages) - tail
        marker = marker_message(
            summary, kept=kept, before=before, after=0, reason=reason, mid_turn=self._in_turn
        )
        after_chars = self._request_chars([marker, *self.messages[tail:]])
        after = chars_to_tokens(after_chars, self._ratio)
        if after >= before:  # the summary is longer than what it would replace
            return self._futile(before, fixed, chars_to_tokens(len(summary), self._ratio))
        self._futile_at = None
        marker.meta["tokensAfter"] = after
        self.append(marker)
        self._just_compacted = True
        self.sink.emit(ContextUsage(after, window))
        log.info("compacted (%s): %d -> %d tokens, %d messages kept", reason, before, after, kept)
        return Compaction(True, before, after)

    def _futile(self, before: int, fixed: int, summary: int | None) -> Compaction:
        """A compaction that cannot make the request smaller: nothing changes, and the user
        is told (an automatic one is not tried again until the conversation has grown)."""
        self._futile_at = before
        said = f", a summary of {summary:,}" if summary is not None else ""
        text = FUTILE_COMPACTION.format(before=before, summary=said, fixed=fixed)
        log.info("%s", text)
        self.sink.emit(Notice("info", text))
        return Compaction(False, before, before)

    def _max_tokens(self) -> int | None:
        value = self.config.params.get("max_tokens")
        if isinstance(value, int):
            return value
        return self.config.context.max_tokens() if self.config.context else None

    def _cut_off_error(self) -> str:
        limit = self._max_tokens()
        said = f" (max_tokens {limit})" if limit else ""
        return (
            f"The model's answer was cut off by the output limit{said} again after being "
            "asked to continue; what it wrote is kept. Ask for a shorter answer, or raise "
            "model.maxTokens in .wave/settings.json (docs/endpoints.md)."
        )

    # ------------------------------------------------------------------ model

    @property
    def streamed_text(self) -> str:
        """The assistant text streamed so far in the current round."""
        return "".join(self._streamed)

    async def _model_round(self, first: bool = True) -> ModelResponse:
        self._apply_pending()
        policy = self.config.context
        if policy is not None:
            await policy.window.ensure(self.config.model)
            limit = policy.limit(self._max_tokens())
            tokens = self.context_tokens() if policy.auto_compact else 0
            grown = self._futile_at is None or tokens > self._futile_at + policy.summary_tokens()
            if policy.auto_compact and not self._just_compacted and grown and tokens > limit:
                try:
                    await self.compact(reason="auto")
                except ModelError as error:  # the round goes on; the endpoint may refuse it
                    log.warning("automatic compaction failed: %s", error)
                    self._futile_at = tokens  # as one that could not help: not every round
        try:
            return await self._send(first)
        except ContextLengthError as error:
            if policy is None:
                raise
            # Refused for its length: compacted and sent again once (a second refusal ends
            # the turn with the endpoint's words).
            policy.window.learn(error.window)
            try:
                done = await self.compact(reason="refused")
            except ModelError as failed:
                raise ModelError(f"{error} Compacting it failed too: {failed}") from error
            if not done.compacted:
                raise
            return await self._send(first)

    def _params(self, first: bool) -> dict[str, Any]:
        params = dict(self.config.params)
        if self.config.context is not None:
            params.setdefault("max_tokens", self.config.context.max_tokens())
        choice = self.config.tool_choice
        if choice is not None and self.config.tools and (first or not forcing(choice)):
            params["tool_choice"] = choice
        return params

    async def _send(self, first: bool) -> ModelResponse:
        self._streamed = []  # appended to, never re-joined per delta: linear in the answer

        thinking: list[str] = []

        def on_delta(delta: str) -> None:
            self._streamed.append(delta)
            self.sink.emit(AssistantContentDelta(delta))

        def on_thinking(delta: str) -> None:
            thinking.append(delta)
            self.sink.emit(AssistantThinkingDelta(delta))

        tools = self._tool_schemas()
        view = sent_messages(self.messages)
        messages = self.request_messages()
        if first and self.config.reply_prefix:  # sent, never kept: the reply continues it
            messages.append({"role": "assistant", "content": self.config.reply_prefix})
        request = ModelRequest(
            model=self.config.model,
            messages=messages,
            tools=tools,
            params=self._params(first),
            on_thinking=on_thinking,
        )
        try:
            response = await self.client.complete(request, on_delta)
        except asyncio.CancelledError:
            if self._streamed:  # what the user already saw stays in the history
                interrupted: dict[str, Any] = {"interrupted": True}
                if thinking:
                    interrupted["thinking"] = "".join(thinking)
                self.append(Message("assistant", self.streamed_text, meta=interrupted))
            raise
        self.usage = self.usage + response.usage
        # The round's usage rides along in meta (the model never sees it): a resumed session
        # starts from its total, and a client can show each round's cost.
        meta: dict[str, Any] = (
            {"usage": response.usage.to_json()} if response.usage.total_tokens else {}
        )
        calls, broken, originals = repair_calls(list(response.tool_calls), response.finish_reason)
        self._broken.update(broken)
        if originals:
            meta["brokenArguments"] = originals
        if response.finish_reason == "length":
            meta["cutOff"] = True
        # Shown and kept (the transcript, wave/session/messages), never sent back: the model
        # sees only ``content`` (``Message.to_openai``).
        if response.thinking:
            meta["thinking"] = response.thinking
        self.append(Message("assistant", response.content, calls, meta=meta))
        self.sink.emit(UsageUpdated(response.usage, self.usage))
        self._just_compacted = False
        self._after_round(view, tools, response)
        return dataclasses.replace(response, tool_calls=calls)

    def _after_round(
        self, view: list[Message], tools: list[dict[str, Any]], response: ModelResponse
    ) -> None:
        """Calibrate the estimate, say how full the window is, and check once that the
        endpoint read the tools."""
        prompt = response.usage.prompt_tokens
        policy = self.config.context
        if policy is None:
            return
        without_tools = request_chars(self._leading_messages(), view, [])
        if tools is self._schemas:
            tools_chars = self._schemas_chars
        else:
            tools_chars = request_chars([], [], tools)
        ratio = calibrated(prompt, without_tools + tools_chars)
        checked, self._endpoint_checked = self._endpoint_checked, True
        # The first round's count calibrates only when the endpoint did read the tools.
        read = checked or self._check_endpoint(prompt, without_tools, tools_chars, response)
        if read and ratio is not None:
            self._ratio = ratio
        tokens = self.context_tokens()
        self.sink.emit(ContextUsage(tokens, policy.window.tokens))

    def _check_endpoint(
        self, prompt: int, without_tools: int, tools_chars: int, response: ModelResponse
    ) -> bool:
        """A server whose chat template has no tool support drops ``tools`` with HTTP 200:
        its prompt count leaves them out, or the model writes calls as text. False when
        the count left them out."""
        url = getattr(self.client, "base_url", "") or "in use"
        if tools_ignored(prompt, without_tools, tools_chars):
            estimate = int((without_tools + tools_chars) / CHARS_PER_TOKEN)
            text = TOOLS_DROPPED.format(
                url=url, prompt=prompt, estimate=estimate, tools=int(tools_chars / CHARS_PER_TOKEN)
            )
            log.warning("%s", text)
            self.sink.emit(Notice("warning", text))
            return False
        marker = next((m for m in TEXT_CALL_MARKERS if m in response.content), None)
        if marker is not None and not response.tool_calls and tools_chars:
            text = TEXT_TOOL_CALL.format(marker=marker)
            log.warning("%s", text)
            self.sink.emit(Notice("warning", text))
        return True

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
            meta: dict[str, Any] = self._shown_as(call)
            cut = self._cut(call, result.content)
            if cut is not None:
                meta["outputChars"] = len(result.content)
                result.content = cut
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
        return find_tool(self.config.tools, name)

    def _cut(self, call: ToolCall, content: str) -> str | None:
        """A tool output too large for the window, cut with a note (None: it fits)."""
        policy = self.config.context
        if policy is None:
            return None
        window = policy.window.tokens
        limit = output_limit_chars(window, self._ratio)
        if len(content) <= limit:
            return None
        keep_at = None
        if policy.keep_dir is not None:
            name = "".join(c if c.isalnum() or c in "-_" else "_" for c in call.id)[:80]
            keep_at = policy.keep_dir / f"{name or 'output'}.txt"
        return cut_output(content, limit, window, keep_at)

    async def _run_one(self, call: ToolCall) -> ToolResult:
        broken = self._broken.pop(call.id, None)
        if broken is not None:
            return ToolResult(broken, is_error=True, short_result="cut off")
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

    def _target(self, call: ToolCall) -> tuple[str, ToolKind]:
        """What the call's block shows it works on, and the tool's kind (its descriptor)."""
        described = describe(self._find(call.name))
        return described.target(self._shown.get(call.id, call.arguments)), described.kind

    def _shown_as(self, call: ToolCall) -> dict[str, Any]:
        """The block's ``target`` and ``toolKind``, kept in the result's ``meta`` when the
        tool declares them: a replayed history shows the call as it was shown live."""
        described = describe(self._find(call.name))
        if not described.declared:
            return {}
        target = described.target(self._shown.get(call.id, call.arguments))
        return {"target": target, "toolKind": described.kind}

    def _block(
        self,
        call: ToolCall,
        status: Literal["pending", "running", "completed", "failed"],
        short_result: str = "",
        result: str | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        arguments = self._shown.get(call.id, call.arguments)
        target, kind = self._target(call)
        self.sink.emit(
            ToolBlockUpdated(
                call.id,
                call.name,
                arguments,
                status,
                short_result,
                result,
                details or {},
                target,
                kind,
            )
        )

    def _close_open_tool_calls(self) -> None:
        """Give every unanswered tool call a result so the history stays valid."""
        answered = {m.tool_call_id for m in self.messages if m.role == "tool"}
        for message in list(self.messages):
            for call in message.tool_calls:
                if call.id not in answered:
                    cancelled = Message(
                        "tool", CANCELLED_TOOL_RESULT, tool_call_id=call.id, name=call.name
                    )
                    cancelled.meta = self._shown_as(call)
                    self.append(cancelled)
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
