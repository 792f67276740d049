"""``Glob``: find files by name pattern, newest first."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path, PurePosixPath
from typing import Any

from wave_ls.runtime.core import Effect, ToolContext, ToolError, ToolKind, ToolResult
from wave_ls.runtime.tool_names import WaveTool
from wave_ls.runtime.tools.args import optional_str, require_str
from wave_ls.runtime.tools.paths import display_paths
from wave_ls.runtime.walk import PatternSet, WalkOptions, expand_braces, walk_files

MAX_RESULTS = 1000
GLOB_CHARS = frozenset("*?[{")

DESCRIPTION = f"""\
Fast file pattern matching that works with any codebase size.

Usage:
- Supports glob patterns like "**/*.js" or "src/**/*.ts": `*` and `?` stay within one \
directory level, `**` spans any number of levels, `{{a,b}}` gives alternatives, `[abc]` a \
character class. "*.py" matches only at the top of path; use "**/*.py" for every level.
- Returns matching file paths (relative to the working directory) sorted by modification \
time, newest first; at most {MAX_RESULTS}.
- Files ignored by .gitignore and hidden files/directories are skipped, unless the pattern \
names them (a literal directory such as "node_modules/pkg/*.json", or a part starting with \
a dot such as "**/.env*").
- Use this tool when you need to find files by name patterns. For an open-ended search that \
may need several rounds of globbing and grepping, delegate to an Agent instead."""


def split_pattern(pattern: str) -> tuple[str, str]:
    """The literal directory prefix of a glob and the rest: ``src/**/*.ts`` ->
    ``("src", "**/*.ts")``."""
    parts = PurePosixPath(pattern).parts if pattern else ()
    literal: list[str] = []
    for index, part in enumerate(parts):
        if GLOB_CHARS & set(part):
            return "/".join(literal).replace("//", "/"), "/".join(parts[index:])
        literal.append(part)
    return "/".join(literal).replace("//", "/"), ""


def _mentions_hidden(rest: str) -> bool:
    return any(part.startswith(".") and part not in (".", "..") for part in rest.split("/"))


def find_files(base: Path, rest: str) -> list[str]:
    """Files under ``base`` whose relative path matches the glob ``rest`` (relative paths)."""
    expanded = expand_braces(rest)
    patterns = PatternSet("/" + item.lstrip("/") for item in expanded)
    depth = None if "**" in rest else max(item.count("/") + 1 for item in expanded)
    options = WalkOptions(hidden=_mentions_hidden(rest), follow_file_symlinks=True, max_depth=depth)
    return [rel for rel in walk_files(base, options) if patterns.match(rel, False)]


def _newest_first(base: Path, paths: list[str]) -> list[str]:
    def key(rel: str) -> tuple[float, str]:
        try:
            return (-os.stat(os.path.join(base, rel)).st_mtime, rel)
        except OSError:
            return (0.0, rel)

    return sorted(paths, key=key)


PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pattern": {
            "type": "string",
            "description": "The glob pattern to match files against",
        },
        "path": {
            "type": "string",
            "description": "The directory to search in. Defaults to the working "
            "directory. Omit it for the default (do not pass null or 'undefined')",
        },
    },
    "required": ["pattern"],
    "additionalProperties": False,
}


class GlobTool:
    """Finds files by glob pattern (see ``DESCRIPTION``)."""

    name = WaveTool.GLOB.value
    description = DESCRIPTION
    effect: Effect = "read"
    kind: ToolKind = "search"
    key_argument: str | None = "pattern"
    concurrency_safe = True
    parameters = PARAMETERS

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        pattern = require_str(args, "pattern", allow_empty=False)
        path_arg = optional_str(args, "path")
        root = ctx.resolve(path_arg) if path_arg and path_arg != "undefined" else ctx.cwd
        if not root.exists():
            raise ToolError(f"Directory does not exist: {root}")
        if not root.is_dir():
            raise ToolError(f"Path is not a directory: {root}")
        literal, rest = split_pattern(pattern.removeprefix("./"))
        base = root / literal if literal else root  # an absolute literal replaces root
        matches = await asyncio.to_thread(self._find, base, rest)
        label = f"Glob {pattern!r}"
        if not matches:
            return ToolResult("No files found", short_result=f"{label}: no files")
        shown = display_paths(base, matches[:MAX_RESULTS], ctx.cwd)
        text = "\n".join(shown)
        if len(matches) > MAX_RESULTS:
            text += (
                f"\n\n(Showing the {MAX_RESULTS} most recently modified of {len(matches)} "
                "files. Use a more specific pattern or path.)"
            )
        plural = "file" if len(matches) == 1 else "files"
        return ToolResult(
            text,
            short_result=f"{label}: {len(matches)} {plural}",
            details={"files": len(matches)},
        )

    def _find(self, base: Path, rest: str) -> list[str]:
        if not rest:  # no wildcard: the path itself
            return [""] if base.is_file() else []  # "" = base itself
        if not base.is_dir():
            return []
        return _newest_first(base, find_files(base, rest))
