"""Runtime events -> ``wave/session/update`` notifications, coalesced per block.

Fast streams produce hundreds of events a second; an editor needs about thirty. Streaming
updates (assistant deltas, running tool blocks) are sent at most ``max_rate`` times a second
per block, merged in between; every other update first flushes what is pending, so the order
of updates is kept and the final state is never lost.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

from wave_ls.runtime.core import (
    AssistantContentDelta,
    AssistantMessageAdded,
    AssistantThinkingDelta,
    ContextCompacted,
    ContextUsage,
    Event,
    MessagesChanged,
    Notice,
    ToolBlockUpdated,
    TurnEnded,
    UsageUpdated,
    UserMessageAdded,
)

UPDATE_METHOD = "wave/session/update"
DEFAULT_MAX_RATE = 30.0


def event_to_update(event: Event) -> dict[str, object] | None:
    """The update payload of one event (without ``sessionId``), or None to send nothing."""
    match event:
        case UserMessageAdded(message=message):
            return {"kind": "userMessage", "message": message.to_json()}
        case AssistantContentDelta(delta=delta):
            return {"kind": "assistantDelta", "delta": delta}
        case AssistantThinkingDelta(delta=delta):
            return {"kind": "thinkingDelta", "delta": delta}
        case AssistantMessageAdded(message=message):
            return {"kind": "assistantMessage", "message": message.to_json()}
        case ToolBlockUpdated():
            update: dict[str, object] = {
                "kind": "toolBlock",
                "toolCallId": event.tool_call_id,
                "name": event.name,
                "arguments": event.arguments,
                "status": event.status,
                "shortResult": event.short_result,
                "target": event.target,
                "toolKind": event.kind,
            }
            if event.result is not None:
                update["result"] = event.result
            if event.details:
                update["details"] = event.details
            return update
        case MessagesChanged(messages=messages):
            return {"kind": "messagesChanged", "count": len(messages)}
        case UsageUpdated(round_usage=round_usage, total=total):
            return {"kind": "usage", "usage": round_usage.to_json(), "total": total.to_json()}
        case ContextCompacted(tokens_before=before, tokens_after=after):
            return {"kind": "compacted", "tokensBefore": before, "tokensAfter": after}
        case ContextUsage(tokens=tokens, window_tokens=window):
            return {"kind": "contextUsage", "tokens": tokens, "windowTokens": window}
        case Notice(level=level, text=text):
            return {"kind": "notice", "level": level, "text": text}
        case TurnEnded(status=status, text=text, error=error):
            return {"kind": "turnEnded", "status": status, "text": text, "error": error}
    return None


def coalesce_key(update: dict[str, object]) -> str | None:
    """Updates with the same key may be merged; None = must be sent as is."""
    if update["kind"] == "assistantDelta":
        return "assistant"
    if update["kind"] == "thinkingDelta":
        return "thinking"
    if update["kind"] == "toolBlock" and update["status"] in ("pending", "running"):
        return f"tool:{update['toolCallId']}"
    return None


class Coalescer:
    """Sends payloads through ``send``, at most ``max_rate`` per second per key."""

    def __init__(
        self, send: Callable[[dict[str, object]], None], max_rate: float = DEFAULT_MAX_RATE
    ):
        self.send = send
        self.interval = 1.0 / max_rate
        self.last_sent: dict[str, float] = {}
        self.pending: dict[str, dict[str, object]] = {}
        self.timers: dict[str, asyncio.TimerHandle] = {}

    def push(self, update: dict[str, object]) -> None:
        key = coalesce_key(update)
        if key is None:
            self.flush()
            self.send(update)
            return
        if key == "assistant" and "thinking" in self.pending:
            self._flush_key("thinking")  # the thinking held back comes before the answer
        if key in self.pending:
            self.pending[key] = merge(self.pending[key], update)
            return
        now = time.monotonic()
        wait = self.last_sent.get(key, -1e9) + self.interval - now
        if wait <= 0:
            self._send_keyed(key, update)
            return
        self.pending[key] = update
        self.timers[key] = asyncio.get_running_loop().call_later(wait, self._flush_key, key)

    def flush(self) -> None:
        """Send everything pending now, in the order it was first held back."""
        for key in list(self.pending):
            self._flush_key(key)

    def _flush_key(self, key: str) -> None:
        timer = self.timers.pop(key, None)
        if timer:
            timer.cancel()
        update = self.pending.pop(key, None)
        if update is not None:
            self._send_keyed(key, update)

    def _send_keyed(self, key: str, update: dict[str, object]) -> None:
        self.last_sent[key] = time.monotonic()
        self.send(joined(update))


def merge(older: dict[str, object], newer: dict[str, object]) -> dict[str, object]:
    """One update standing for both; assistant deltas are concatenated (collected as parts
    and joined once when sent, so a burst of deltas costs linear time); thinking too."""
    if newer["kind"] in ("assistantDelta", "thinkingDelta"):
        parts = older.get(_PARTS)
        if not isinstance(parts, list):
            parts = [older["delta"]]
        parts.append(newer["delta"])
        return {**newer, _PARTS: parts}
    return newer


_PARTS = "_parts"


def joined(update: dict[str, object]) -> dict[str, object]:
    """The update as it is sent: held-back delta parts joined into ``delta``."""
    parts = update.get(_PARTS)
    if not isinstance(parts, list):
        return update
    return {**{k: v for k, v in update.items() if k != _PARTS}, "delta": "".join(parts)}


class SessionUpdateSink:
    """An ``EventSink`` that notifies the client of one session's changes."""

    def __init__(
        self,
        session_id: str,
        notify: Callable[[str, dict[str, object]], None],
        max_rate: float = DEFAULT_MAX_RATE,
        on_sent: Callable[[dict[str, object]], None] = lambda _update: None,
    ) -> None:
        self.session_id = session_id
        self.notify = notify
        self.on_sent = on_sent  # sees each update after coalescing (progress mirrors it)
        self.coalescer = Coalescer(self._send, max_rate)

    def emit(self, event: Event) -> None:
        update = event_to_update(event)
        if update is not None:
            self.coalescer.push(update)

    def push(self, update: dict[str, object]) -> None:
        """An update that is not a runtime event (a background task changed, ...)."""
        self.coalescer.push(update)

    def flush(self) -> None:
        self.coalescer.flush()

    def _send(self, update: dict[str, object]) -> None:
        self.notify(UPDATE_METHOD, {"sessionId": self.session_id, **update})
        self.on_sent(update)
