"""Commands in process groups of their own, and the guarantee that none outlives us.

Every command the agent starts (Bash, background shells, worktree hooks) leads a new
process group (a new session), so that stopping it stops what it started. Each group is
reported to one reaper process per server (``group_reaper``), which kills the groups
still alive a moment after the server ends, however it ends, SIGKILL included.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wave_ls.runtime.sandbox import Confinement

log = logging.getLogger(__name__)

REAPER_SCRIPT = Path(__file__).with_name("group_reaper.py")


class GroupReaper:
    """Starts the reaper on first use and tells it each new process group."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start the reaper now (a server does at start-up; otherwise the first ``watch``
        does), so that its pipe is there from the beginning."""
        with self._lock:
            self._running()

    def watch(self, pgid: int) -> None:
        """Have ``pgid`` killed when this process ends (best effort: never raises)."""
        line = b"%d\n" % pgid
        with self._lock:
            for _attempt in range(2):
                process = self._running()
                if process is None or process.stdin is None:
                    return
                try:
                    os.write(process.stdin.fileno(), line)
                    return
                except OSError:  # the reaper died: start another one
                    with contextlib.suppress(OSError):
                        process.stdin.close()
                    self._process = None

    def _running(self) -> subprocess.Popen[bytes] | None:
        if self._process is None or self._process.poll() is not None:
            if self._process is not None and self._process.stdin is not None:
                with contextlib.suppress(OSError):
                    self._process.stdin.close()
            self._process = self._start()
        return self._process

    def _start(self) -> subprocess.Popen[bytes] | None:
        try:
            return subprocess.Popen(
                [sys.executable, "-I", "-S", str(REAPER_SCRIPT)],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # not in the server's group: it must outlive it
            )
        except OSError as error:
            log.warning("cannot start the process reaper: %s", error)
            return None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None


reaper = GroupReaper()


async def spawn_group(
    *argv: str, sandbox: Confinement | None = None, **options: Any
) -> asyncio.subprocess.Process:
    """``asyncio.create_subprocess_exec`` in a new process group the reaper watches.

    With ``sandbox``, the command is started confined (its argv wrapped, its ``preexec``
    run between fork and exec, its ``env`` added): what it starts inherits the confinement.
    """
    command = list(argv)
    if sandbox is not None:
        command, options = confined(command, sandbox, options)
    process = await asyncio.create_subprocess_exec(*command, start_new_session=True, **options)
    reaper.watch(process.pid)
    return process


def confined(
    argv: list[str], sandbox: Confinement, options: dict[str, Any]
) -> tuple[list[str], dict[str, Any]]:
    """``argv`` and the ``subprocess`` options that start it inside ``sandbox``."""
    options = dict(options)
    if sandbox.preexec is not None:
        options["preexec_fn"] = sandbox.preexec
    if sandbox.env:
        options["env"] = {**(options.get("env") or os.environ), **sandbox.env}
    return sandbox.argv(argv), options


def popen_group(argv: list[str], **options: Any) -> subprocess.Popen[Any]:
    """``subprocess.Popen`` in a new process group the reaper watches."""
    process = subprocess.Popen(argv, start_new_session=True, **options)
    reaper.watch(process.pid)
    return process


def signal_group(pgid: int, sig: int) -> None:
    """Send ``sig`` to a process group; a group that is already gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)
