"""Kept worktrees for the editor: ``wave/worktrees/list``, ``wave/worktrees/diff`` and
``wave/worktrees/remove``."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from pygls.exceptions import JsonRpcInternalError, JsonRpcInvalidParams

from wave_ls.server.app import WaveServer
from wave_ls.server.params import absolute_path, existing_dir, field, require_object, required_str

if TYPE_CHECKING:  # the worktree lifecycle is imported when a request needs it
    from wave_ls.worktrees.isolation import IsolatedWorktree

WORKTREES_LIST = "wave/worktrees/list"
WORKTREES_DIFF = "wave/worktrees/diff"
WORKTREES_REMOVE = "wave/worktrees/remove"


def register(server: WaveServer) -> None:
    @server.feature(WORKTREES_LIST)
    async def worktrees_list(ls: WaveServer, params: object) -> dict[str, object]:
        from wave_ls.worktrees.listing import list_wave_worktrees

        p = require_object(params if params is not None else {}, WORKTREES_LIST)
        cwd_text = field(p, "cwd", str, WORKTREES_LIST)
        cwd = existing_dir(cwd_text, "cwd", WORKTREES_LIST) if cwd_text else ls.root
        return {"worktrees": await asyncio.to_thread(list_wave_worktrees, cwd)}

    @server.feature(WORKTREES_DIFF)
    async def worktrees_diff(ls: WaveServer, params: object) -> dict[str, object]:
        from wave_ls.worktrees.model import WorktreeError
        from wave_ls.worktrees.review import diff_worktree

        path = _worktree_path(params, WORKTREES_DIFF)
        places = _places(ls)

        def review() -> dict[str, object]:
            return diff_worktree(_find(ls, path, places, WORKTREES_DIFF)).to_json()

        try:
            return await asyncio.to_thread(review)
        except WorktreeError as error:
            # A git failure is an internal error (-32603), not the client's fault; pygls's
            # JsonRpcServerError takes only -32099..-32000.
            raise JsonRpcInternalError(f"{WORKTREES_DIFF}: {error}") from error

    @server.feature(WORKTREES_REMOVE)
    async def worktrees_remove(ls: WaveServer, params: object) -> dict[str, object]:
        from wave_ls.worktrees.review import remove_worktree

        path = _worktree_path(params, WORKTREES_REMOVE)
        force = field(require_object(params, WORKTREES_REMOVE), "force", bool, WORKTREES_REMOVE)
        places = _places(ls)

        def remove() -> dict[str, object]:
            return remove_worktree(_find(ls, path, places, WORKTREES_REMOVE), force=bool(force))

        # Shielded: a cancelled request must not stop a removal half-way.
        return await asyncio.shield(asyncio.to_thread(remove))


def _worktree_path(params: object, method: str) -> Path:
    p = require_object(params, method)
    return absolute_path(required_str(p, "path", method), "path", method)


def _places(ls: WaveServer) -> list[Path]:
    """Where a worktree's record may be besides its own path: the workspace root and every
    live session's folder."""
    return [ls.root, *(session.cwd for session in ls.sessions.sessions.values())]


def _find(ls: WaveServer, path: Path, places: list[Path], method: str) -> IsolatedWorktree:
    """The listed worktree at ``path``, else InvalidParams (runs in a thread)."""
    from wave_ls.worktrees.review import UnknownWorktree, find_worktree

    try:
        return find_worktree(path, places, home=ls.home)
    except UnknownWorktree as error:
        raise JsonRpcInvalidParams(f"{method}: {error}") from error
    except OSError as error:  # a name too long for the file system, ...
        reason = error.strerror or str(error)
        raise JsonRpcInvalidParams(f"{method}: 'path' is not a usable path: {reason}") from None
