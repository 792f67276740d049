"""Paths as tools show them, and the worktree safety rule for writes (WT-4)."""

from __future__ import annotations

import difflib
import os
from pathlib import Path

from wave_ls.runtime.core import ToolContext, ToolError


def display_path(path: Path | str, cwd: Path) -> str:
    """``path`` relative to ``cwd`` when it lies under it, else absolute (posix style)."""
    absolute = os.path.abspath(path)
    base = os.path.abspath(cwd)
    if absolute == base:
        return "."
    if absolute.startswith(base.rstrip(os.sep) + os.sep):
        return Path(absolute[len(base.rstrip(os.sep)) + 1 :]).as_posix()
    return Path(absolute).as_posix()


def display_prefix(base: Path, cwd: Path) -> str:
    """The prefix that turns a path relative to ``base`` into its display form
    (``display_path(base / rel, cwd) == display_prefix(base, cwd) + rel``), for long lists."""
    shown = display_path(base, cwd)
    return "" if shown == "." else shown.rstrip("/") + "/"


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
