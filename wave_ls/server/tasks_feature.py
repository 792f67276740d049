"""``wave/tasks/list``, ``wave/tasks/stop``, and ending every session at ``shutdown``."""

from __future__ import annotations

from lsprotocol import types

from wave_ls.server.app import WaveServer
from wave_ls.server.params import require_object, required_str

TASKS_LIST = "wave/tasks/list"
TASKS_STOP = "wave/tasks/stop"


def register(server: WaveServer) -> None:
    @server.feature(TASKS_LIST)
    def tasks_list(ls: WaveServer, params: object) -> dict[str, object]:
        p = require_object(params, TASKS_LIST)
        session = ls.sessions.get(required_str(p, "sessionId", TASKS_LIST), TASKS_LIST)
        return {"tasks": [info.to_json() for info in session.tasks.list()]}

    @server.feature(TASKS_STOP)
    async def tasks_stop(ls: WaveServer, params: object) -> dict[str, object]:
        p = require_object(params, TASKS_STOP)
        task_id = required_str(p, "taskId", TASKS_STOP)
        for session in ls.sessions.sessions.values():
            if session.tasks.get(task_id) is not None:
                return {"stopped": await session.tasks.stop(task_id, "Stopped by the user.")}
        return {"stopped": False}

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: WaveServer, params: object) -> None:
        await ls.sessions.close_all()
