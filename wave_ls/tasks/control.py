"""``TaskOutput`` and ``TaskStop``: read and stop the session's background tasks.

Both find the session's ``BackgroundTasks`` at ``ctx.services.background``. Both are
``effect = "session"``: they touch no file and stop only our own work, so they run in every
permission mode (plan mode included) without asking, as in Claude Code.
"""

from __future__ import annotations

from typing import Any

from wave_ls.runtime.core import Effect, ToolContext, ToolError, ToolKind, ToolResult
from wave_ls.runtime.tool_names import WaveTool
from wave_ls.runtime.tools.args import optional_bool, optional_int, optional_str
from wave_ls.tasks.manager import BackgroundTasks
from wave_ls.tasks.model import TaskInfo, UnknownTask
from wave_ls.tasks.notices import usage_line
from wave_ls.tasks.output import cap_tail

DEFAULT_TIMEOUT_MS = 30_000
MAX_TIMEOUT_MS = 600_000
MAX_OUTPUT_CHARS = 30_000
STOPPED_WITH_TOOL = "Stopped with TaskStop."
# Claude Code's older names for the id (BashOutput/KillShell) are still accepted.
ID_ALIASES = ("task_id", "shell_id", "bash_id")

TASK_OUTPUT_DESCRIPTION = f"""\
Retrieves the output of a background task (a Bash command or an Agent started with \
run_in_background), running or ended.

Usage:
- task_id: the id returned when the task started (bash-xxxxxxxx or agent-xxxxxxxx).
- block (default true): wait until the task ends, at most `timeout` milliseconds \
(default {DEFAULT_TIMEOUT_MS}, at most {MAX_TIMEOUT_MS}); block=false returns at once with \
the output so far.
- Returns the task's status (running, completed, failed, stopped), a shell command's exit \
code, and its output: for a command, the end of what it printed; for a subagent, its \
activity so far, or its final result once it has ended. Output longer than \
{MAX_OUTPUT_CHARS} characters keeps its end; the whole output is in the task's output file \
(read it with Read).
- You are told with a <task-notification> when a task ends: do not poll in a loop; use this \
to look at progress, or to wait when you cannot go on without the result."""

TASK_STOP_DESCRIPTION = """\
Stops a running background task (a Bash command or an Agent started with run_in_background).

Usage:
- task_id: the id returned when the task started.
- A command's whole process group is stopped; a subagent is cancelled and cleans up after \
itself (an isolated subagent's worktree is kept if it changed anything, removed otherwise).
- Returns once the task has stopped; stopping a task that has already ended is an error \
that says how it ended."""

TASK_ID_PROPERTY = {
    "type": "string",
    "description": "The id of the background task",
}

TASK_OUTPUT_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "task_id": TASK_ID_PROPERTY,
        "block": {
            "type": "boolean",
            "description": "Whether to wait for the task to end (default true)",
        },
        "timeout": {
            "type": "integer",
            "description": f"How long to wait, in milliseconds (default {DEFAULT_TIMEOUT_MS}, "
            f"max {MAX_TIMEOUT_MS})",
        },
    },
    "required": ["task_id"],
    "additionalProperties": False,
}

TASK_STOP_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "task_id": TASK_ID_PROPERTY,
        "shell_id": {"type": "string", "description": "Deprecated: use task_id"},
    },
    "additionalProperties": False,
}


def background_tasks(ctx: ToolContext) -> BackgroundTasks:
    """The session's background tasks, or a ``ToolError`` that says there are none."""
    tasks = ctx.services.background
    if not isinstance(tasks, BackgroundTasks):
        raise ToolError(
            "Background tasks are not available in this session: no task was started in the "
            "background here, so there is nothing to read or stop."
        )
    return tasks


def task_id_argument(args: dict[str, Any]) -> str:
    """``task_id`` (or one of its older names), required and not empty."""
    for name in ID_ALIASES:
        value = optional_str(args, name)
        if value is not None and value.strip():
            return value.strip()
    raise ToolError("Missing required parameter 'task_id'")


def retrieval_status(info: TaskInfo, block: bool) -> str:
    """``success`` once ended; ``timeout`` after a wait that ran out; else ``not_ready``."""
    if not info.running:
        return "success"
    return "timeout" if block else "not_ready"


def format_task_output(info: TaskInfo, retrieval: str, output: str) -> str:
    """What ``TaskOutput`` returns to the model."""
    lines = [
        f"<retrieval_status>{retrieval}</retrieval_status>",
        f"<task_id>{info.task_id}</task_id>",
        f"<task_type>{info.kind}</task_type>",
        f"<status>{info.status}</status>",
        f"<description>{info.label}</description>",
    ]
    if info.exit_code is not None:
        lines.append(f"<exit_code>{info.exit_code}</exit_code>")
    if info.running and info.progress:
        lines.append(f"<progress>{info.progress}</progress>")
    if not info.running:
        usage = usage_line(info)
        if usage:
            lines.append(f"<usage>{usage}</usage>")
    if info.worktree_summary:
        lines.append(f"<worktree>{info.worktree_summary}</worktree>")
    lines.append(f"<output_file>{info.output_file}</output_file>")
    lines.append(f"<output>\n{output.rstrip(chr(10)) or '(no output yet)'}\n</output>")
    if info.running:
        lines.append("The task is still running; a <task-notification> will tell you when it ends.")
    return "\n".join(lines)


class TaskOutputTool:
    """Reads a background task's output, waiting for it to end when asked."""

    name = WaveTool.TASK_OUTPUT.value
    description = TASK_OUTPUT_DESCRIPTION
    parameters = TASK_OUTPUT_PARAMETERS
    effect: Effect = "session"
    kind: ToolKind = "other"
    key_argument: str | None = "task_id"
    concurrency_safe = True

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        tasks = background_tasks(ctx)
        task_id = task_id_argument(args)
        block = optional_bool(args, "block", default=True)
        timeout_ms = optional_int(args, "timeout", minimum=0)
        timeout_ms = min(DEFAULT_TIMEOUT_MS if timeout_ms is None else timeout_ms, MAX_TIMEOUT_MS)
        try:
            info, output = await tasks.read_output(
                task_id, block=block, timeout=timeout_ms / 1000, max_chars=MAX_OUTPUT_CHARS
            )
        except UnknownTask as exc:
            raise ToolError(str(exc)) from exc
        if info.kind == "subagent" and not info.running and info.result is not None:
            output = cap_tail(info.result, MAX_OUTPUT_CHARS, info.output_file)
        return ToolResult(
            format_task_output(info, retrieval_status(info, block), output),
            short_result=f"{info.label}: {info.status}",
            details=info.to_json(),
        )


class TaskStopTool:
    """Stops a running background task."""

    name = WaveTool.TASK_STOP.value
    description = TASK_STOP_DESCRIPTION
    parameters = TASK_STOP_PARAMETERS
    effect: Effect = "session"
    kind: ToolKind = "other"
    key_argument: str | None = "task_id"
    concurrency_safe = True

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        tasks = background_tasks(ctx)
        task_id = task_id_argument(args)
        try:
            info = tasks.require(task_id)
        except UnknownTask as exc:
            raise ToolError(str(exc)) from exc
        if not info.running:
            raise ToolError(
                f"Task {task_id} has already ended ({info.status}); there is nothing to stop."
            )
        await tasks.stop(task_id, STOPPED_WITH_TOOL)
        if info.status != "stopped":  # it ended on its own while we were stopping it
            raise ToolError(f"Task {task_id} ended ({info.status}) before it could be stopped.")
        content = f"Stopped task {task_id} ({info.label})."
        if info.worktree_summary:
            content += f"\n{info.worktree_summary}"
        return ToolResult(content, short_result=f"{info.label}: stopped", details=info.to_json())
