"""A command on a real pseudo-terminal, as a person at a shell runs it: the terminal is its
controlling terminal and it is the foreground process group, so Ctrl-C (``interrupt``)
reaches it, and every child in its group, through the terminal's line discipline."""

from __future__ import annotations

import contextlib
import fcntl
import os
import pty
import select
import signal
import subprocess
import sys
import termios
import time
import tty
from collections.abc import Sequence
from pathlib import Path

from tests.support.waiting import eventually_blocking


class Terminal:
    """``python -m wave_ls <args>`` with stdin, stdout and stderr on one pseudo-terminal
    (``stdout_pipe``: stdout is a pipe instead, read with ``stdout``)."""

    def __init__(
        self,
        args: Sequence[str],
        *,
        env: dict[str, str],
        cwd: Path | None = None,
        stdout_pipe: bool = False,
        columns: int = 200,
        raw: bool = False,
    ) -> None:
        master, slave = pty.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, _winsize(50, columns))
        if raw:  # bytes pass as they are (LSP's framing has \r\n in it)
            tty.setraw(slave)
        self.master = master
        self.output = b""

        def take_terminal() -> None:  # in the child: the pty becomes its controlling terminal
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        self.process = subprocess.Popen(
            [sys.executable, "-m", "wave_ls", *args],
            stdin=slave,
            stdout=subprocess.PIPE if stdout_pipe else slave,
            stderr=slave,
            env={**env, "TERM": "xterm"},
            cwd=cwd,
            start_new_session=True,
            preexec_fn=take_terminal,
        )
        os.close(slave)

    @property
    def pid(self) -> int:
        return self.process.pid

    def read(self, timeout: float = 0.05) -> str:
        """What the terminal showed so far (everything written to it)."""
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.master], [], [], max(left, 0))
            if not ready:
                break
            try:
                chunk = os.read(self.master, 65536)
            except OSError:  # the child closed its end
                break
            if not chunk:
                break
            self.output += chunk
        return self.output.decode(errors="replace")

    def expect(self, text: str, timeout: float = 30) -> str:
        """Wait until ``text`` is on the terminal; everything shown so far."""
        deadline = time.monotonic() + timeout
        while text not in self.read():
            if time.monotonic() > deadline:
                raise AssertionError(f"{text!r} never appeared; the terminal shows:\n{self.text}")
            if self.process.poll() is not None:
                self.read(0.2)
                if text in self.text:
                    break
                raise AssertionError(
                    f"exited ({self.process.returncode}) before {text!r}:\n{self.text}"
                )
        return self.text

    @property
    def text(self) -> str:
        return self.output.decode(errors="replace")

    def type(self, text: str) -> None:
        os.write(self.master, text.encode())

    def interrupt(self) -> float:
        """Ctrl-C, typed on the terminal; when it was typed (``time.monotonic``)."""
        os.write(self.master, b"\x03")
        return time.monotonic()

    def wait(self, timeout: float) -> int:
        """The exit code, waiting at most ``timeout`` seconds (then the test fails)."""
        deadline = time.monotonic() + timeout
        while self.process.poll() is None:
            self.read(0.02)
            if time.monotonic() > deadline:
                raise AssertionError(f"still running after {timeout} s:\n{self.text}")
        self.read(0.1)
        return self.process.returncode

    def close(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(OSError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        with contextlib.suppress(OSError):
            os.close(self.master)

    def __enter__(self) -> Terminal:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


def _winsize(rows: int, columns: int) -> bytes:
    import struct

    return struct.pack("HHHH", rows, columns, 0, 0)


def descendants(pid: int) -> set[int]:
    """Every live process below ``pid`` (children, theirs, ...), from /proc."""
    children: dict[int, set[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, set()).add(int(entry.name))
    found: set[int] = set()
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def alive(pids: set[int], within: float = 0.0) -> set[int]:
    """Which of ``pids`` still run (zombies count as gone), after waiting up to ``within``
    seconds for them to go."""
    eventually_blocking(lambda: not any(_running(pid) for pid in pids), within)
    return {pid for pid in pids if _running(pid)}


def _running(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
