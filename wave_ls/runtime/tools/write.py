"""``Write``: create or overwrite a file (inside the worktree when there is one)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import stat
from pathlib import Path
from typing import Any

from wave_ls.runtime.core import Effect, ToolContext, ToolError, ToolKind, ToolResult
from wave_ls.runtime.tool_names import WaveTool
from wave_ls.runtime.tools.args import require_str
from wave_ls.runtime.tools.paths import check_writable, display_path
from wave_ls.runtime.tools.preview import change_preview

DESCRIPTION = """\
Writes a file to the local filesystem, creating missing parent directories.

Usage:
- file_path may be absolute or relative to the working directory.
- This tool overwrites an existing file completely. To change part of an existing file, \
prefer Edit, which sends only the change; read the file first.
- content is written exactly as given (include the final newline if the file should end with one).
- Never create documentation files (*.md, README) unless the user asks for them.
- In an isolated worktree, writes outside the worktree are refused."""


def count_lines(text: str) -> int:
    """Lines as an editor counts them (a last line without newline still counts)."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def write_text(path: Path, content: str) -> bool:
    """Write ``content`` as UTF-8 (no newline translation); True when the file is new.

    Undecodable bytes read with ``surrogateescape`` are written back as they were; other
    lone surrogates cannot be written and are refused.
    """
    try:
        data = content.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError as error:
        raise ToolError(
            f"Cannot write {path}: the text holds {error.object[error.start : error.end]!r}, "
            "half of a UTF-16 surrogate pair, which no UTF-8 file can hold; remove it"
        ) from None
    return replace_file(path, data)


def replace_file(path: Path, data: bytes) -> bool:
    """Give ``path`` the content ``data`` atomically; True when the file is new.

    The bytes go to a temporary file beside the target, which then replaces it with one
    rename: a reader sees the old file or the new one, never half of one, and a crash
    leaves the old file. The old file's mode (and owner, where allowed) is kept. A symbolic
    link is followed (its target is replaced); a hard link is not written through: the
    other names keep the old content.
    """
    if path.is_dir():
        raise ToolError(f"{path} is a directory; give the path of a file")
    target = Path(os.path.realpath(path)) if path.is_symlink() else path
    try:
        try:
            old: os.stat_result | None = target.stat()
        except FileNotFoundError:
            old = None
        target.parent.mkdir(parents=True, exist_ok=True)
        temporary = target.with_name(f".{target.name}.wave-{secrets.token_hex(4)}.tmp")
        # A new file gets 0o666 less the umask, as with open(); an old file its own mode.
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if old else 0o666)
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                if old is not None:
                    os.fchmod(handle.fileno(), stat.S_IMODE(old.st_mode))
                    with contextlib.suppress(PermissionError):
                        os.fchown(handle.fileno(), old.st_uid, old.st_gid)
                os.fsync(handle.fileno())
            os.replace(temporary, target)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
    except OSError as error:
        raise ToolError(f"Cannot write {path}: {error.strerror or error}") from error
    return old is None


def read_current(path: Path) -> str | None:
    """The file's text as a preview shows it (None when it does not exist)."""
    if path.is_dir():
        raise ToolError(f"{path} is a directory; give the path of a file")
    if path.exists() and not path.is_file():  # a FIFO or a device: reading it may never end
        raise ToolError(f"{path} is not a regular file; give the path of a file")
    try:
        return path.read_bytes().decode("utf-8", errors="replace")
    except FileNotFoundError:
        return None
    except OSError as error:
        raise ToolError(f"Cannot read {path}: {error.strerror or error}") from error


def _write_args(args: dict[str, Any], ctx: ToolContext) -> tuple[Path, Path, str]:
    """The checked arguments: the path as given (resolved), the file to write, the content."""
    file_path = require_str(args, "file_path", allow_empty=False)
    content = require_str(args, "content")
    path = ctx.resolve(file_path)
    return path, check_writable(path, ctx), content


PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "file_path": {"type": "string", "description": "The path of the file to write"},
        "content": {"type": "string", "description": "The content to write to the file"},
    },
    "required": ["file_path", "content"],
    "additionalProperties": False,
}


class WriteTool:
    """Creates or overwrites a file (see ``DESCRIPTION``)."""

    name = WaveTool.WRITE.value
    description = DESCRIPTION
    effect: Effect = "edit"
    kind: ToolKind = "edit"
    key_argument: str | None = "file_path"
    concurrency_safe = False
    parameters = PARAMETERS

    async def preview(self, args: dict[str, Any], ctx: ToolContext) -> dict[str, str]:
        path, target, content = _write_args(args, ctx)
        before = await asyncio.to_thread(read_current, target)
        return change_preview(path, before, content)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        path, target, content = _write_args(args, ctx)
        created = await asyncio.to_thread(write_text, target, content)
        lines = count_lines(content)
        shown = display_path(path, ctx.cwd)
        verb = "Created" if created else "Updated"
        return ToolResult(
            f"{verb} {path} ({lines} lines).",
            short_result=f"{verb} {shown} ({lines} lines)",
            details={"path": str(path), "created": created, "lines": lines},
        )
