"""One LSP work-done progress per ``Agent`` tool block.

Fed with the (already coalesced) ``toolBlock`` updates of a session: the first update of an
``Agent`` block creates a fresh token (``window/workDoneProgress/create``) and sends ``begin``
titled with the subagent type and task description; each later ``shortResult`` is a
``report``; the block's end is ``end`` with the completion summary. Operations of one token
are sent strictly in order; tokens are dropped after ``end`` (pygls never forgets them).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import Any

from lsprotocol import types
from pygls.progress import Progress

from wave_ls.runtime.background_work import run_task
from wave_ls.runtime.core import parsed_arguments
from wave_ls.runtime.tool_names import WaveTool
from wave_ls.subagents.record import DelegationRecord, delegation_title, starts_background_run

log = logging.getLogger(__name__)

TOKEN_PREFIX = "wave/agent/"


def progress_title(update: dict[str, Any]) -> str:
    """The block's title, with what its model tier became in parentheses when it is one:
    ``reviewer: Review (sonnet -> inherit: no model set for this tier)``."""
    record = _record(update)
    title = delegation_title(parsed_arguments(update.get("arguments") or ""), record)
    return f"{title} ({record.model_note})" if record.model_note else title


def starts_background(update: dict[str, Any]) -> bool:
    return starts_background_run(parsed_arguments(update.get("arguments") or ""), _record(update))


def _record(update: dict[str, Any]) -> DelegationRecord:
    return DelegationRecord.from_json(update.get("details"))


class AgentProgress:
    """Maps ``Agent`` block updates of one server to ``$/progress`` notifications."""

    def __init__(self, progress: Callable[[], Progress], enabled: Callable[[], bool]) -> None:
        self.progress = progress
        self.enabled = enabled
        self.queues: dict[str, asyncio.Queue[Callable[[], Awaitable[None]] | None]] = {}
        self.workers: set[asyncio.Task[None]] = set()
        self.refused: set[str] = set()  # tokens the client would not create
        self.waiting: set[str] = set()  # pending blocks whose run has not reported yet

    def on_update(self, update: dict[str, Any]) -> None:
        if update.get("kind") != "toolBlock" or update.get("name") != WaveTool.AGENT:
            return
        if not self.enabled() or starts_background(update):
            return
        token = TOKEN_PREFIX + str(update["toolCallId"])
        status = update.get("status")
        if token not in self.queues:
            if status == "pending" and not update.get("details"):
                # Begun by the run's first update: its record (the model note) is the title's.
                self.waiting.add(token)
                return
            if status in ("completed", "failed") and token not in self.waiting:
                return  # never began (e.g. refused before it ran): nothing to end
            self.waiting.discard(token)
            self._open(token, progress_title(update))
            if status == "pending":
                return
        queue = self.queues[token]
        if status in ("completed", "failed"):
            message = _record(update).summary or update.get("shortResult") or str(status)
            queue.put_nowait(lambda: self._end(token, message))
            queue.put_nowait(None)
            del self.queues[token]
        elif update.get("shortResult"):
            message = update["shortResult"]
            queue.put_nowait(lambda: self._report(token, message))

    async def drain(self) -> None:
        """Wait until every queued progress notification has been sent."""
        if self.workers:
            await asyncio.gather(*self.workers, return_exceptions=True)

    def _open(self, token: str, title: str) -> None:
        queue: asyncio.Queue[Callable[[], Awaitable[None]] | None] = asyncio.Queue()
        self.queues[token] = queue
        queue.put_nowait(lambda: self._begin(token, title))
        worker = run_task(self._work(queue), f"wave-progress-{token}")
        self.workers.add(worker)
        worker.add_done_callback(self.workers.discard)

    async def _work(self, queue: asyncio.Queue[Callable[[], Awaitable[None]] | None]) -> None:
        while (operation := await queue.get()) is not None:
            try:
                await operation()
            except Exception as exc:  # a client that refuses progress must not break a turn
                log.warning("progress notification failed: %s", exc)

    async def _begin(self, token: str, title: str) -> None:
        progress = self.progress()
        try:
            await progress.create_async(token)
        except Exception:
            self.refused.add(token)
            raise
        progress.begin(token, types.WorkDoneProgressBegin(title=title, cancellable=False))

    async def _report(self, token: str, message: str) -> None:
        if token not in self.refused:
            self.progress().report(token, types.WorkDoneProgressReport(message=message))

    async def _end(self, token: str, message: str) -> None:
        progress = self.progress()
        if token not in self.refused:
            progress.end(token, types.WorkDoneProgressEnd(message=message))
        progress.tokens.pop(token, None)
        self.refused.discard(token)
