"""Ctrl-C for the commands that run an event loop (``wave-ls run``, ``wave-ls demo``).

The first Ctrl-C prints one line and cancels the command's main task: its ``finally``
blocks settle what it started (the session's turn is cancelled, its background work
stopped, worktrees kept or removed by their rules, child processes ended). The process
then exits with 130. Should settling take longer than ``GRACE_S``, or a second Ctrl-C
come, ``force`` ends what is left and the process exits at once: commands the agent
started are then ended by the group reaper (``runtime/group_reaper.py``), which sees our
end of its pipe close.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

EXIT_INTERRUPTED = 130  # 128 + SIGINT, as a shell reports a process Ctrl-C ended
GRACE_S = 0.8


class Interrupted(Exception):
    """The user pressed Ctrl-C; the work was cancelled and settled."""


def run_interruptible(
    main: Coroutine[Any, Any, T],
    *,
    notice: str,
    force: Callable[[], None] = lambda: None,
) -> T:
    """``asyncio.run(main)``, with Ctrl-C handled as above; raises ``Interrupted`` once
    the cancelled work has settled. ``notice`` is the one line printed at the first Ctrl-C;
    ``force`` (called before a forced exit) kills what must not outlive the process."""
    return asyncio.run(_guarded(main, notice, force))


async def _guarded(main: Coroutine[Any, Any, T], notice: str, force: Callable[[], None]) -> T:
    loop = asyncio.get_running_loop()
    task = asyncio.ensure_future(main)
    presses = 0

    def exit_now() -> None:
        with contextlib.suppress(Exception):
            force()
        logging.shutdown()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        os._exit(EXIT_INTERRUPTED)

    def on_sigint() -> None:
        nonlocal presses
        presses += 1
        if presses > 1:
            exit_now()
        sys.stderr.write(f"\n{notice}\n")
        sys.stderr.flush()
        task.cancel()
        # The loop runs until asyncio.run has shut everything down: this also bounds that.
        loop.call_later(GRACE_S, exit_now)

    loop.add_signal_handler(signal.SIGINT, on_sigint)
    try:
        result = await task
    except asyncio.CancelledError:
        if presses:
            raise Interrupted from None
        raise
    finally:
        if not presses:  # after one, a second Ctrl-C still quits at once
            loop.remove_signal_handler(signal.SIGINT)
    if presses:  # the work ended on its own meanwhile: it was still interrupted
        raise Interrupted
    return result
