"""Reviewing a kept worktree from the editor: what it holds, and removing it.

A worktree is named by its path, as ``wave/worktrees/list`` lists it; its record (base
commit, whether a hook made it) is found from that path, or from the project folders given
as ``places`` when the path alone does not lead there (a hook-made worktree outside the
project). Both calls block: run them in a thread from async code.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from wave_ls.worktrees import in_use, layout
from wave_ls.worktrees.inspection import dirs_for, registered_dirs
from wave_ls.worktrees.isolation import (
    IsolatedWorktree,
    default_manager,
    discard_worktree,
    plural,
    worktree_changes,
)
from wave_ls.worktrees.listing import list_wave_worktrees
from wave_ls.worktrees.manager import WorktreeManager
from wave_ls.worktrees.model import WorktreeDiff, WorktreeError


class UnknownWorktree(LookupError):
    """The path is not a worktree that ``wave/worktrees/list`` lists."""


def find_worktree(
    path: Path,
    places: Iterable[Path] = (),
    *,
    home: Path | None = None,
    manager: WorktreeManager | None = None,
) -> IsolatedWorktree:
    """The listed worktree at ``path``; ``UnknownWorktree`` when there is none. ``home``
    is where user-level settings (``WorktreeRemove`` hooks) are read from."""
    wm = manager or default_manager()
    wanted = os.path.realpath(path)
    for start in [path, *places]:
        for entry in list_wave_worktrees(start, manager=wm, count_changes=False):
            if os.path.realpath(entry["path"]) == wanted:
                return _as_worktree(entry, home)
    raise UnknownWorktree(f"{path} is not a wave worktree (see wave/worktrees/list)")


def diff_worktree(wt: IsolatedWorktree, *, manager: WorktreeManager | None = None) -> WorktreeDiff:
    """Everything ``wt`` holds against the commit it was made from (without a record of
    that commit: against its HEAD, so only what is not committed)."""
    if not os.path.lexists(wt.path / ".git"):
        raise WorktreeError(f"{wt.path} is not a git worktree: there is no diff to show")
    dirs = dirs_for(wt.path, wt.git)  # registered from the parent's side when it can be
    if dirs is None:
        raise WorktreeError(f"{wt.path} is not a git worktree: there is no diff to show")
    base = wt.base_commit or layout.read_head_in(dirs.git_dir, dirs.common)
    if not base:
        raise WorktreeError(f"{wt.path} has no commit to compare with")
    return (manager or default_manager()).diff(wt.path, base, dirs=dirs)


def remove_worktree(
    wt: IsolatedWorktree, *, force: bool = False, manager: WorktreeManager | None = None
) -> dict[str, Any]:
    """``{removed, reason?}``: removes ``wt`` and its ``worktree-<name>`` branch. Refused
    while a live session or a running subagent works in it, and, unless ``force``, while it
    holds changes or commits (or nobody can tell whether it does)."""
    users = in_use.holders(wt.path)
    if users:
        return {"removed": False, "reason": f"it is in use by {', '.join(users)}"}
    wm = manager or default_manager()
    changes = worktree_changes(wt, wm)
    if not wt.base_commit and not changes.determinable and (wt.path / ".git").exists():
        from wave_ls.worktrees.foreign_changes import changes_without_base

        changes = changes_without_base(wt, wm)  # not made by wave-ls: no base was recorded
    if changes.has_changes and not force:
        if not changes.determinable:
            lost = f"its changes cannot be determined ({changes.error})"
        else:
            held = [plural(changes.changed_files, "changed file")] if changes.changed_files else []
            if changes.commits:
                held.append(f"{plural(changes.commits, 'commit')} on {wt.branch or 'its branch'}")
            lost = f"{' and '.join(held)} would be lost"
        return {"removed": False, "reason": f"{lost}; remove it with force to discard them"}
    outcome = discard_worktree(wt, changes, wm)
    if outcome.kept:
        return {"removed": False, "reason": outcome.summary}
    return {"removed": True}


def _as_worktree(entry: dict[str, Any], home: Path | None) -> IsolatedWorktree:
    path, main = Path(entry["path"]), Path(entry["mainRepo"])
    return IsolatedWorktree(
        name=entry["name"],
        path=path,
        branch=entry["branch"],
        main_repo=main,
        base_commit=entry.get("baseCommit"),
        is_new=True,
        hook_created=entry["hookCreated"],
        home=home,
        git=None if entry["hookCreated"] else registered_dirs(path, main),
    )
