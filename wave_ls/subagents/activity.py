"""What a running subagent is doing, for its ``Agent`` tool block and the lifecycle callbacks.

The subagent's conversation emits ordinary runtime events into a ``SubagentBridge``; the
bridge keeps the block's ``shortResult`` current (latest tool with a compact argument, tokens
so far) and forwards each event to the ``SubagentListener``s under the instance's id.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from wave_ls.runtime.core import (
    AssistantContentDelta,
    AssistantMessageAdded,
    Event,
    Message,
    MessagesChanged,
    ToolBlockUpdated,
    UsageUpdated,
    UserMessageAdded,
)
from wave_ls.runtime.tools.descriptor import one_line

COMPACT_LIMIT = 60


class SubagentListener(Protocol):
    """Lifecycle callbacks of every subagent instance (SPEC section 5)."""

    def on_subagent_user_message_added(self, instance_id: str, message: Message) -> None: ...

    def on_subagent_assistant_message_added(self, instance_id: str, message: Message) -> None: ...

    def on_subagent_assistant_content_updated(self, instance_id: str, delta: str) -> None:
        """New text the subagent streamed (only the new part)."""

    def on_subagent_tool_block_updated(self, instance_id: str, block: ToolBlockUpdated) -> None: ...

    def on_subagent_messages_change(self, instance_id: str, messages: list[Message]) -> None: ...

    def cleanup_instance(self, instance_id: str) -> None: ...


@dataclass
class ActivityTracker:
    """Counts a subagent's tool calls and tokens; renders its short result and summary."""

    started: float = field(default_factory=time.monotonic)
    latest_tool: str = ""
    tool_calls: int = 0
    total_tokens: int = 0
    seen_calls: set[str] = field(default_factory=set)

    def observe(self, event: Event) -> bool:
        """Take in one event; True when the short result changed."""
        if isinstance(event, ToolBlockUpdated) and event.tool_call_id not in self.seen_calls:
            self.seen_calls.add(event.tool_call_id)
            self.tool_calls += 1
            # ``src/app.py`` for a Read, ``pytest -q`` for a Bash: the block's target.
            argument = one_line(event.target, COMPACT_LIMIT)
            self.latest_tool = f"{event.name} {argument}".strip()
            return True
        if isinstance(event, UsageUpdated):
            self.total_tokens = event.total.total_tokens
            return True
        return False

    def short_result(self) -> str:
        parts = [self.latest_tool or "Starting…", f"{self.total_tokens:,} tokens"]
        return " · ".join(parts)

    def duration_ms(self) -> int:
        return int((time.monotonic() - self.started) * 1000)

    def summary(self, status: str = "Done") -> str:
        calls = f"{self.tool_calls} tool call{'s' if self.tool_calls != 1 else ''}"
        seconds = self.duration_ms() / 1000
        return f"{status} ({calls} · {self.total_tokens:,} tokens · {seconds:.1f}s)"


class SubagentBridge:
    """The subagent conversation's ``EventSink``."""

    def __init__(
        self,
        instance_id: str,
        listeners: Sequence[SubagentListener],
        report: Callable[[str], None],
    ) -> None:
        self.instance_id = instance_id
        self.listeners = listeners
        self.report = report
        self.tracker = ActivityTracker()

    def emit(self, event: Event) -> None:
        if self.tracker.observe(event):
            self.report(self.tracker.short_result())
        for listener in self.listeners:
            self._forward(listener, event)

    def _forward(self, listener: SubagentListener, event: Event) -> None:
        match event:
            case UserMessageAdded(message=message):
                listener.on_subagent_user_message_added(self.instance_id, message)
            case AssistantMessageAdded(message=message):
                listener.on_subagent_assistant_message_added(self.instance_id, message)
            case AssistantContentDelta(delta=delta):
                listener.on_subagent_assistant_content_updated(self.instance_id, delta)
            case ToolBlockUpdated():
                listener.on_subagent_tool_block_updated(self.instance_id, event)
            case MessagesChanged(messages=messages):
                listener.on_subagent_messages_change(self.instance_id, messages)

    def cleanup(self) -> None:
        for listener in self.listeners:
            listener.cleanup_instance(self.instance_id)
