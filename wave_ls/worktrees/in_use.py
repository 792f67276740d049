"""Which worktrees are in use in this process: a live session works in it, or a subagent runs
in it. Removing such a worktree is always refused (``wave/worktrees/remove``, another
session's ``ExitWorktree``), whatever it holds.

Holders are labels (``session <id>``, ``subagent sub-1a2b3c4d (coder) of session <id>``),
each unique to one session or run; a worktree may have several (two sessions that entered
the same named worktree).
"""

from __future__ import annotations

import os
import threading
from collections import defaultdict
from pathlib import Path

_lock = threading.Lock()
_holders: defaultdict[str, list[str]] = defaultdict(list)


def _key(path: Path | str) -> str:
    return os.path.realpath(path)


def hold(path: Path | str, holder: str) -> None:
    """``holder`` works in ``path`` until it calls ``release``."""
    with _lock:
        _holders[_key(path)].append(holder)


def release(path: Path | str, holder: str) -> None:
    """``holder`` no longer works in ``path`` (a holder that holds nothing is ignored)."""
    key = _key(path)
    with _lock:
        holders = _holders.get(key)
        if holders and holder in holders:
            holders.remove(holder)
        if not holders:
            _holders.pop(key, None)


def holders(path: Path | str) -> list[str]:
    """Who works in ``path`` now, in the order they started."""
    with _lock:
        return list(_holders.get(_key(path), ()))
