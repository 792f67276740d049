"""Git worktrees for isolated subagents: one small interface, two backends, one facade.

``WorktreeManager`` is what the runtime uses; ``DulwichBackend`` (pure Python) and
``GitCliBackend`` (the ``git`` command) implement ``WorktreeBackend``. See
``docs/worktrees.md`` for the measured choice of backend per operation.

On top of it, the isolation lifecycle (``isolation.py``: create / finish a subagent's or a
session's worktree, with hooks, settings, copied local files and a registry of who made
what), ``SessionWorktrees`` (a session's EnterWorktree/ExitWorktree state) and
``list_wave_worktrees`` (``wave/worktrees/list``).
"""

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wave_ls.worktrees.dulwich_backend import DulwichBackend
    from wave_ls.worktrees.git_cli import GitCliBackend
    from wave_ls.worktrees.isolation import (
        IsolatedWorktree,
        WorktreeOutcome,
        create_isolated_worktree,
        enter_session_worktree,
        exit_session_worktree,
        finish_isolated_worktree,
    )
    from wave_ls.worktrees.layout import worktree_location
    from wave_ls.worktrees.listing import list_wave_worktrees
    from wave_ls.worktrees.manager import WorktreeManager
    from wave_ls.worktrees.model import (
        DEFAULT_EXCLUDE,
        Changes,
        IsolationError,
        WorktreeBackend,
        WorktreeError,
        WorktreeInfo,
    )
    from wave_ls.worktrees.session_switch import SessionWorktrees
    from wave_ls.worktrees.settings import HookCommand, WorktreeSettings, load_worktree_settings

# Where each name of the facade lives. Imported on first use: the whole package costs ~16 ms
# (dulwich ~25 ms more), and `wave-ls run` or a session that never isolates needs none of it.
_HOMES = {
    "DulwichBackend": "dulwich_backend",
    "GitCliBackend": "git_cli",
    "IsolatedWorktree": "isolation",
    "IsolationError": "model",
    "WorktreeOutcome": "isolation",
    "create_isolated_worktree": "isolation",
    "enter_session_worktree": "isolation",
    "exit_session_worktree": "isolation",
    "finish_isolated_worktree": "isolation",
    "worktree_location": "layout",
    "list_wave_worktrees": "listing",
    "WorktreeManager": "manager",
    "DEFAULT_EXCLUDE": "model",
    "Changes": "model",
    "WorktreeBackend": "model",
    "WorktreeError": "model",
    "WorktreeInfo": "model",
    "SessionWorktrees": "session_switch",
    "HookCommand": "settings",
    "WorktreeSettings": "settings",
    "load_worktree_settings": "settings",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f"{__name__}.{home}"), name)


__all__ = [
    "DEFAULT_EXCLUDE",
    "Changes",
    "DulwichBackend",
    "GitCliBackend",
    "HookCommand",
    "IsolatedWorktree",
    "IsolationError",
    "SessionWorktrees",
    "WorktreeBackend",
    "WorktreeError",
    "WorktreeInfo",
    "WorktreeManager",
    "WorktreeOutcome",
    "WorktreeSettings",
    "create_isolated_worktree",
    "enter_session_worktree",
    "exit_session_worktree",
    "finish_isolated_worktree",
    "list_wave_worktrees",
    "load_worktree_settings",
    "worktree_location",
]
