"""One delegation's record: what every update of its ``Agent`` tool block carries.

The runner writes it (foreground and background runs alike); the adapters read it back
(``from_json``) to title and describe the block (LSP ``$/progress``, ACP tool calls). On the
wire it is the block's ``details`` (``to_json``: the camelCase fields of docs/protocol.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from wave_ls.runtime.core import RunUsage, Usage
from wave_ls.runtime.tool_names import WaveTool

if TYPE_CHECKING:  # its dataclasses cost ~4 ms: imported by isolated runs and read-backs
    from wave_ls.worktrees.report import WorkspaceReport


@dataclass
class DelegationRecord:
    """A delegation as its block shows it.

    ``subagent_type`` is the definition's name (``fork`` for a fork; empty when the call
    named none); ``workspace`` is where it runs (``worktrees/report.py``): an isolated run's
    worktree as made and, at the end, how it ended, or the folder of a fork that could not
    get one, and how an isolated run's commands are confined; ``usage``, ``status``,
    ``error`` and ``summary`` are set when the run ends (``usage`` also when it is stopped).
    """

    subagent_type: str
    description: str
    subagent_id: str
    background: bool = False  # the block of a background run (its id is the task id)
    task_id: str | None = None
    workspace: WorkspaceReport | None = None  # None: in place, as its caller
    status: Literal["completed", "failed"] | None = None
    error: str | None = None
    usage: RunUsage | None = None
    summary: str | None = None
    color: str | None = None  # the definition's ``color``, as written
    max_turns_reached: bool = False  # the run stopped at its definition's ``maxTurns``
    model: str | None = None  # the id its requests carry
    model_note: str | None = None  # what a tier became: 'sonnet -> inherit: ...'
    extra: dict[str, Any] = field(default_factory=dict)  # fields of newer writers, kept

    @classmethod
    def start(cls, args: dict[str, Any], subagent_id: str) -> DelegationRecord:
        """The record of an ``Agent`` call with ``args`` before it runs."""
        return cls(
            subagent_type=args.get("subagent_type") or ("fork" if args.get("fork") else ""),
            description=str(args.get("description") or ""),
            subagent_id=subagent_id,
        )

    @property
    def worktree_summary(self) -> str | None:
        return (self.workspace.summary if self.workspace else None) or None

    def show(self, workspace: WorkspaceReport | None) -> None:
        """Where the run works now (the ``Workspace`` reports each change)."""
        self.workspace = workspace

    def to_json(self) -> dict[str, Any]:
        """The block's ``details`` on the wire."""
        out: dict[str, Any] = {
            **self.extra,
            "subagentType": self.subagent_type,
            "description": self.description,
            "subagentId": self.subagent_id,
        }
        worktree = self.workspace.worktree if self.workspace else None
        sandbox = self.workspace.sandbox if self.workspace else None
        optional: dict[str, Any] = {
            "background": self.background or None,
            "taskId": self.task_id,
            "worktree": worktree.to_json() if worktree is not None else None,
            "sandbox": sandbox.to_json() if sandbox is not None else None,
            "status": self.status,
            "summary": self.summary,
            "color": self.color,
            "maxTurnsReached": self.max_turns_reached or None,
            "model": self.model,
            "modelNote": self.model_note,
        }
        out.update({key: value for key, value in optional.items() if value is not None})
        if self.status is not None:
            out["error"] = self.error
        if self.usage is not None:
            out.update(
                totalTokens=self.usage.tokens.total_tokens,
                toolCalls=self.usage.tool_calls,
                durationMs=self.usage.duration_ms,
            )
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> DelegationRecord:
        """A record read back from a block's ``details`` (tolerant: missing fields are
        empty, unknown ones kept in ``extra``)."""
        data = dict(data or {})
        usage = None
        if "totalTokens" in data or "toolCalls" in data:
            usage = RunUsage(
                Usage(total_tokens=_int(data.pop("totalTokens", 0))),
                _int(data.pop("toolCalls", 0)),
                _int(data.pop("durationMs", 0)),
            )
        status = data.pop("status", None)
        return cls(
            subagent_type=str(data.pop("subagentType", "") or ""),
            description=str(data.pop("description", "") or ""),
            subagent_id=str(data.pop("subagentId", "") or ""),
            background=bool(data.pop("background", False)),
            task_id=data.pop("taskId", None),
            workspace=_workspace(data.pop("worktree", None), data.pop("sandbox", None)),
            status=status if status in ("completed", "failed") else None,
            error=data.pop("error", None),
            usage=usage,
            summary=data.pop("summary", None),
            color=data.pop("color", None),
            max_turns_reached=bool(data.pop("maxTurnsReached", False)),
            model=data.pop("model", None),
            model_note=data.pop("modelNote", None),
            extra=data,
        )


def delegation_title(args: dict[str, Any], record: DelegationRecord) -> str:
    """``<subagent type>: <description>`` for an ``Agent`` block (``fork: ...`` for a fork):
    what every adapter titles a delegation with."""
    kind = (
        record.subagent_type
        or args.get("subagent_type")
        or ("fork" if args.get("fork") else WaveTool.AGENT.value)
    )
    description = record.description or args.get("description") or ""
    return f"{kind}: {description}" if description else str(kind)


def starts_background_run(args: dict[str, Any], record: DelegationRecord) -> bool:
    """The ``Agent`` call that only starts a background run; the run itself is reported as
    its own block (``background``, ``toolCallId`` = the task id)."""
    return not record.background and args.get("run_in_background") is True


def _workspace(worktree: object, sandbox: object) -> WorkspaceReport | None:
    if worktree is None and sandbox is None:
        return None
    from wave_ls.worktrees.report import SandboxReport, WorkspaceReport, WorktreeReport

    return WorkspaceReport(WorktreeReport.from_json(worktree), SandboxReport.from_json(sandbox))


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0
