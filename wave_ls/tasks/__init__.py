"""Background tasks of a session: shell commands and subagents that run while the main
agent goes on, their output files, stopping them, and their completion notices
(see ``docs/background-tasks.md``)."""

from wave_ls.tasks.manager import (
    DEFAULT_STOP_REASON,
    SHUTDOWN_REASON,
    BackgroundTasks,
    TaskHandle,
    new_subagent_session_id,
)
from wave_ls.tasks.model import (
    SubagentOutcome,
    SubagentResultLike,
    TaskError,
    TaskInfo,
    TaskKind,
    TaskStatus,
    UnknownTask,
)
from wave_ls.tasks.notices import NOTICE_PREFIX, Notice, notice_text

__all__ = [
    "DEFAULT_STOP_REASON",
    "NOTICE_PREFIX",
    "SHUTDOWN_REASON",
    "BackgroundTasks",
    "Notice",
    "SubagentOutcome",
    "SubagentResultLike",
    "TaskError",
    "TaskHandle",
    "TaskInfo",
    "TaskKind",
    "TaskStatus",
    "UnknownTask",
    "new_subagent_session_id",
    "notice_text",
]
