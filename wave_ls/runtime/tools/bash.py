"""``Bash``: run a command in the agent's working directory, in its own process group."""

from __future__ import annotations

import asyncio
import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wave_ls.runtime.core import Effect, ToolContext, ToolError, ToolKind, ToolResult
from wave_ls.runtime.processes import spawn_bash, stop_group
from wave_ls.runtime.tool_names import WaveTool
from wave_ls.runtime.tools.args import optional_bool, optional_int, optional_str, require_str

if TYPE_CHECKING:
    from wave_ls.runtime.sandbox import Confinement

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
MAX_OUTPUT_CHARS = 30_000
# After SIGTERM, how long the group gets before SIGKILL.
# After the shell exits, how long to wait for processes it left behind to close the output.
DRAIN_GRACE_S = 0.2
# Nothing may wait for a person: no editor for git, no credential prompt.

DESCRIPTION = f"""\
Executes a bash command and returns its output (stdout and stderr combined) and exit code.

Usage:
- The command runs with `bash -c` in the working directory; each call starts afresh there \
(a `cd` does not carry over to the next call). Quote paths that contain spaces.
- stdin is /dev/null: interactive commands get end-of-file (use non-interactive flags, e.g. \
`git commit -m`, `npm init -y`).
- timeout is in milliseconds: default {DEFAULT_TIMEOUT_MS} (2 minutes), at most \
{MAX_TIMEOUT_MS} (10 minutes). On timeout the whole process group is stopped.
- Output longer than {MAX_OUTPUT_CHARS} characters is cut in the middle (its beginning and end \
are kept).
- description: a short (5-10 words) active-voice summary of what the command does, shown to \
the user.
- Prefer the dedicated tools over shell equivalents: Read instead of cat/head/tail, Edit \
instead of sed/awk, Write instead of echo redirection, Grep instead of grep/rg, Glob instead \
of find/ls.
- Independent commands may be sent as parallel tool calls; dependent ones chain with `&&`.
- run_in_background starts a long-running command (a server, a watcher) without waiting for it, \
when the session offers background tasks."""


class OutputBuffer:
    """Keeps the first and last bytes of a stream of any length."""

    def __init__(self, max_chars: int = MAX_OUTPUT_CHARS) -> None:
        self.head_limit = max_chars // 2
        self.tail_limit = max_chars - self.head_limit
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = self.head_limit - len(self.head)
        if room > 0:
            self.head += data[:room]
            data = data[room:]
        if data:
            self.tail += data
            if len(self.tail) > 2 * self.tail_limit:  # trim in batches, not per chunk
                del self.tail[: len(self.tail) - self.tail_limit]

    @property
    def truncated(self) -> bool:
        return self.total > self.head_limit + self.tail_limit

    def text(self) -> str:
        if not self.truncated:
            return (bytes(self.head) + bytes(self.tail)).decode("utf-8", errors="replace")
        tail = bytes(self.tail[-self.tail_limit :])
        dropped = self.total - len(self.head) - len(tail)
        return (
            self.head.decode("utf-8", errors="replace")
            + f"\n\n... [{dropped} bytes of output truncated] ...\n\n"
            + tail.decode("utf-8", errors="replace")
        )


class _Collector(asyncio.Protocol):
    def __init__(self, buffer: OutputBuffer, closed: asyncio.Future[None]) -> None:
        self.buffer = buffer
        self.closed = closed

    def data_received(self, data: bytes) -> None:
        self.buffer.feed(data)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


@dataclass
class CommandResult:
    output: str
    exit_code: int | None
    timed_out: bool
    truncated: bool


async def run_command(
    command: str,
    cwd: Path,
    timeout_s: float,
    max_chars: int = MAX_OUTPUT_CHARS,
    sandbox: Confinement | None = None,
) -> CommandResult:
    """Run ``bash -c command``; the process group is killed on timeout and on cancellation."""
    loop = asyncio.get_running_loop()
    buffer = OutputBuffer(max_chars)
    read_fd, write_fd = os.pipe()
    try:
        process = await spawn_bash(command, cwd, output=write_fd, sandbox=sandbox)
    except BaseException:
        os.close(read_fd)
        raise
    finally:
        os.close(write_fd)
    closed: asyncio.Future[None] = loop.create_future()
    transport, _ = await loop.connect_read_pipe(
        lambda: _Collector(buffer, closed), os.fdopen(read_fd, "rb", buffering=0)
    )
    timed_out = False
    try:
        try:
            await asyncio.wait_for(process.wait(), timeout_s)
        except TimeoutError:
            timed_out = True
            await stop_group(process)
        except BaseException:  # cancelled: stop the command, then let the cancel go on
            await stop_group(process)
            raise
        # A background child may still hold the pipe: its later output is not ours.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(closed), DRAIN_GRACE_S)
    finally:
        transport.close()
    return CommandResult(buffer.text(), process.returncode, timed_out, buffer.truncated)


def _label(command: str, description: str | None) -> str:
    if description:
        return description
    first = command.strip().splitlines()[0] if command.strip() else command
    return first if len(first) <= 60 else first[:57] + "..."


PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "description": "The command to execute"},
        "timeout": {
            "type": "integer",
            "description": f"Optional timeout in milliseconds (max {MAX_TIMEOUT_MS})",
        },
        "description": {
            "type": "string",
            "description": "Clear, concise description of what this command does "
            "in 5-10 words, in active voice",
        },
        "run_in_background": {
            "type": "boolean",
            "description": "Set to true to run this command in the background",
        },
    },
    "required": ["command"],
    "additionalProperties": False,
}


class BashTool:
    """Runs a shell command (see ``DESCRIPTION``)."""

    name = WaveTool.BASH.value
    description = DESCRIPTION
    effect: Effect = "execute"
    kind: ToolKind = "execute"
    key_argument: str | None = "command"
    concurrency_safe = False
    parameters = PARAMETERS

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        command = require_str(args, "command", allow_empty=False)
        timeout_ms = optional_int(args, "timeout", minimum=1)
        description = optional_str(args, "description")
        background = optional_bool(args, "run_in_background")
        if not ctx.cwd.is_dir():
            raise ToolError(f"The working directory {ctx.cwd} does not exist")
        if background:
            return await self._start_background(command, description, ctx)
        timeout_ms = min(timeout_ms or DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS)
        result = await run_command(command, ctx.cwd, timeout_ms / 1000, sandbox=ctx.sandbox)
        label = _label(command, description)
        content = result.output.rstrip("\n") or "(no output)"
        if ctx.sandbox is not None and result.exit_code:
            hint = ctx.sandbox.refusal_hint(result.output)
            if hint:
                content += "\n\n" + hint
        if result.timed_out:
            seconds = f"{timeout_ms / 1000:g}"
            content += (
                f"\n\nCommand timed out after {seconds} s and was stopped "
                "(its whole process group was killed)."
            )
            short = f"{label}: timed out after {seconds} s"
        else:
            if result.exit_code:
                content += f"\n\nExit code {result.exit_code}"
            short = f"{label}: exit {result.exit_code}"
        return ToolResult(
            content + _sandbox_note(ctx),
            is_error=result.timed_out or result.exit_code != 0,
            short_result=short,
            details={
                "exitCode": result.exit_code,
                "timedOut": result.timed_out,
                "truncated": result.truncated,
            },
        )

    async def _start_background(
        self, command: str, description: str | None, ctx: ToolContext
    ) -> ToolResult:
        shells = ctx.services.background
        if shells is None:
            raise ToolError(
                "run_in_background is not available yet in this session; run the command "
                "without it (with a timeout), or start it detached yourself"
            )
        task_id = await shells.start_shell(
            command, ctx.cwd, description or "", tool_call_id=ctx.tool_call_id, sandbox=ctx.sandbox
        )
        output_file = shells.output_file(task_id)
        return ToolResult(
            f"Command started in the background with ID: {task_id}. "
            f"Output is being written to: {output_file}. "
            "Read its output with TaskOutput and stop it with TaskStop; you will get a "
            "<task-notification> when it ends." + _sandbox_note(ctx),
            short_result=f"{_label(command, description)}: started in background ({task_id})",
            details={"taskId": task_id, "outputFile": str(output_file)},
        )


def _sandbox_note(ctx: ToolContext) -> str:
    """The agent's "commands are NOT sandboxed" note, in its first command's result only."""
    note = ctx.sandbox.take_note() if ctx.sandbox is not None else ""
    return "\n\n" + note if note else ""
