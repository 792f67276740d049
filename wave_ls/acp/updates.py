"""Runtime events of one session -> ACP ``session/update`` notifications.

- assistant text deltas: ``agent_message_chunk``;
- a tool block's first event: ``tool_call`` (title, kind, locations, Write/Edit diff); each
  later change: ``tool_call_update``. An ``Agent`` block is one tool call for the whole
  delegation: every progress report of the subagent (a new tool call of its own, new
  token counts) is a ``tool_call_update`` whose content is that line, and the last one is
  ``completed`` (or ``failed``) with the summary and the subagent's answer;
- ``TaskCreate`` / ``TaskUpdate`` results: the task list as a ``plan``;
- a background task's notice (a user-role message the main agent reads): a message line;
- the permission mode changing by itself (``ExitPlanMode`` approved): ``current_mode_update``;
- the history compacted: a message line "conversation compacted (N -> M tokens)";
- how full the context window is (after each round and a compaction): ``usage_update``
  (``used``, ``size`` in tokens).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from acp.helpers import plan_entry, update_current_mode, update_plan
from acp.schema import (
    PlanEntry,
    PlanEntryStatus,
    ToolCallProgress,
    ToolCallStart,
    ToolCallStatus,
    UsageUpdate,
)

from wave_ls.acp.compact import compacted_line
from wave_ls.acp.outbox import Outbox
from wave_ls.acp.tool_calls import Presentation, final_content, live_content, present
from wave_ls.runtime.core import (
    AssistantContentDelta,
    AssistantThinkingDelta,
    ContextCompacted,
    ContextUsage,
    Event,
    Message,
    ToolBlockUpdated,
    UserMessageAdded,
    parsed_arguments,
)
from wave_ls.runtime.tool_names import WaveTool
from wave_ls.subagents.record import DelegationRecord, starts_background_run

STATUS: dict[str, ToolCallStatus] = {
    "pending": "pending",
    "running": "in_progress",
    "completed": "completed",
    "failed": "failed",
}
PLAN_TOOLS = frozenset({WaveTool.TASK_CREATE.value, WaveTool.TASK_UPDATE.value})
_SUMMARY = re.compile(r"<summary>(.*?)</summary>", re.DOTALL)


def notice_line(message: Message) -> str | None:
    """The line a client shows for a background task's notice, or None for other messages."""
    task_id = message.meta.get("taskNotification")
    if not task_id:
        return None
    found = _SUMMARY.search(message.content)
    summary = found.group(1).strip() if found else f"status: {message.meta.get('status', '?')}"
    return f"\n\n_Background task {task_id}: {summary}_\n\n"


def plan_entries(tasks: list[dict[str, Any]]) -> list[PlanEntry]:
    """The session's task list as ACP plan entries (in creation order)."""
    entries = []
    for task in tasks:
        status: PlanEntryStatus = (
            task["status"] if task.get("status") in ("in_progress", "completed") else "pending"
        )
        text = task.get("activeForm") if status == "in_progress" else None
        entries.append(plan_entry(str(text or task.get("subject", "")), status=status))
    return entries


class SessionUpdates:
    """The ``EventSink`` of one session in an ACP connection."""

    def __init__(
        self,
        session_id: str,
        outbox: Outbox,
        cwd: Callable[[], Path],
        mode: Callable[[], str],
        announced_mode: str,
    ) -> None:
        self.session_id = session_id
        self.outbox = outbox
        self.cwd = cwd  # the session's working directory now (it may enter a worktree)
        self.mode = mode  # the permission mode in force from the next model round
        self.announced_mode = announced_mode  # the mode the client was last told
        self.open: dict[str, Presentation] = {}  # tool calls the client knows, by id
        self.sent_status: dict[str, ToolCallStatus] = {}

    def emit(self, event: Event) -> None:
        match event:
            case AssistantContentDelta(delta=delta):
                self.outbox.put_text(self.session_id, delta)
            case AssistantThinkingDelta(delta=delta):
                self.outbox.put_text(self.session_id, delta, "agent_thought_chunk")
            case UserMessageAdded(message=message):
                line = notice_line(message)
                if line:
                    self.outbox.put_text(self.session_id, line)
            case ToolBlockUpdated():
                self._tool_block(event)
            case ContextCompacted(tokens_before=before, tokens_after=after):
                self.outbox.put_text(self.session_id, compacted_line(before, after))
            case ContextUsage(tokens=tokens, window_tokens=window):
                self.outbox.put(
                    self.session_id,
                    UsageUpdate(
                        session_update="usage_update", used=max(0, tokens), size=max(0, window)
                    ),
                )

    def mode_changed(self) -> None:
        """Tell the client when the session's mode changed without the client asking."""
        mode = self.mode()
        if mode != self.announced_mode:
            self.announced_mode = mode
            self.outbox.put(self.session_id, update_current_mode(mode))

    def restore(self, call_id: str) -> None:
        """Send an open tool call's own title and kind again (a subagent's permission prompt
        was shown on it under the subagent's call's)."""
        shown = self.open.get(call_id)
        if shown is not None:
            self.outbox.put(
                self.session_id,
                ToolCallProgress(
                    session_update="tool_call_update",
                    tool_call_id=call_id,
                    title=shown.title,
                    kind=shown.kind,
                ),
            )

    def _tool_block(self, event: ToolBlockUpdated) -> None:
        args = parsed_arguments(event.arguments)
        status = STATUS[event.status]
        call_id = event.tool_call_id
        ended = status in ("completed", "failed")
        live = event.name == WaveTool.AGENT and bool(event.short_result) and not ended
        if call_id not in self.open:
            shown = present(
                event.name,
                args,
                self.cwd(),
                event.details,
                read_old=not ended,
                shown_as=(event.kind, event.target),
            )
            self.open[call_id] = shown
            self.sent_status[call_id] = "in_progress" if ended else status
            self.outbox.put(
                self.session_id,
                ToolCallStart(
                    session_update="tool_call",
                    tool_call_id=call_id,
                    title=shown.title,
                    kind=shown.kind,
                    status=self.sent_status[call_id],
                    content=shown.content or None,
                    locations=shown.locations or None,
                    raw_input=args,
                ),
            )
            if not ended and not live:
                return
        elif not ended and not live and self.sent_status.get(call_id) == status:
            return  # nothing the client shows has changed
        self.sent_status[call_id] = status
        content = None
        if ended:
            presented = self.open.pop(call_id, None)
            self.sent_status.pop(call_id, None)
            failed = status == "failed"
            result = self._result(event)
            content = final_content(
                event.name, args, self.cwd(), result, failed, event.details, presented
            )
        elif live:
            content = live_content(event.short_result)
        self.outbox.put(
            self.session_id,
            ToolCallProgress(
                session_update="tool_call_update",
                tool_call_id=call_id,
                status=status,
                content=content,
            ),
        )
        if ended:
            self._after(event)

    def _result(self, event: ToolBlockUpdated) -> str:
        if event.name == WaveTool.AGENT and starts_background_run(
            parsed_arguments(event.arguments), DelegationRecord.from_json(event.details)
        ):
            return event.short_result  # "Background task <id>": the run is its own tool call
        return event.result if event.result is not None else event.short_result

    def _after(self, event: ToolBlockUpdated) -> None:
        """What an ended call changes besides itself: the plan, the session's mode."""
        tasks = event.details.get("tasks")
        if event.name in PLAN_TOOLS and event.status == "completed" and isinstance(tasks, list):
            self.outbox.put(self.session_id, update_plan(plan_entries(tasks)))
        self.mode_changed()
