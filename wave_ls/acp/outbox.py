"""The ordered stream of ``session/update`` notifications to the client.

Runtime events arrive synchronously (an ``EventSink`` must not block); each becomes an item
here, and one worker sends the items strictly in order. While the worker waits for the
pipe, consecutive message chunks of one session are merged (a fast model's hundreds of
deltas a second become as many notifications as the client can take); nothing else is
merged or dropped, so every tool call update reaches the client. ``drain`` waits until
everything queued so far is written: before a prompt's answer, before a permission request.
"""

from __future__ import annotations

import asyncio
import logging
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from acp.helpers import text_block
from acp.schema import (
    AgentMessageChunk,
    AgentPlanContentUpdate,
    AgentPlanRemovedUpdate,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AvailableCommandsUpdate,
    ConfigOptionUpdate,
    CurrentModeUpdate,
    SessionInfoUpdate,
    ToolCallProgress,
    ToolCallStart,
    UsageUpdate,
    UserMessageChunk,
)

from wave_ls.runtime.background_work import run_task

log = logging.getLogger(__name__)

# What ``session/update`` carries (the SDK's models).
SessionUpdate = (
    UserMessageChunk
    | AgentMessageChunk
    | AgentThoughtChunk
    | ToolCallStart
    | ToolCallProgress
    | AgentPlanUpdate
    | AgentPlanContentUpdate
    | AgentPlanRemovedUpdate
    | AvailableCommandsUpdate
    | CurrentModeUpdate
    | ConfigOptionUpdate
    | SessionInfoUpdate
    | UsageUpdate
)
Send = Callable[[str, SessionUpdate], Awaitable[None]]  # (session id, update) -> written


@dataclass
class _Item:
    session_id: str
    update: SessionUpdate | None = None
    # A text chunk still being merged: its kind ("agent_message_chunk", ...) and parts.
    chunk_kind: str = ""
    parts: list[str] = field(default_factory=list)
    done: asyncio.Future[None] | None = None  # a drain marker

    def build(self) -> SessionUpdate:
        if not self.chunk_kind:
            assert self.update is not None, "an update or a text chunk"
            return self.update
        text = text_block("".join(self.parts))
        if self.chunk_kind == "user_message_chunk":
            return UserMessageChunk(session_update="user_message_chunk", content=text)
        if self.chunk_kind == "agent_thought_chunk":
            return AgentThoughtChunk(session_update="agent_thought_chunk", content=text)
        return AgentMessageChunk(session_update="agent_message_chunk", content=text)


class Outbox:
    """Sends session updates in order through ``send`` (the connection's ``session_update``)."""

    def __init__(self, send: Send) -> None:
        self.send = send
        self._items: deque[_Item] = deque()
        self._wake = asyncio.Event()
        self._worker: asyncio.Task[None] | None = None

    def put(self, session_id: str, update: SessionUpdate) -> None:
        """Queue one update (an ``acp.schema`` session update model)."""
        self._push(_Item(session_id, update))

    def put_text(self, session_id: str, text: str, kind: str = "agent_message_chunk") -> None:
        """Queue message text; it joins the previous chunk when that one is still waiting."""
        if not text:
            return
        last = self._items[-1] if self._items else None
        if last is not None and last.session_id == session_id and last.chunk_kind == kind:
            last.parts.append(text)
            return
        self._push(_Item(session_id, chunk_kind=kind, parts=[text]))

    async def drain(self) -> None:
        """Return once every update queued before this call has been written."""
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._push(_Item("", done=done))
        await done

    def _push(self, item: _Item) -> None:
        self._items.append(item)
        self._wake.set()
        if self._worker is None or self._worker.done():
            self._worker = run_task(self._work(), "acp-outbox")

    async def _work(self) -> None:
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._items:
                item = self._items.popleft()
                if item.done is not None:
                    if not item.done.done():
                        item.done.set_result(None)
                    continue
                try:
                    await self.send(item.session_id, item.build())
                except Exception as exc:  # a closed client must not break a running turn
                    log.warning("session/update could not be sent: %s", exc)

    async def close(self) -> None:
        if self._worker is not None:
            self._worker.cancel()
            await asyncio.gather(self._worker, return_exceptions=True)
