"""The one place background work starts: a task that runs on, with a reference kept (an
unreferenced task may be garbage-collected mid-run) and its failure logged.

Everything that does not end within the request that started it goes through ``run_task``:
background shell and subagent runners, a session's turn for task notices, the progress
workers of the LSP adapter, a worktree still being made for a cancelled caller.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import Any, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")

_running: set[asyncio.Task[Any]] = set()


def run_task(
    work: Coroutine[Any, Any, T], name: str, *, log_failure: bool = True
) -> asyncio.Task[T]:
    """Start ``work`` on the running loop; the task is kept until it ends.

    ``log_failure=False`` when whoever awaits the task handles its exception.
    """
    task = asyncio.get_running_loop().create_task(work, name=name)
    _running.add(task)

    def done(finished: asyncio.Task[T]) -> None:
        _running.discard(finished)
        if log_failure and not finished.cancelled() and finished.exception() is not None:
            log.error("background task %s failed", name, exc_info=finished.exception())

    task.add_done_callback(done)
    return task


def running_tasks() -> frozenset[asyncio.Task[Any]]:
    """The background tasks that have not ended yet (for tests and diagnostics)."""
    return frozenset(_running)
