"""Git worktrees for isolated subagents: one small interface, two backends, one facade.

``WorktreeManager`` is what the runtime uses; ``DulwichBackend`` (pure Python) and
``GitCliBackend`` (the ``git`` command) implement ``WorktreeBackend``. See
``docs/worktrees.md`` for the measured choice of backend per operation.

On top of it, the isolation lifecycle (``isolation.py``: create / finish a subagent's or a
session's worktree, with hooks, settings, copied local files and a registry of who made
what), ``SessionWorktrees`` (a session's EnterWorktree/ExitWorktree state) and
``list_wave_worktrees`` (``wave/worktrees/list``).
"""

from typing import TYPE_CHECKING, Any

from wave_ls.worktrees.git_cli import GitCliBackend
from wave_ls.worktrees.isolation import (
    IsolatedWorktree,
    IsolationError,
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
    WorktreeBackend,
    WorktreeError,
    WorktreeInfo,
)
from wave_ls.worktrees.session_switch import SessionWorktrees
from wave_ls.worktrees.settings import HookCommand, WorktreeSettings, load_worktree_settings

if TYPE_CHECKING:
    from wave_ls.worktrees.dulwich_backend import DulwichBackend


def __getattr__(name: str) -> Any:
    # dulwich costs ~25 ms to import; the runtime needs it only at its first worktree.
    if name == "DulwichBackend":
        from wave_ls.worktrees.dulwich_backend import DulwichBackend

        return DulwichBackend
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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
