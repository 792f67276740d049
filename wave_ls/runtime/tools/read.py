"""``Read``: a text file with ``cat -n`` line numbers, in windows of lines."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from wave_ls.runtime.core import Effect, ToolContext, ToolError, ToolKind, ToolResult
from wave_ls.runtime.tool_names import WaveTool
from wave_ls.runtime.tools.args import optional_int, require_str
from wave_ls.runtime.tools.paths import display_path, missing_file_message

DEFAULT_LIMIT = 2000
MAX_LINE_CHARS = 2000
# A whole-file read above this size must page with offset/limit.
MAX_WHOLE_FILE_BYTES = 256 * 1024
BINARY_SNIFF_BYTES = 8192

DESCRIPTION = f"""\
Reads a file from the local filesystem.

Usage:
- file_path may be absolute or relative to the working directory.
- By default it reads up to {DEFAULT_LIMIT} lines from the start of the file. For long files, \
pass offset (the 1-based line number to start from) and limit (how many lines) to read a part.
- Files larger than {MAX_WHOLE_FILE_BYTES // 1024} KB must be read in parts with offset/limit \
(or searched with Grep).
- Lines longer than {MAX_LINE_CHARS} characters are truncated.
- The result is numbered like `cat -n`: the line number, a tab, then the line. The numbers \
and the tab are not part of the file: never include them in Edit's old_string.
- This tool reads text files only; binary files and directories are refused (use Glob or Bash \
`ls` to list a directory).
- You can call several tools in one response: read several files at once when they may be \
useful."""


def format_numbered(lines: list[str], first_number: int) -> str:
    """``cat -n`` style: right-aligned number, a tab, the line (long lines truncated)."""
    out = []
    for number, line in enumerate(lines, start=first_number):
        if len(line) > MAX_LINE_CHARS:
            line = line[:MAX_LINE_CHARS] + "... [line truncated]"
        out.append(f"{number:6d}\t{line}")
    return "\n".join(out)


def _read_window(path: Path, offset: int, limit: int) -> tuple[list[str], int, bool]:
    """Lines ``offset..offset+limit-1`` (1-based), the lines seen, and whether more follow.

    Streams the file so a window of a huge file costs only the lines up to it.
    """
    selected: list[str] = []
    seen = 0
    more = False
    # Binary mode: lines end at "\n" only, as in Grep and Edit.
    with path.open("rb") as handle:
        for raw in handle:
            seen += 1
            if seen < offset:
                continue
            if len(selected) >= limit:
                more = True
                break
            selected.append(raw.decode("utf-8", errors="replace").rstrip("\r\n"))
    return selected, seen, more


def _is_binary(path: Path) -> bool:
    with path.open("rb") as handle:
        return b"\0" in handle.read(BINARY_SNIFF_BYTES)


PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "file_path": {"type": "string", "description": "The path of the file to read"},
        "offset": {
            "type": "integer",
            "description": "The 1-based line number to start reading from. "
            "Only provide if the file is too large to read at once",
        },
        "limit": {
            "type": "integer",
            "description": "The number of lines to read. "
            "Only provide if the file is too large to read at once",
        },
    },
    "required": ["file_path"],
    "additionalProperties": False,
}


class ReadTool:
    """Reads a text file (see ``DESCRIPTION``)."""

    name = WaveTool.READ.value
    description = DESCRIPTION
    effect: Effect = "read"
    kind: ToolKind = "read"
    key_argument: str | None = "file_path"
    concurrency_safe = True
    parameters = PARAMETERS

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        file_path = require_str(args, "file_path", allow_empty=False)
        offset = optional_int(args, "offset", minimum=0)
        limit = optional_int(args, "limit", minimum=1)
        path = ctx.resolve(file_path)
        return await asyncio.to_thread(self._read, path, offset, limit, ctx.cwd)

    def _read(self, path: Path, offset: int | None, limit: int | None, cwd: Path) -> ToolResult:
        shown = display_path(path, cwd)
        if not path.exists():
            raise ToolError(missing_file_message(path, cwd))
        if path.is_dir():
            raise ToolError(
                f"{path} is a directory, not a file. Use Glob (or Bash `ls`) to list it."
            )
        try:
            size = path.stat().st_size
            if _is_binary(path):
                raise ToolError(f"Cannot read {path}: it is a binary file (it contains NUL bytes)")
            if offset is None and limit is None and size > MAX_WHOLE_FILE_BYTES:
                raise ToolError(
                    f"File {path} is too large to read at once ({size // 1024} KB, more than "
                    f"{MAX_WHOLE_FILE_BYTES // 1024} KB). Read it in parts with offset and limit, "
                    "or search it with Grep."
                )
            start = max(offset or 1, 1)
            lines, seen, more = _read_window(path, start, limit or DEFAULT_LIMIT)
        except PermissionError as error:
            raise ToolError(f"Cannot read {path}: permission denied") from error
        except OSError as error:
            raise ToolError(f"Cannot read {path}: {error.strerror or error}") from error

        if size == 0:
            return ToolResult(
                f"The file {path} exists but is empty.", short_result=f"Read {shown} (empty)"
            )
        if not lines:
            return ToolResult(
                f"The file {path} has only {seen} lines; offset {start} is past its end.",
                short_result=f"Read {shown} (past end)",
            )
        content = format_numbered(lines, start)
        last = start + len(lines) - 1
        if more:
            content += (
                f"\n\n(Showing lines {start}-{last}. The file has more lines: "
                f"read on with offset={last + 1}.)"
            )
        span = f"{len(lines)} lines" if start == 1 else f"lines {start}-{last}"
        return ToolResult(
            content,
            short_result=f"Read {shown} ({span})",
            details={"path": str(path), "startLine": start, "lines": len(lines)},
        )
