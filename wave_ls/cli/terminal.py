"""Terminal adapters: live progress on stderr with rich, permission prompts on the tty."""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING

from wave_ls.runtime.core import (
    Event,
    PermissionDecision,
    PermissionRequest,
    ToolBlockUpdated,
    TurnEnded,
    UsageUpdated,
)

if TYPE_CHECKING:
    from rich.console import Console


class TerminalProgress:
    """An ``EventSink`` printing tool calls and token use to stderr as they happen."""

    def __init__(self, console: Console | None = None) -> None:
        self._console = console
        self.total_tokens = 0

    @property
    def console(self) -> Console:
        # rich costs ~20 ms to import; nothing is printed before the first model answer.
        if self._console is None:
            from rich.console import Console

            self._console = Console(stderr=True, highlight=False)
        return self._console

    def emit(self, event: Event) -> None:
        match event:
            case ToolBlockUpdated(status="running", short_result=""):
                self.console.print(f"[cyan]→ {event.name}[/] {compact(event.arguments)}")
            case ToolBlockUpdated(status="completed" | "failed"):
                mark = "[green]✓[/]" if event.status == "completed" else "[red]✗[/]"
                detail = event.short_result or first_line(event.result or "")
                self.console.print(f"  {mark} {event.name}: {detail}")
            case UsageUpdated(total=total):
                self.total_tokens = total.total_tokens
                self.console.print(f"[dim]  tokens so far: {total.total_tokens}[/]")
            case TurnEnded(status=status, error=error) if status != "completed":
                self.console.print(f"[red]turn {status}[/]{': ' + error if error else ''}")


class TerminalAsker:
    """Asks y/N on the terminal; without a terminal, denies with a hint."""

    async def ask(self, request: PermissionRequest) -> PermissionDecision:
        if not sys.stdin.isatty():
            return PermissionDecision(
                False,
                f"Permission to {request.summary} denied: no terminal to ask. "
                "Tell the user to rerun with --permission-mode acceptEdits or bypassPermissions.",
            )
        answer = await asyncio.to_thread(input_stderr, f"Allow {request.summary}? [y/N] ")
        if answer.strip().lower() in ("y", "yes"):
            return PermissionDecision(True)
        return PermissionDecision(False, f"The user denied permission to {request.summary}.")


def input_stderr(prompt: str) -> str:
    sys.stderr.write(prompt)
    sys.stderr.flush()
    return sys.stdin.readline()


def compact(arguments: str, limit: int = 80) -> str:
    text = " ".join(arguments.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def first_line(text: str) -> str:
    return compact(text.strip().splitlines()[0] if text.strip() else "")
