"""Paths as tools show them, and the worktree safety rule for writes (WT-4)."""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from wave_ls.runtime.core import ToolContext, ToolError
from wave_ls.runtime.text import readable


def display_path(path: Path | str, cwd: Path) -> str:
    """``path`` relative to ``cwd`` when it lies under it, else absolute (posix style).

    Bytes of a name that are not UTF-8 are shown as ``\\xNN`` (``text.readable``);
    ``ToolContext.resolve`` reads such a path back.
    """
    absolute = os.path.abspath(path)
    base = os.path.abspath(cwd)
    if absolute == base:
        return "."
    if absolute.startswith(base.rstrip(os.sep) + os.sep):
        return readable(Path(absolute[len(base.rstrip(os.sep)) + 1 :]).as_posix())
    return readable(Path(absolute).as_posix())


def display_paths(base: Path, relative: list[str], cwd: Path) -> list[str]:
    """``display_path(base / rel, cwd)`` for each of many paths under ``base`` ("" is
    ``base`` itself), without the per-path cost."""
    shown = display_path(base, cwd)
    prefix = "" if shown == "." else shown.rstrip("/") + "/"
    return [readable(prefix + rel) if rel else shown for rel in relative]


def is_within(path: Path, root: Path) -> bool:
    """Whether ``path`` is ``root`` or below it (both already resolved)."""
    return path == root or root in path.parents


def check_writable(path: Path, ctx: ToolContext) -> Path:
    """Refuse a write outside ``ctx.write_root``, after resolving symlinks and ``..``.

    Returns the resolved path. Applies whatever the permission mode is (WT-4).
    """
    if ctx.write_root is None:
        return path
    root = Path(os.path.realpath(ctx.write_root))
    real = Path(os.path.realpath(path))
    if not is_within(real, root):
        raise ToolError(
            f"Refusing to write {path}: it is outside this agent's worktree {root}. "
            "Write only inside the worktree."
        )
    return real


def missing_file_message(path: Path, cwd: Path) -> str:
    """ "File does not exist: <path>", with a close sibling suggested when there is one."""
    message = f"File does not exist: {path}"
    try:
        siblings = [entry.name for entry in path.parent.iterdir()]
    except OSError:
        return message
    close = difflib.get_close_matches(path.name, siblings, n=1, cutoff=0.75)
    if close:
        message += f". Did you mean {display_path(path.parent / close[0], cwd)}?"
    return message
