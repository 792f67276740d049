"""The reaper: a tiny process that kills the server's process groups when the server dies.

Run as a script (``python -I -S group_reaper.py``), it imports nothing of wave_ls. It reads
process group ids, one per line, from stdin, whose other end only the server holds. When
stdin reaches its end (the server exited, normally or by SIGKILL) or it gets SIGTERM, it
sends SIGTERM to every group still alive, waits up to ``GRACE_S`` and sends SIGKILL. Groups
that emptied themselves are forgotten at each wake-up (at least once a second).

Why a separate process: ``PR_SET_PDEATHSIG`` reaches only the direct child of the server
(the shell), not what the shell left behind (``sleep 100 &``), and a reaper run at the next
start comes too late; this process outlives the server by design, for ``GRACE_S``.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import time

GRACE_S = 1.0
PRUNE_EVERY_S = 1.0


class _Stop(Exception):
    pass


def _stop(_signum: int, _frame: object) -> None:
    raise _Stop


def group_exists(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def signal_groups(groups: set[int], sig: int) -> None:
    for pgid in groups:
        with contextlib.suppress(OSError):
            os.killpg(pgid, sig)


def reap(groups: set[int]) -> None:
    """SIGTERM, a grace period, then SIGKILL for every group that is left."""
    groups = {pgid for pgid in groups if group_exists(pgid)}
    if not groups:
        return
    signal_groups(groups, signal.SIGTERM)
    deadline = time.monotonic() + GRACE_S
    while time.monotonic() < deadline and any(group_exists(pgid) for pgid in groups):
        time.sleep(0.05)
    signal_groups(groups, signal.SIGKILL)


def main() -> None:
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a Ctrl-C meant for the editor
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _stop)
    groups: set[int] = set()
    pending = b""
    try:
        while True:
            ready, _, _ = select.select([0], [], [], PRUNE_EVERY_S)
            if ready:
                data = os.read(0, 4096)
                if not data:
                    break
                *lines, pending = (pending + data).split(b"\n")
                groups.update(int(line) for line in lines if line.strip().isdigit())
            groups = {pgid for pgid in groups if group_exists(pgid)}
    except _Stop:
        pass
    reap(groups)


if __name__ == "__main__":
    main()
    sys.exit(0)
