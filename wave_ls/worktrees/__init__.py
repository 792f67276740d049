"""Git worktrees for isolated subagents: one small interface, two backends, one facade.

``WorktreeManager`` is what the runtime uses; ``DulwichBackend`` (pure Python) and
``GitCliBackend`` (the ``git`` command) implement ``WorktreeBackend``. See
``docs/worktrees.md`` for the measured choice of backend per operation.

On top of it, the isolation lifecycle (``isolation.py``: create / finish a subagent's or a
session's worktree, with hooks, settings, copied local files and a registry of who made
what), ``SessionWorktrees`` (a session's EnterWorktree/ExitWorktree state) and
``list_wave_worktrees`` (``wave/worktrees/list``).
"""

from wave_ls.worktrees.dulwich_backend import DulwichBackend
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
