"""``Grep``: search file contents with a regular expression (ripgrep or pure Python)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from wave_ls.runtime.core import Effect, ToolContext, ToolError, ToolKind, ToolResult
from wave_ls.runtime.tool_names import WaveTool
from wave_ls.runtime.tools.args import (
    optional_bool,
    optional_choice,
    optional_int,
    optional_str,
    require_str,
)
from wave_ls.runtime.tools.grep_engine import (
    FileHits,
    GrepQuery,
    OutputMode,
    is_binary_file,
    search_python,
)
from wave_ls.runtime.tools.paths import display_paths, missing_file_message
from wave_ls.runtime.tools.ripgrep import find_ripgrep, search_ripgrep

MAX_LINE_CHARS = 500
MAX_OUTPUT_CHARS = 30_000
MODES: tuple[OutputMode, ...] = ("files_with_matches", "content", "count")

DESCRIPTION = """\
A powerful search tool built on ripgrep.

Usage:
- ALWAYS use Grep for search tasks. NEVER run `grep` or `rg` through Bash.
- Supports full regex syntax (e.g. "log.*Error", "function\\s+\\w+").
- Filter files with glob (e.g. "*.js", "**/*.{ts,tsx}"; several separated by spaces, \
"!pattern" excludes) or type (e.g. "js", "py", "rust": ripgrep's file types, more efficient \
than glob for standard types).
- output_mode: "files_with_matches" (default) lists file paths; "content" shows matching \
lines (supports -A/-B/-C context, -n line numbers (default true), head_limit); "count" shows \
match counts per file.
- Pattern syntax is ripgrep's, not grep's: literal braces need escaping (use `interface\\{\\}` \
to find `interface{}` in Go code).
- By default patterns match within single lines. For patterns that span lines, like \
`struct \\{[\\s\\S]*?field`, set multiline: true.
- Files ignored by .gitignore and hidden files/directories are skipped unless path names \
them (or glob selects them). Binary files are skipped.
- Paths in the results are relative to the working directory. Results are sorted by path.
- head_limit keeps the first N lines/entries of the output (like `| head -N`); offset skips \
the first N."""


def _truncate(text: str) -> str:
    return text if len(text) <= MAX_LINE_CHARS else text[:MAX_LINE_CHARS] + " [... truncated]"


def format_content(
    hits: list[FileHits], show: list[str], numbers: bool, context: bool
) -> list[str]:
    """rg's ``path:12:text`` / ``path-13-text`` lines, ``--`` between separate groups."""
    out: list[str] = []
    for found, path in zip(hits, show, strict=True):
        previous = None
        for number in sorted(found.lines):
            is_match, text = found.lines[number]
            if context and out and (previous is None or number != previous + 1):
                out.append("--")
            previous = number
            sep = ":" if is_match else "-"
            where = f"{path}{sep}{number}{sep}" if numbers else f"{path}{sep}"
            out.append(where + _truncate(text))
    return out


def _page(entries: list[str], offset: int, head_limit: int | None) -> tuple[list[str], str]:
    end = len(entries) if head_limit is None else offset + head_limit
    page = entries[offset:end]
    note = ""
    if offset or end < len(entries):
        note = (
            f"\n\n(Showing entries {offset + 1}-{offset + len(page)} of {len(entries)}. "
            "Use offset/head_limit to see others, or narrow the search.)"
        )
    return page, note


def _cap(text: str) -> str:
    if len(text) <= MAX_OUTPUT_CHARS:
        return text
    cut = text.rfind("\n", 0, MAX_OUTPUT_CHARS)
    return (
        text[: cut if cut > 0 else MAX_OUTPUT_CHARS]
        + f"\n\n(Output truncated at {MAX_OUTPUT_CHARS} characters. Use head_limit/offset, "
        "a narrower path, glob or type, or output_mode files_with_matches.)"
    )


PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pattern": {
            "type": "string",
            "description": "The regular expression pattern to search for in file contents",
        },
        "path": {
            "type": "string",
            "description": "File or directory to search in. Defaults to the working directory",
        },
        "glob": {
            "type": "string",
            "description": 'Glob pattern to filter files (e.g. "*.js", "*.{ts,tsx}")',
        },
        "type": {
            "type": "string",
            "description": "File type to search (e.g. js, py, rust, go, java)",
        },
        "output_mode": {
            "type": "string",
            "enum": list(MODES),
            "description": 'Output mode: "content" shows matching lines, '
            '"files_with_matches" shows file paths (default), "count" shows match counts',
        },
        "-i": {"type": "boolean", "description": "Case insensitive search"},
        "-n": {
            "type": "boolean",
            "description": 'Show line numbers (output_mode "content" only; default true)',
        },
        "-A": {
            "type": "integer",
            "description": 'Lines to show after each match (output_mode "content" only)',
        },
        "-B": {
            "type": "integer",
            "description": 'Lines to show before each match (output_mode "content" only)',
        },
        "-C": {
            "type": "integer",
            "description": 'Lines to show before and after each match (output_mode "content" only)',
        },
        "head_limit": {
            "type": "integer",
            "description": "Limit output to the first N lines/entries (like | head -N)",
        },
        "offset": {
            "type": "integer",
            "description": "Skip the first N lines/entries before applying head_limit",
        },
        "multiline": {
            "type": "boolean",
            "description": "Enable multiline mode where . matches newlines and patterns "
            "can span lines. Default: false",
        },
    },
    "required": ["pattern"],
    "additionalProperties": False,
}


class GrepTool:
    """Searches file contents (see ``DESCRIPTION``).

    ``use_ripgrep``: None picks ``rg`` when it is on PATH; False forces the pure-Python
    search; True requires ``rg``.
    """

    name = WaveTool.GREP.value
    description = DESCRIPTION
    effect: Effect = "read"
    kind: ToolKind = "search"
    key_argument: str | None = "pattern"
    concurrency_safe = True
    parameters = PARAMETERS

    def __init__(self, use_ripgrep: bool | None = None) -> None:
        self.use_ripgrep = use_ripgrep

    def _ripgrep(self) -> str | None:
        if self.use_ripgrep is False:
            return None
        rg = find_ripgrep()
        if rg is None and self.use_ripgrep:
            raise ToolError("ripgrep (rg) is not installed")
        return rg

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        pattern = require_str(args, "pattern", allow_empty=False)
        path_arg = optional_str(args, "path")
        mode: OutputMode = optional_choice(args, "output_mode", MODES) or "files_with_matches"  # type: ignore[assignment]
        context = optional_int(args, "-C", minimum=0) or 0
        after = optional_int(args, "-A", minimum=0)
        before = optional_int(args, "-B", minimum=0)
        head_limit = optional_int(args, "head_limit", minimum=0)
        offset = optional_int(args, "offset", minimum=0) or 0
        glob = optional_str(args, "glob")
        query = GrepQuery(
            pattern=pattern,
            root=ctx.resolve(path_arg) if path_arg else ctx.cwd,
            mode=mode,
            ignore_case=optional_bool(args, "-i"),
            multiline=optional_bool(args, "multiline"),
            before=(context if before is None else before) if mode == "content" else 0,
            after=(context if after is None else after) if mode == "content" else 0,
            globs=glob.split() if glob else [],
            file_type=optional_str(args, "type"),
        )
        numbers = optional_bool(args, "-n", default=True)
        if not query.root.exists():
            raise ToolError(missing_file_message(query.root, ctx.cwd).replace("File", "Path", 1))
        rg = self._ripgrep()
        if query.root.is_file() and is_binary_file(query.root):
            hits: list[FileHits] = []
        elif rg:
            hits = await search_ripgrep(query, rg)
        else:
            hits = await asyncio.to_thread(search_python, query)
        content, short = self._format(hits, query, numbers, offset, head_limit, ctx.cwd)
        return ToolResult(
            content,
            short_result=short,
            details={"engine": "ripgrep" if rg else "python", "files": len(hits)},
        )

    def _format(
        self,
        hits: list[FileHits],
        query: GrepQuery,
        numbers: bool,
        offset: int,
        head_limit: int | None,
        cwd: Path,
    ) -> tuple[str, str]:
        base = query.root.parent if query.root.is_file() else query.root
        show = display_paths(base, [found.path for found in hits], cwd)
        label = f"Grep {query.pattern!r}"
        if query.mode == "files_with_matches":
            if not hits:
                return "No files found", f"{label}: no files"
            page, note = _page(show, offset, head_limit)
            plural = "file" if len(hits) == 1 else "files"
            text = f"Found {len(hits)} {plural}\n" + "\n".join(page) + note
            return _cap(text), f"{label}: {len(hits)} {plural}"
        if not hits:
            return "No matches found", f"{label}: no matches"
        if query.mode == "count":
            total = sum(found.count for found in hits)
            entries = [f"{path}:{found.count}" for found, path in zip(hits, show, strict=True)]
            page, note = _page(entries, offset, head_limit)
            text = (
                "\n".join(page)
                + f"\n\nFound {total} total {'match' if total == 1 else 'matches'} across "
                f"{len(hits)} {'file' if len(hits) == 1 else 'files'}." + note
            )
            return _cap(text), f"{label}: {total} matches in {len(hits)} files"
        lines = format_content(hits, show, numbers, bool(query.before or query.after))
        page, note = _page(lines, offset, head_limit)
        matches = sum(found.count for found in hits)
        return (
            _cap("\n".join(page) + note),
            f"{label}: {matches} matching lines in {len(hits)} files",
        )
