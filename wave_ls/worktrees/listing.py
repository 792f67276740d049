"""``wave/worktrees/list``: every wave worktree of a project, its changes and who made it.

Listed: each live linked worktree under ``<main repo>/.wave/worktrees/``, plus each
hook-made worktree with a registry record whose folder still exists (wherever it is).
Changes are counted against the base recorded at creation. ``changedFiles``/``commits``
are null when they cannot be known: status failed, the folder is not a git worktree, or
(``commits`` only) no record says what the base was. The call blocks: use
``asyncio.to_thread`` from async code.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from wave_ls.worktrees import layout, registry_file
from wave_ls.worktrees.inspection import dirs_for, registered_dirs
from wave_ls.worktrees.isolation import default_manager
from wave_ls.worktrees.manager import WorktreeManager
from wave_ls.worktrees.model import WorktreeError


def list_wave_worktrees(
    cwd: Path, *, manager: WorktreeManager | None = None, count_changes: bool = True
) -> list[dict[str, Any]]:
    """``[{path, branch, changedFiles, commits, owner?, name, createdAt?, hookCreated,
    mainRepo, baseCommit?}]``."""
    wm = manager or default_manager()
    start = Path(cwd).expanduser()
    if not start.is_dir():
        return []
    main = wm.main_repo(start)
    project = main or start.resolve()
    records = {record.name: record for record in registry_file.read_records(project)}
    root = Path(os.path.realpath(project / ".wave" / "worktrees"))
    found: dict[str, dict[str, Any]] = {}
    if main is not None:
        try:
            linked = wm.list(main)[1:]
        except WorktreeError:
            linked = []
        for info in linked:
            if info.prunable or Path(os.path.realpath(info.path)).parent != root:
                continue
            record = records.get(info.path.name)
            base = record.base_commit if record is not None else None
            found[os.path.realpath(info.path)] = _entry(
                wm,
                info.path,
                info.branch or "",
                base,
                record,
                project,
                count_changes,
            )
    for record in records.values():
        path = Path(record.path)
        if os.path.realpath(path) in found or not path.is_dir():
            continue
        if not record.hook_created:
            continue  # a git worktree that git no longer knows: nothing to show
        found[os.path.realpath(path)] = _entry(
            wm, path, record.branch, record.base_commit, record, project, count_changes
        )
    return [found[key] for key in sorted(found)]


def main_repo_holds(project: Path, path: Path) -> bool:
    """Whether ``path`` lies in ``project``'s ``.wave/worktrees/`` (a git-made worktree)."""
    return Path(os.path.realpath(path)).parent == Path(
        os.path.realpath(project / layout.WORKTREES_DIR)
    )


def _entry(
    wm: WorktreeManager,
    path: Path,
    branch: str,
    base: str | None,
    record: registry_file.WorktreeRecord | None,
    project: Path,
    count_changes: bool,
) -> dict[str, Any]:
    files: int | None = None
    commits: int | None = None
    if count_changes and os.path.lexists(path / ".git"):
        # Its dirs from the parent's side (registered), never from files its agent wrote.
        dirs = registered_dirs(path) if main_repo_holds(project, path) else dirs_for(path)
        head = layout.read_head_in(dirs.git_dir, dirs.common) if dirs is not None else None
        changes = wm.changes(path, base or head or "HEAD", dirs=dirs)
        if changes.determinable:
            files = changes.changed_files
            commits = changes.commits if base else None
    entry: dict[str, Any] = {
        "path": str(path),
        "branch": branch,
        "changedFiles": files,
        "commits": commits,
        "name": record.name if record is not None else path.name,
        "hookCreated": bool(record and record.hook_created),
        "mainRepo": str(project),
    }
    if record is not None:
        if record.owner:
            entry["owner"] = record.owner
        entry["createdAt"] = record.created_at
        entry["baseCommit"] = record.base_commit
    return entry
