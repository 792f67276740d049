"""A server (LSP or ACP) ends when its editor is gone, whatever a request is doing.

The editor is gone when stdin ends or, for LSP, when the process ``initialize`` named
(``processId``) ends (LSP: the server then exits). Ending is asked of the event loop, but
a request stuck in a thread (a child that never answers) would hold the process for ever:
``asyncio.run`` and the thread pools wait for their threads, and a blocked event loop never
hears of the end at all. So the end also arms a timer, from the thread that saw it: after
``EXIT_GRACE_SECONDS`` the process exits without waiting. The process reaper then ends
whatever the agent started (``runtime/processes.py``).
"""

from __future__ import annotations

import contextlib
import logging
import os
import select
import threading
import time
from collections.abc import Callable
from pathlib import Path

log = logging.getLogger(__name__)

# What a normal end needs (sessions closed, transcripts written) is far less.
EXIT_GRACE_SECONDS = 5.0
# How often a process is looked at where the kernel cannot tell us of its end (no pidfd).
POLL_SECONDS = 2.0

_armed = threading.Lock()


def exit_soon(code: Callable[[], int], why: str, grace: float = EXIT_GRACE_SECONDS) -> None:
    """End the process ``grace`` seconds from now unless it has ended by itself (once)."""
    if not _armed.acquire(blocking=False):
        return

    def finish() -> None:
        log.error("%s %.0f s ago and the server has not ended; exiting now", why, grace)
        for handler in logging.getLogger().handlers:
            with contextlib.suppress(Exception):
                handler.flush()
        os._exit(code())

    timer = threading.Timer(grace, finish)
    timer.name = "wave-exit-timer"
    timer.daemon = True
    timer.start()


def process_alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie has ended: its parent only has not read its status)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # another user's process: it exists
        pass
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return True  # no /proc: what kill said
    return stat.rsplit(")", 1)[-1].split()[:1] not in (["Z"], ["X"])


def watch_process(pid: int, on_gone: Callable[[], None]) -> None:
    """Call ``on_gone`` (from a thread of its own) when the process ``pid`` ends; at once
    when it is not running."""

    def wait() -> None:
        try:
            fd = os.pidfd_open(pid)
        except ProcessLookupError:
            on_gone()
            return
        except (AttributeError, OSError):  # no pidfd here (old kernel, seccomp): poll
            while process_alive(pid):
                time.sleep(POLL_SECONDS)
            on_gone()
            return
        try:
            select.select([fd], [], [])  # readable once the process has ended
        finally:
            os.close(fd)
        on_gone()

    threading.Thread(target=wait, name="wave-watch-editor", daemon=True).start()
