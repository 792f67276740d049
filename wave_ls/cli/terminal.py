"""Terminal adapters: live progress on stderr, permission prompts on the tty."""

from __future__ import annotations

import asyncio
import os
import sys
from typing import TextIO

from wave_ls.runtime.core import (
    Event,
    PermissionDecision,
    PermissionRequest,
    ToolBlockUpdated,
    UsageUpdated,
)

# How a user of the command line lets edits or everything run without a prompt.
ALLOW_HINT = (
    "rerun with --permission-mode acceptEdits (edits run without asking) or "
    "--permission-mode bypassPermissions (everything runs without asking)"
)


class TerminalProgress:
    """An ``EventSink`` printing tool calls and token use to stderr as they happen. A
    turn's failure is not printed here: the command prints it once, when the turn ends.

    Plain writes, coloured on a terminal (``NO_COLOR``, ``TERM=dumb`` and ``FORCE_COLOR``
    as usual): rich cost 20-60 ms to import at the first answer's line, which was on the
    path of the first tool call (a delegation's launch, issue 30), and its markup read
    brackets in a command as styles."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream
        self.total_tokens = 0
        self._color: bool | None = None

    def emit(self, event: Event) -> None:
        match event:
            case ToolBlockUpdated(status="running", short_result=""):
                self._line(f"{self._style('36', f'→ {event.name}')} {compact(event.arguments)}")
            case ToolBlockUpdated(status="completed" | "failed"):
                ok = event.status == "completed"
                mark = self._style("32", "✓") if ok else self._style("31", "✗")
                detail = event.short_result or first_line(event.result or "")
                self._line(f"  {mark} {event.name}: {detail}")
            case UsageUpdated(total=total):
                self.total_tokens = total.total_tokens
                self._line(self._style("2", f"  tokens so far: {total.total_tokens:,}"))

    def _line(self, text: str) -> None:
        stream = self.stream or sys.stderr
        stream.write(text + "\n")
        stream.flush()

    def _style(self, code: str, text: str) -> str:
        if self._color is None:
            self._color = colors(self.stream or sys.stderr)
        return f"\x1b[{code}m{text}\x1b[0m" if self._color else text


def colors(stream: TextIO) -> bool:
    """Whether lines written to ``stream`` are coloured: a terminal, unless ``NO_COLOR`` or
    ``TERM=dumb``; always with ``FORCE_COLOR``."""
    if os.environ.get("FORCE_COLOR"):
        return True
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # closed, or not a file
        return False


class TerminalAsker:
    """Asks y/N on the terminal; without a terminal, denies, and says on stderr what was
    denied and how to allow it. ``denied`` lists what was refused (the exit code says so)."""

    def __init__(self, prefix: str = "wave-ls run", stdin: TextIO | None = None) -> None:
        self.prefix = prefix
        self.stdin = stdin or sys.stdin
        self.denied: list[str] = []

    async def ask(self, request: PermissionRequest) -> PermissionDecision:
        if not self.stdin.isatty():
            self.denied.append(request.summary)
            say(f"{self.prefix}: denied {request.summary}: no terminal to ask; {ALLOW_HINT}")
            return PermissionDecision(
                False,
                f"Permission to {request.summary} denied: no terminal to ask. "
                "Tell the user to rerun with --permission-mode acceptEdits or bypassPermissions.",
            )
        answer = await read_answer(f"Allow {request.summary}? [y/N] ", self.stdin)
        if answer in ("y", "yes"):
            return PermissionDecision(True)
        self.denied.append(request.summary)
        return PermissionDecision(False, f"The user denied permission to {request.summary}.")


async def read_answer(prompt: str, stdin: TextIO | None = None) -> str:
    """Write ``prompt`` to stderr and read one line from the terminal, lower-cased. Read
    through the event loop (not a thread blocked in ``readline``), so that Ctrl-C can cancel
    the wait; end of input is an empty answer."""
    stdin = stdin or sys.stdin
    say(prompt, end="")
    loop = asyncio.get_running_loop()
    fd = stdin.fileno()
    ready: asyncio.Future[None] = loop.create_future()

    def readable() -> None:
        if not ready.done():
            ready.set_result(None)

    loop.add_reader(fd, readable)
    try:
        await ready
    finally:
        loop.remove_reader(fd)
    # A terminal in canonical mode hands over the whole line at once.
    line = os.read(fd, 4096).decode(errors="replace")
    if not line.endswith("\n"):
        say("")
    return line.strip().lower()


def say(text: str, end: str = "\n") -> None:
    """One line (or a prompt) on stderr, at once."""
    sys.stderr.write(text + end)
    sys.stderr.flush()


def compact(arguments: str, limit: int = 80) -> str:
    text = " ".join(arguments.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def first_line(text: str) -> str:
    return compact(text.strip().splitlines()[0] if text.strip() else "")
