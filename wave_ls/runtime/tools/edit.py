"""``Edit``: replace an exact string in a file (inside the worktree when there is one)."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wave_ls.runtime.core import Effect, ToolContext, ToolError, ToolKind, ToolResult
from wave_ls.runtime.text import readable
from wave_ls.runtime.tool_names import WaveTool
from wave_ls.runtime.tools.args import optional_bool, require_str
from wave_ls.runtime.tools.paths import check_writable, display_path, missing_file_message
from wave_ls.runtime.tools.preview import change_preview
from wave_ls.runtime.tools.read import format_numbered
from wave_ls.runtime.tools.write import count_lines, write_text

SNIPPET_CONTEXT = 4

DESCRIPTION = """\
Performs an exact string replacement in a file.

Usage:
- Read the file before editing it, so that old_string is copied exactly from the file.
- When copying text from Read output, keep the indentation (tabs/spaces) exactly as it \
appears AFTER the line-number prefix (spaces, the line number, a tab). Never include any part \
of the line-number prefix in old_string or new_string.
- The edit fails if old_string is not found, or if it occurs more than once: then give more \
surrounding context to make it unique, or set replace_all to change every occurrence (useful \
for renaming a variable).
- An empty old_string creates a new file (or fills an empty one) with new_string.
- In an isolated worktree, edits outside the worktree are refused."""


@dataclass
class EditOutcome:
    text: str  # the whole new file content
    replacements: int
    first_line: int  # 1-based line of the first replacement in the new text


def apply_edit(text: str, old: str, new: str, replace_all: bool, shown: str) -> EditOutcome:
    """The pure edit: exact match, unique unless ``replace_all``."""
    count = text.count(old)
    if count == 0:
        raise ToolError(
            f"old_string not found in {shown}. Read the file and copy the text exactly, "
            "including whitespace."
        )
    if count > 1 and not replace_all:
        raise ToolError(
            f"old_string occurs {count} times in {shown}; add context to make it unique "
            "or set replace_all"
        )
    first_line = text[: text.index(old)].count("\n") + 1
    if replace_all:
        return EditOutcome(text.replace(old, new), count, first_line)
    return EditOutcome(text.replace(old, new, 1), 1, first_line)


def _snippet(text: str, first_line: int, new: str) -> str:
    lines = text.split("\n")
    start = max(first_line - SNIPPET_CONTEXT, 1)
    end = min(first_line + max(count_lines(new), 1) - 1 + SNIPPET_CONTEXT, len(lines))
    return format_numbered(lines[start - 1 : end], start)


def plan_edit(
    path: Path, old: str, new: str, replace_all: bool, shown: str, cwd: Path
) -> tuple[str | None, EditOutcome]:
    """The file's text now (None when it does not exist) and what the edit makes of it,
    without writing anything; ``ToolError`` when the edit cannot apply."""
    if not path.exists():
        if old == "":
            return None, EditOutcome(new, 1, 1)
        raise ToolError(missing_file_message(path, cwd))
    if path.is_dir():
        raise ToolError(f"{path} is a directory, not a file")
    data = path.read_bytes()
    if b"\0" in data[:8192]:
        raise ToolError(f"Cannot edit {path}: it is a binary file")
    # Bytes that are not UTF-8 survive the round trip unchanged (surrogateescape).
    text = data.decode("utf-8", "surrogateescape")
    if old == "":
        if text.strip():
            raise ToolError(
                f"old_string is empty but {shown} already has content; give the text to "
                "replace (use Write to replace the whole file)"
            )
        return text, EditOutcome(new, 1, 1)
    if old not in text and "\r\n" in text and "\r\n" not in old:
        # The model sees "\n" line ends: match and write in the file's own style, and touch
        # nothing else (a file mixing both keeps its other line ends).
        old, new = _crlf(old), _crlf(new)
    try:
        outcome = apply_edit(text, old, new, replace_all, shown)
    except ToolError as error:
        if "\ufffd" in old and _undecodable(text):
            raise ToolError(
                f"{error} {shown} holds bytes that are not UTF-8, which Read shows as "
                "\ufffd; old_string cannot match them. Choose an old_string next to them "
                "instead (those bytes are kept as they are)."
            ) from None
        raise
    return text, outcome


def _crlf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


def _undecodable(text: str) -> bool:
    return any("\udc80" <= char <= "\udcff" for char in text)


def _edit_file(
    path: Path, old: str, new: str, replace_all: bool, shown: str, cwd: Path
) -> EditOutcome:
    _before, outcome = plan_edit(path, old, new, replace_all, shown, cwd)
    write_text(path, outcome.text)
    return outcome


def _edit_args(args: dict[str, Any], ctx: ToolContext) -> tuple[Path, Path, str, str, bool]:
    """The checked arguments: the path as given (resolved), the file to write, old, new and
    replace_all."""
    file_path = require_str(args, "file_path", allow_empty=False)
    old = require_str(args, "old_string")
    new = require_str(args, "new_string")
    replace_all = optional_bool(args, "replace_all")
    if old == new:
        raise ToolError("old_string and new_string are identical; there is nothing to change")
    for name, value in (("old_string", old), ("new_string", new)):
        if readable(value) != value:
            raise ToolError(
                f"{name} holds half of a UTF-16 surrogate pair (an unpaired \\uD800-"
                "\\uDFFF escape), which no UTF-8 file can hold; remove it"
            )
    path = ctx.resolve(file_path)
    return path, check_writable(path, ctx), old, new, replace_all


PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "file_path": {"type": "string", "description": "The path of the file to modify"},
        "old_string": {"type": "string", "description": "The text to replace"},
        "new_string": {
            "type": "string",
            "description": "The text to replace it with (must be different from old_string)",
        },
        "replace_all": {
            "type": "boolean",
            "default": False,
            "description": "Replace all occurrences of old_string (default false)",
        },
    },
    "required": ["file_path", "old_string", "new_string"],
    "additionalProperties": False,
}


class EditTool:
    """Replaces text in a file (see ``DESCRIPTION``)."""

    name = WaveTool.EDIT.value
    description = DESCRIPTION
    effect: Effect = "edit"
    kind: ToolKind = "edit"
    key_argument: str | None = "file_path"
    concurrency_safe = False
    parameters = PARAMETERS

    async def preview(self, args: dict[str, Any], ctx: ToolContext) -> dict[str, str]:
        path, target, old, new, replace_all = _edit_args(args, ctx)
        shown = display_path(path, ctx.cwd)
        before, outcome = await asyncio.to_thread(
            plan_edit, target, old, new, replace_all, shown, ctx.cwd
        )
        return change_preview(path, before, outcome.text)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path, target, old, new, replace_all = _edit_args(args, ctx)
        shown = display_path(path, ctx.cwd)
        outcome = await asyncio.to_thread(_edit_file, target, old, new, replace_all, shown, ctx.cwd)
        added = count_lines(new) * outcome.replacements
        removed = count_lines(old) * outcome.replacements
        plural = "s" if outcome.replacements != 1 else ""
        as_read = outcome.text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
        snippet = _snippet(as_read.replace("\r\n", "\n"), outcome.first_line, new)
        content = (
            f"Edited {path}: {outcome.replacements} replacement{plural}. "
            f"The edited part now reads (cat -n):\n{snippet}"
        )
        return ToolResult(
            content,
            short_result=f"Edited {shown} (+{added} -{removed})",
            details={"path": str(path), "replacements": outcome.replacements},
        )
