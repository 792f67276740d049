"""Waiting for a state that no event announces: a process gone, a file a child process
wrote, a request the fake model (in its own thread) recorded.

The suite's one polling loop. What has an event waits on it instead (an LSP update:
``WaveClient.wait_update``; an ACP one: ``RecordingClient.wait_for``; a task's end:
``BackgroundTasks.read_output(block=True)``); nothing waits a fixed time to see that
something did *not* happen: it waits for what proves it (the turn ended, a later message
arrived).
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Callable

# How often the state is looked at: short against every timeout, long against the look.
POLL_S = 0.02


async def until(
    predicate: Callable[[], object], timeout: float = 10.0, what: str = "the condition"
) -> None:
    """Return once ``predicate()`` is true (awaited first when it returns an awaitable: a
    request to the server, say); ``AssertionError`` naming ``what`` after ``timeout``
    seconds."""
    deadline = time.monotonic() + timeout

    async def holds() -> bool:
        value = predicate()
        return bool(await value if inspect.isawaitable(value) else value)

    while not await holds():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        await asyncio.sleep(POLL_S)  # the polled state has no event (see the module's text)


def until_blocking(
    predicate: Callable[[], object], timeout: float = 10.0, what: str = "the condition"
) -> None:
    """``until`` for code outside an event loop (a synchronous test, a helper thread)."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")
        time.sleep(POLL_S)  # the polled state has no event (see the module's text)


async def eventually(predicate: Callable[[], object], timeout: float = 10.0) -> bool:
    """Whether ``predicate()`` became true within ``timeout`` seconds (``until`` as a
    value, for a test that asserts with its own message)."""
    try:
        await until(predicate, timeout)
    except AssertionError:
        return False
    return True


def eventually_blocking(predicate: Callable[[], object], timeout: float = 10.0) -> bool:
    """``eventually`` for code outside an event loop."""
    try:
        until_blocking(predicate, timeout)
    except AssertionError:
        return False
    return True
