"""Git worktrees for isolated subagents: one small interface, two backends, one facade.

``WorktreeManager`` is what the runtime uses; ``DulwichBackend`` (pure Python) and
``GitCliBackend`` (the ``git`` command) implement ``WorktreeBackend``. See
``docs/worktrees.md`` for the measured choice of backend per operation.
"""

from wave_ls.worktrees.dulwich_backend import DulwichBackend
from wave_ls.worktrees.git_cli import GitCliBackend
from wave_ls.worktrees.layout import worktree_location
from wave_ls.worktrees.manager import WorktreeManager
from wave_ls.worktrees.model import (
    DEFAULT_EXCLUDE,
    Changes,
    WorktreeBackend,
    WorktreeError,
    WorktreeInfo,
)

__all__ = [
    "DEFAULT_EXCLUDE",
    "Changes",
    "DulwichBackend",
    "GitCliBackend",
    "WorktreeBackend",
    "WorktreeError",
    "WorktreeInfo",
    "WorktreeManager",
    "worktree_location",
]
