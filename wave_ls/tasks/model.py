"""What a background task is: its record (``TaskInfo``), its outcome, and its errors."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from wave_ls.runtime.core import RunUsage

TaskKind = Literal["shell", "subagent"]
TaskStatus = Literal["running", "completed", "failed", "stopped"]
END_STATUSES: tuple[TaskStatus, ...] = ("completed", "failed", "stopped")
LABEL_LIMIT = 60


class TaskError(Exception):
    """A background-task operation failed; ``str(error)`` is the one message a person reads."""


class UnknownTask(TaskError, LookupError):
    """No task of this session has that id."""


class SubagentResultLike(Protocol):
    """What a background subagent's coroutine returns (``SubagentOutcome`` is one)."""

    @property
    def status(self) -> str: ...  # "completed" | "failed"

    @property
    def text(self) -> str: ...  # the result, or the failure reason, verbatim

    @property
    def usage(self) -> RunUsage | None: ...

    @property
    def worktree_summary(self) -> str | None: ...


@dataclass
class SubagentOutcome:
    """A plain ``SubagentResultLike``."""

    status: Literal["completed", "failed"]
    text: str
    usage: RunUsage | None = None
    worktree_summary: str | None = None


@dataclass
class TaskInfo:
    """One background task of a session, as listed to clients (``to_json``)."""

    task_id: str
    session_id: str  # the main session that owns the task
    kind: TaskKind
    description: str
    output_file: Path
    started_at: float  # epoch seconds
    status: TaskStatus = "running"
    ended_at: float | None = None
    duration_ms: int | None = None
    # shell tasks
    command: str | None = None
    cwd: Path | None = None
    pid: int | None = None
    exit_code: int | None = None
    # subagent tasks
    subagent_type: str | None = None
    subagent_session_id: str | None = None
    tool_call_id: str | None = None
    progress: str = ""  # the latest short status line
    # set when the task ends
    result: str | None = None  # final text, failure reason, stop reason, or output tail
    usage: RunUsage | None = None  # a subagent's, once it ended (or was stopped)
    worktree_summary: str | None = None

    @property
    def running(self) -> bool:
        return self.status == "running"

    @property
    def label(self) -> str:
        """The description, or the command's first line, for one-line summaries."""
        if self.description.strip():
            return self.description.strip()
        first = (self.command or "").strip().splitlines()
        text = first[0] if first else self.task_id
        return text if len(text) <= LABEL_LIMIT else text[: LABEL_LIMIT - 3] + "..."

    def summary(self) -> str:
        """``Agent "Find tests" completed``, ``Background command "make" failed (exit code 2)``."""
        subject = (
            f'Agent "{self.label}"'
            if self.kind == "subagent"
            else f'Background command "{self.label}"'
        )
        if self.status == "running":
            return f"{subject} is running"
        if self.status == "stopped":
            return f"{subject} was stopped"
        if self.kind == "shell" and self.exit_code is not None:
            return f"{subject} {self.status} (exit code {self.exit_code})"
        return f"{subject} {self.status}"

    def to_json(self) -> dict[str, Any]:
        """An item of ``wave/tasks/list`` (times in epoch milliseconds)."""
        out: dict[str, Any] = {
            "taskId": self.task_id,
            "sessionId": self.session_id,
            "kind": self.kind,
            "subagentType": self.subagent_type,
            "status": self.status,
            "description": self.description,
            "outputFile": str(self.output_file),
            "startedAt": int(self.started_at * 1000),
            "progress": self.progress,
            "summary": self.summary(),
        }
        optional: dict[str, Any] = {
            "endedAt": None if self.ended_at is None else int(self.ended_at * 1000),
            "durationMs": self.duration_ms,
            "command": self.command,
            "cwd": None if self.cwd is None else str(self.cwd),
            "pid": self.pid,
            "exitCode": self.exit_code,
            "subagentSessionId": self.subagent_session_id,
            "toolCallId": self.tool_call_id,
            "usage": self.usage.to_json() if self.usage is not None else None,
            "worktreeSummary": self.worktree_summary,
        }
        out.update({key: value for key, value in optional.items() if value is not None})
        return out
