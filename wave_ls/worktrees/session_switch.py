"""One session's worktree state: what ``EnterWorktree``/``ExitWorktree`` and ``-w`` switch.

Each session owns one ``SessionWorktrees``; nothing is process-wide (no ``chdir``), so
concurrent sessions in one server never see each other's worktree. ``on_change(cwd,
write_root)`` tells the session where its tools now run and which tree they may write.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from wave_ls.worktrees import in_use
from wave_ls.worktrees.model import IsolationError

if TYPE_CHECKING:
    from wave_ls.worktrees.isolation import IsolatedWorktree, WorktreeOutcome
    from wave_ls.worktrees.manager import WorktreeManager

log = logging.getLogger(__name__)

ChangeCallback = Callable[[Path, Path | None], None]


class SessionWorktrees:
    """A session's ``WorktreeSwitch`` (``runtime/services.py``), which ``EnterWorktree`` and
    ``ExitWorktree`` (``worktrees/tools.py``) drive.

    ``original_cwd`` never changes: it is where ``exit`` returns and where ``enter`` starts
    from (so a second worktree still goes under the main repository, WT-10).
    """

    def __init__(
        self,
        original_cwd: Path,
        home: Path | None = None,
        *,
        owner: str = "",
        session_id: str = "",
        on_change: ChangeCallback | None = None,
        manager: WorktreeManager | None = None,
    ) -> None:
        self.original_cwd = Path(original_cwd)
        self.home = home
        self.owner = owner
        self.session_id = session_id
        self.on_change = on_change
        self.manager = manager
        self.current: IsolatedWorktree | None = None

    @property
    def cwd(self) -> Path:
        """Where the session's tools run now."""
        return self.current.cwd if self.current is not None else self.original_cwd

    @property
    def write_root(self) -> Path | None:
        """The only tree Write/Edit may touch while in a worktree (WT-4), else None."""
        return self.current.path if self.current is not None else None

    async def enter(self, name: str | None = None) -> IsolatedWorktree:
        """Create (or reuse) a worktree and move the session into it."""
        if self.current is not None:
            raise IsolationError(
                f"Already in a worktree session ({self.current.path}); "
                "call ExitWorktree first to leave it."
            )
        from wave_ls.worktrees.isolation import enter_session_worktree  # ~20 ms: on first use

        wt = await enter_session_worktree(
            self.original_cwd,
            name,
            self.home,
            owner=self.owner,
            session_id=self.session_id,
            manager=self.manager,
        )
        self.current = wt
        self._announce()
        return wt

    async def exit(
        self, action: Literal["keep", "remove"], discard_changes: bool = False
    ) -> WorktreeOutcome:
        """Leave the worktree (keep or remove it); a refused removal leaves the session in it."""
        if self.current is None:
            raise IsolationError("No active worktree session to exit.")
        from wave_ls.worktrees.isolation import exit_session_worktree

        outcome = await exit_session_worktree(
            self.current, action, discard_changes, manager=self.manager
        )
        self.current = None
        self._announce()
        return outcome

    def close(self) -> None:
        """The session ended: its worktree stays, and is no longer in use by it."""
        if self.current is not None:
            in_use.release(self.current.path, self.current.owner)

    def _announce(self) -> None:
        if self.on_change is not None:
            self.on_change(self.cwd, self.write_root)
