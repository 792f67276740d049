"""``wave/tasks/list``, ``wave/tasks/stop``, ``wave/worktrees/list``, and stopping every
task at ``shutdown``."""

from __future__ import annotations

import asyncio
from typing import Any

from lsprotocol import types

from wave_ls.server.app import WaveServer
from wave_ls.server.params import existing_dir, field, require_object, required_str

TASKS_LIST = "wave/tasks/list"
TASKS_STOP = "wave/tasks/stop"
WORKTREES_LIST = "wave/worktrees/list"


def register(server: WaveServer) -> None:
    @server.feature(TASKS_LIST)
    def tasks_list(ls: WaveServer, params: Any) -> dict[str, Any]:
        p = require_object(params, TASKS_LIST)
        session = ls.sessions.get(required_str(p, "sessionId", TASKS_LIST), TASKS_LIST)
        return {"tasks": [info.to_json() for info in session.tasks.list()]}

    @server.feature(TASKS_STOP)
    async def tasks_stop(ls: WaveServer, params: Any) -> dict[str, Any]:
        p = require_object(params, TASKS_STOP)
        task_id = required_str(p, "taskId", TASKS_STOP)
        for session in ls.sessions.sessions.values():
            if session.tasks.get(task_id) is not None:
                return {"stopped": await session.tasks.stop(task_id, "Stopped by the user.")}
        return {"stopped": False}

    @server.feature(WORKTREES_LIST)
    async def worktrees_list(ls: WaveServer, params: Any) -> dict[str, Any]:
        from wave_ls.worktrees.listing import list_wave_worktrees

        p = require_object(params if params is not None else {}, WORKTREES_LIST)
        cwd_text = field(p, "cwd", str, WORKTREES_LIST)
        cwd = existing_dir(cwd_text, "cwd", WORKTREES_LIST) if cwd_text else ls.root
        return {"worktrees": await asyncio.to_thread(list_wave_worktrees, cwd)}

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: WaveServer, params: Any) -> None:
        await ls.sessions.close_all()
