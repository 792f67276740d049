"""A stdio server's stderr: its last lines kept for error messages, and its process id.

The server is started through ``/bin/sh``, which writes ``wave-mcp-pid <pid>`` to stderr and
then execs the command (same process, same id): the process group the SDK started can then
be handed to the reaper, so the server never outlives wave-ls, however wave-ls ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
from typing import TextIO, cast

PID_LINE = "wave-mcp-pid"
# ``$0`` is the command and ``"$@"`` its arguments: nothing of them is read by the shell.
LAUNCHER = f'printf "{PID_LINE} %s\\n" "$$" >&2; exec "$0" "$@"'
TAIL_BYTES = 4096
_PID = re.compile(rb"^" + PID_LINE.encode() + rb" (\d+)\n", re.MULTILINE)


def launch_argv(command: str, args: tuple[str, ...]) -> tuple[str, list[str]]:
    """The command and arguments that start ``command`` through the pid-telling shell."""
    return "/bin/sh", ["-c", LAUNCHER, command, *args]


class StderrTail:
    """The read end of a pipe given to the server as its stderr, read in the event loop."""

    def __init__(self) -> None:
        read_fd, write_fd = os.pipe()
        os.set_blocking(read_fd, False)
        self._fd: int | None = read_fd
        self.writer = cast(TextIO, os.fdopen(write_fd, "w"))
        self._tail = b""
        self._pid: asyncio.Future[int | None] = asyncio.get_running_loop().create_future()
        asyncio.get_running_loop().add_reader(read_fd, self._read)

    def spawned(self) -> None:
        """The server has its copy of the write end: ours goes (so its exit is our EOF)."""
        with contextlib.suppress(OSError):
            self.writer.close()

    def _read(self) -> None:
        try:
            data = os.read(self._fd, 65536) if self._fd is not None else b""
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self.close()
            return
        tail = self._tail + data
        if not self._pid.done():
            found = _PID.search(tail)
            if found:
                self._pid.set_result(int(found.group(1)))
                tail = tail[: found.start()] + tail[found.end() :]
        self._tail = tail[-TAIL_BYTES:] if self._pid.done() else tail[-(TAIL_BYTES * 4) :]

    async def pid(self, timeout: float) -> int | None:
        """The server's process id, once the shell said it (None: it never did)."""
        with contextlib.suppress(TimeoutError):
            return await asyncio.wait_for(asyncio.shield(self._pid), timeout)
        return None

    def text(self, lines: int = 3, limit: int = 400) -> str:
        """The last lines the server wrote to stderr, for an error message."""
        said = [line.strip() for line in self._tail.decode("utf-8", "replace").splitlines()]
        text = " | ".join([line for line in said if line][-lines:])
        return text[-limit:]

    def close(self) -> None:
        self.spawned()
        if self._fd is not None:
            with contextlib.suppress(Exception):
                asyncio.get_running_loop().remove_reader(self._fd)
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None
        if not self._pid.done():
            self._pid.set_result(None)
