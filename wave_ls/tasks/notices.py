"""Completion notices: the ``<task-notification>`` text and the queue that delivers it once.

Every task that ends (completed, failed or stopped) puts exactly one notice in its session's
``NoticeQueue``; ``take_all`` hands each one out exactly once, even when tasks end together
and several consumers (or threads) ask at the same moment.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from wave_ls.runtime.core import Message
from wave_ls.tasks.model import TaskInfo

# The line before the block in the user-role message the model reads (as Claude Code).
NOTICE_PREFIX = "A background agent completed a task:"


@dataclass(frozen=True)
class Notice:
    """One pending completion notice."""

    task_id: str
    status: str
    text: str  # the <task-notification> block

    def message(self) -> Message:
        """The user-role message that carries the notice to the main agent.

        ``isMeta``: the chat panel need not render it as something the user typed.
        """
        return Message(
            "user",
            f"{NOTICE_PREFIX}\n{self.text}",
            meta={"isMeta": True, "taskNotification": self.task_id, "status": self.status},
        )


def usage_line(info: TaskInfo) -> str:
    """``total_tokens: 123, tool_uses: 4, duration_ms: 5000`` for a subagent, a command's
    ``duration_ms``: the task's wall time once it ended; empty while nothing is known."""
    items: dict[str, int] = info.usage.to_json() if info.usage is not None else {}
    if info.duration_ms is not None:
        items["duration_ms"] = info.duration_ms
    return ", ".join(f"{key}: {value}" for key, value in items.items())


def notice_text(info: TaskInfo) -> str:
    """The ``<task-notification>`` block for an ended task."""
    lines = [
        "<task-notification>",
        f"<task-id>{info.task_id}</task-id>",
        f"<task-type>{info.kind}</task-type>",
        f"<output-file>{info.output_file}</output-file>",
        f"<status>{info.status}</status>",
        f"<summary>{info.summary()}</summary>",
    ]
    if info.result is not None:
        lines.append(f"<result>{info.result}</result>")
    usage = usage_line(info)
    if usage:
        lines.append(f"<usage>{usage}</usage>")
    if info.worktree_summary:
        lines.append(f"<worktree>{info.worktree_summary}</worktree>")
    lines.append("</task-notification>")
    return "\n".join(lines)


class NoticeQueue:
    """Pending notices; safe to use from the event loop and from threads."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: list[Notice] = []

    def put(self, notice: Notice) -> None:
        with self._lock:
            self._items.append(notice)

    def take_all(self) -> list[Notice]:
        """Every pending notice, in the order the tasks ended; the queue is left empty."""
        with self._lock:
            items, self._items = self._items, []
        return items

    def __len__(self) -> int:
        with self._lock:
            return len(self._items)
