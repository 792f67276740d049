"""Background delegations: the ``Agent`` call returns at once, the run goes on as a task.

The run's live activity is reported as its own ``Agent`` block (``toolCallId`` = the task
id, ``details.background``) on the parent session's event sink, so the editor keeps one
``$/progress`` for it until it ends. Its tool calls are written to the task's output file,
and its end becomes a ``<task-notification>`` (``wave_ls/tasks``).
"""

from __future__ import annotations

import asyncio
import dataclasses
import json
from typing import Any, Literal

from wave_ls.runtime.core import Message, ToolBlockUpdated, ToolContext, ToolError, ToolResult
from wave_ls.runtime.tools.descriptor import describe
from wave_ls.subagents.record import DelegationRecord
from wave_ls.subagents.runner import Delegation, SubagentHost, run_delegation
from wave_ls.tasks import BackgroundTasks, SubagentOutcome, TaskHandle
from wave_ls.worktrees.model import IsolationError


class OutputWriter:
    """Writes a background subagent's finished tool calls to its task's output file."""

    def __init__(self, handle: TaskHandle) -> None:
        self.handle = handle

    def on_subagent_tool_block_updated(self, instance_id: str, block: ToolBlockUpdated) -> None:
        if block.status in ("completed", "failed"):
            mark = "ok" if block.status == "completed" else "failed"
            self.handle.write(f"[{block.name}] {block.arguments} -> {mark}: {block.short_result}\n")

    def on_subagent_assistant_message_added(self, instance_id: str, message: Message) -> None:
        if message.content.strip():
            self.handle.write(message.content.rstrip() + "\n")

    def on_subagent_user_message_added(self, instance_id: str, message: Message) -> None: ...

    def on_subagent_assistant_content_updated(self, instance_id: str, content: str) -> None: ...

    def on_subagent_messages_change(self, instance_id: str, messages: list[Message]) -> None: ...

    def cleanup_instance(self, instance_id: str) -> None: ...


def start_in_background(
    host: SubagentHost,
    delegation: Delegation,
    ctx: ToolContext,
    call_record: DelegationRecord,
    args: dict[str, Any],
) -> ToolResult:
    tasks = ctx.services.background
    if not isinstance(tasks, BackgroundTasks):
        raise ToolError("Agent: run_in_background is not available in this session")
    arguments = json.dumps(args)
    record = dataclasses.replace(call_record, background=True)
    from wave_ls.subagents.agent_tool import AgentTool  # it imports this module

    described = describe(AgentTool)
    target = described.target(args)

    def block(
        task_id: str,
        status: Literal["running", "completed", "failed"],
        short_result: str,
        result: str | None = None,
    ) -> None:
        record.task_id = task_id
        host.emit(
            ToolBlockUpdated(
                task_id,
                described.name,
                arguments,
                status,
                short_result,
                result,
                record.to_json(),
                target,
                described.kind,
            )
        )

    async def run(handle: TaskHandle) -> SubagentOutcome:
        def report(text: str, _details: Any = None) -> None:
            block(handle.task_id, "running", text)
            handle.report(text)

        context = dataclasses.replace(ctx, report=report)
        try:
            done = await run_delegation(host, delegation, context, record, [OutputWriter(handle)])
        except IsolationError as exc:
            block(handle.task_id, "failed", "Failed", str(exc))
            return SubagentOutcome("failed", f"Agent delegation failed: {exc}")
        except asyncio.CancelledError:
            handle.record(usage=record.usage, worktree_summary=record.worktree_summary)
            block(handle.task_id, "failed", "Stopped")
            raise
        result = done.result
        handle.record(usage=record.usage, worktree_summary=record.worktree_summary)
        block(
            handle.task_id,
            "failed" if result.is_error else "completed",
            record.summary or "",
            result.content,
        )
        return SubagentOutcome(
            "failed" if result.is_error else "completed",
            result.content,
            record.usage,
            record.worktree_summary,
        )

    kind = delegation.definition.name if delegation.definition else "fork"
    info = tasks.start_subagent(
        run,
        subagent_type=kind,
        description=delegation.description,
        session_id=record.subagent_id,
        tool_call_id=ctx.tool_call_id,
    )
    text = (
        f"Started {kind} in the background.\n"
        f"task_id: {info.task_id}\n"
        f"session_id: {record.subagent_id}\n"
        f"output_file: {info.output_file}\n"
        "You will get a <task-notification> when it ends; go on with other work meanwhile. "
        "Use TaskOutput to read its progress and TaskStop to stop it."
    )
    return ToolResult(
        text, short_result=f"Background task {info.task_id}", details=record.to_json()
    )
