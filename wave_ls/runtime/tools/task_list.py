"""The main agent's task list (``TaskCreate``, ``TaskGet``, ``TaskUpdate``, ``TaskList``).

One ``TaskList`` per session lives in ``ctx.services.task_list`` (the main agent's only).
Ids are "1", "2", ... in creation order; a task set to ``deleted`` leaves the list.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from wave_ls.runtime.core import Effect, ToolContext, ToolError, ToolKind, ToolResult
from wave_ls.runtime.tool_names import WaveTool
from wave_ls.runtime.tools.args import optional_str, optional_str_list, require_str

Status = Literal["pending", "in_progress", "completed", "deleted"]
STATUSES: tuple[Status, ...] = ("pending", "in_progress", "completed", "deleted")


@dataclass
class Task:
    id: str
    subject: str
    description: str
    active_form: str = ""
    status: Status = "pending"
    owner: str = ""
    blocks: list[str] = field(default_factory=list)
    blocked_by: list[str] = field(default_factory=list)
    metadata: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "taskId": self.id,
            "subject": self.subject,
            "description": self.description,
            "activeForm": self.active_form,
            "status": self.status,
            "owner": self.owner,
            "blocks": list(self.blocks),
            "blockedBy": list(self.blocked_by),
            "metadata": dict(self.metadata),
        }


class TaskList:
    """An in-memory task list; the UI reads ``tasks()`` or ``to_json()``."""

    def __init__(self) -> None:
        self._tasks: dict[str, Task] = {}
        self._next = 1

    def create(self, subject: str, description: str, active_form: str = "") -> Task:
        task = Task(str(self._next), subject, description, active_form)
        self._next += 1
        self._tasks[task.id] = task
        return task

    def get(self, task_id: str) -> Task:
        task = self._tasks.get(str(task_id).lstrip("#"))
        if task is None:
            raise ToolError(f"Task not found: {task_id}")
        return task

    def tasks(self) -> list[Task]:
        return list(self._tasks.values())

    def delete(self, task_id: str) -> Task:
        task = self.get(task_id)
        task.status = "deleted"
        del self._tasks[task.id]
        for other in self._tasks.values():
            other.blocks = [i for i in other.blocks if i != task.id]
            other.blocked_by = [i for i in other.blocked_by if i != task.id]
        return task

    def link(self, blocker: str, blocked: str) -> None:
        """``blocker`` must finish before ``blocked`` can start."""
        first, second = self.get(blocker), self.get(blocked)
        if first.id == second.id:
            raise ToolError(f"Task {first.id} cannot block itself")
        if second.id not in first.blocks:
            first.blocks.append(second.id)
        if first.id not in second.blocked_by:
            second.blocked_by.append(first.id)

    def to_json(self) -> list[dict[str, Any]]:
        return [task.to_json() for task in self._tasks.values()]


def task_list(ctx: ToolContext) -> TaskList:
    """The session's task list (only a main agent has one)."""
    if ctx.services.task_list is None:
        raise ToolError("The task list is not available here: only the main agent has one.")
    return ctx.services.task_list


def _open_blockers(store: TaskList, task: Task) -> list[str]:
    return [
        i for i in task.blocked_by if i in store._tasks and store._tasks[i].status != "completed"
    ]


def summary_line(store: TaskList, task: Task) -> str:
    line = f"#{task.id} [{task.status}] {task.subject}"
    if task.owner:
        line += f" (owner: {task.owner})"
    blockers = _open_blockers(store, task)
    if blockers:
        line += " [blocked by " + ", ".join(f"#{i}" for i in blockers) + "]"
    return line


TASK_CREATE_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "subject": {"type": "string", "description": "A brief title for the task"},
        "description": {"type": "string", "description": "What needs to be done"},
        "activeForm": {
            "type": "string",
            "description": 'Present continuous form shown while in progress, e.g. "Running tests"',
        },
    },
    "required": ["subject", "description"],
    "additionalProperties": False,
}


class TaskCreateTool:
    name = WaveTool.TASK_CREATE.value
    effect: Effect = "session"  # the session's own list; no file or process is touched
    kind: ToolKind = "think"
    key_argument: str | None = "subject"
    concurrency_safe = True
    description = """\
Creates a task in the session's task list, to plan and track multi-step work.

Use it for complex work of 3 or more distinct steps, when the user gives several things to \
do, or asks for a todo list; not for a single trivial step. subject is a short imperative \
title ("Run the tests"), description says what needs doing, activeForm is the present \
continuous form shown while it runs ("Running the tests"). New tasks are pending; mark one \
in_progress with TaskUpdate before starting it and completed as soon as it is done."""
    parameters = TASK_CREATE_PARAMETERS

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        subject = require_str(args, "subject", allow_empty=False).strip()
        description = require_str(args, "description")
        active_form = optional_str(args, "activeForm") or ""
        store = task_list(ctx)
        task = store.create(subject, description, active_form)
        return ToolResult(
            f"Task #{task.id} created successfully: {subject}",
            short_result=f"Created task #{task.id}: {subject}",
            details={"task": task.to_json(), "tasks": store.to_json()},
        )


TASK_GET_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {"taskId": {"type": "string", "description": "The id of the task"}},
    "required": ["taskId"],
    "additionalProperties": False,
}


class TaskGetTool:
    name = WaveTool.TASK_GET.value
    effect: Effect = "session"
    kind: ToolKind = "think"
    key_argument: str | None = "taskId"
    concurrency_safe = True
    description = """\
Gets one task from the session's task list by id: its subject, description, status, \
owner and dependencies. Use it before starting a task to read its full requirements."""
    parameters = TASK_GET_PARAMETERS

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        store = task_list(ctx)
        task = store.get(_task_id(args))
        lines = [
            f"Task #{task.id}: {task.subject}",
            f"Status: {task.status}",
            f"Description: {task.description}",
        ]
        if task.active_form:
            lines.append(f"Active form: {task.active_form}")
        if task.owner:
            lines.append(f"Owner: {task.owner}")
        if task.blocked_by:
            lines.append("Blocked by: " + ", ".join(f"#{i}" for i in task.blocked_by))
        if task.blocks:
            lines.append("Blocks: " + ", ".join(f"#{i}" for i in task.blocks))
        if task.metadata:
            lines.append(f"Metadata: {task.metadata}")
        return ToolResult(
            "\n".join(lines),
            short_result=f"Task #{task.id}: {task.subject}",
            details={"task": task.to_json()},
        )


def _task_id(args: dict[str, Any]) -> str:
    value = args.get("taskId")
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)  # models sometimes send the id as a number
    return require_str(args, "taskId", allow_empty=False).strip()


TASK_UPDATE_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "taskId": {"type": "string", "description": "The id of the task to update"},
        "status": {"type": "string", "enum": list(STATUSES), "description": "New status"},
        "subject": {"type": "string", "description": "New subject"},
        "description": {"type": "string", "description": "New description"},
        "activeForm": {"type": "string", "description": "New active form"},
        "owner": {"type": "string", "description": "New owner"},
        "addBlocks": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Task ids that cannot start until this one is completed",
        },
        "addBlockedBy": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Task ids that must be completed before this one",
        },
        "metadata": {"type": "object", "description": "Metadata keys to merge"},
    },
    "required": ["taskId"],
    "additionalProperties": False,
}


class TaskUpdateTool:
    name = WaveTool.TASK_UPDATE.value
    effect: Effect = "session"
    kind: ToolKind = "think"
    key_argument: str | None = "taskId"
    concurrency_safe = True
    description = """\
Updates a task in the session's task list.

- status: pending, in_progress, completed, or deleted (removes the task). Mark a task \
in_progress when you start it and completed as soon as it is fully done (not when tests \
fail or the work is partial). Keep one task in_progress at a time.
- subject, description, activeForm, owner: replace those fields.
- addBlocks / addBlockedBy: task ids this task blocks / is blocked by.
- metadata: keys to merge into the task's metadata (a null value removes a key)."""
    parameters = TASK_UPDATE_PARAMETERS

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        store = task_list(ctx)
        task = store.get(_task_id(args))
        status = optional_str(args, "status")
        if status is not None and status not in STATUSES:
            raise ToolError(
                f"Parameter 'status' must be one of {', '.join(STATUSES)}; got {status!r}"
            )
        metadata = args.get("metadata")
        if metadata is not None and not isinstance(metadata, dict):
            raise ToolError("Parameter 'metadata' must be an object")
        blocks = optional_str_list(args, "addBlocks")
        blocked_by = optional_str_list(args, "addBlockedBy")
        for other in [*blocks, *blocked_by]:
            store.get(other)  # validate every id before changing anything
        if status == "deleted":
            store.delete(task.id)
            return ToolResult(
                f"Task #{task.id} deleted",
                short_result=f"Deleted task #{task.id}",
                details={"task": task.to_json(), "tasks": store.to_json()},
            )
        changed = []
        for key, attr in (
            ("subject", "subject"),
            ("description", "description"),
            ("activeForm", "active_form"),
            ("owner", "owner"),
        ):
            value = optional_str(args, key)
            if value is not None:
                setattr(task, attr, value)
                changed.append(key)
        if status is not None:
            task.status = status
            changed.append("status")
        for other in blocks:
            store.link(task.id, other)
        for other in blocked_by:
            store.link(other, task.id)
        if blocks or blocked_by:
            changed.append("dependencies")
        if metadata:
            for key, value in metadata.items():
                if value is None:
                    task.metadata.pop(key, None)
                else:
                    task.metadata[key] = value
            changed.append("metadata")
        if not changed:
            raise ToolError("Nothing to update: give status, subject, description, ...")
        return ToolResult(
            f"Updated task #{task.id} {', '.join(changed)}",
            short_result=summary_line(store, task),
            details={"task": task.to_json(), "tasks": store.to_json()},
        )


TASK_LIST_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {},
    "additionalProperties": False,
}


class TaskListTool:
    name = WaveTool.TASK_LIST.value
    effect: Effect = "session"
    kind: ToolKind = "think"
    key_argument: str | None = None
    concurrency_safe = True
    description = """\
Lists every task in the session's task list with its id, status, subject, owner and open \
blockers. Use it to see what is left and to pick the next task (prefer the lowest id that \
is pending and not blocked)."""
    parameters = TASK_LIST_PARAMETERS

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        store = task_list(ctx)
        tasks = store.tasks()
        if not tasks:
            return ToolResult("No tasks found", short_result="No tasks")
        done = sum(task.status == "completed" for task in tasks)
        return ToolResult(
            "\n".join(summary_line(store, task) for task in tasks),
            short_result=f"{len(tasks)} tasks ({done} completed)",
            details={"tasks": store.to_json()},
        )
