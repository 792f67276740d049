"""What a session lends its tools: ``Services``, one typed field per collaborator.

Each field is optional and typed by a protocol that says what the tools use of it, so mypy
checks every use and the runtime knows nothing of the features that provide them (the
background tasks, the session's worktree switch and the subagent worktrees come from
``tasks/`` and ``worktrees/``; the LSP bridge from ``server/``). A subagent gets its parent's
services minus what it may not have, as a ``dataclasses.replace``.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:  # the store lives with its tools, which import the core (and so this)
    from wave_ls.runtime.sandbox import Confinement
    from wave_ls.runtime.tools.task_list import TaskList


class BackgroundShells(Protocol):
    """Background commands (``Bash`` with ``run_in_background``): ``tasks.BackgroundTasks``."""

    async def start_shell(
        self,
        command: str,
        cwd: Path,
        description: str,
        *,
        tool_call_id: str | None = None,
        sandbox: Confinement | None = None,
    ) -> str:
        """Start ``command`` (confined by ``sandbox``: the calling agent's); return its task
        id."""
        ...

    def output_file(self, task_id: str) -> Path | None:
        """Where the task's output is being written."""
        ...


class WorktreeSwitch(Protocol):
    """The session's way into and out of a git worktree (``worktrees.SessionWorktrees``,
    which ``EnterWorktree``/``ExitWorktree`` drive)."""

    @property
    def cwd(self) -> Path:
        """Where the session's tools run now."""
        ...


class IsolatedWorkspace(Protocol):
    """The worktree an isolated subagent runs in (``worktrees.IsolatedWorktree``)."""

    @property
    def path(self) -> Path: ...


class PlanMode(Protocol):
    """``ExitPlanMode``'s approval step: the user approves the plan (True) or not."""

    async def exit(self, plan: str, tool_call_id: str = "") -> bool: ...


class LspService(Protocol):
    """Code intelligence from the editor (``LSP``)."""

    async def request(self, operation: str, params: dict[str, Any]) -> Any: ...


class SearchProvider(Protocol):
    """A web search engine (``WebSearch``)."""

    async def search(self, query: str) -> list[dict[str, Any]]: ...


class ArtifactSink(Protocol):
    """Where ``Artifact`` hands documents to the UI (a list will do)."""

    def append(self, artifact: dict[str, Any], /) -> None: ...


@dataclass(frozen=True)
class Services:
    """The collaborators of one agent's tools; None: this agent has none of that kind."""

    task_list: TaskList | None = None  # the session's TaskCreate list (main agent only)
    background: BackgroundShells | None = None
    session_worktree: WorktreeSwitch | None = None  # main agent only
    isolated_worktree: IsolatedWorkspace | None = None  # an isolated subagent's worktree
    plan_mode: PlanMode | None = None  # main agent only
    lsp: LspService | None = None
    web_search: SearchProvider | None = None
    artifacts: ArtifactSink | None = None

    def for_subagent(self, workspace: IsolatedWorkspace | None = None) -> Services:
        """What a subagent may use: not the task list, the session's worktree switch or
        plan approval (a subagent never changes its parent's session); its own worktree."""
        return dataclasses.replace(
            self,
            task_list=None,
            session_worktree=None,
            plan_mode=None,
            isolated_worktree=workspace,
        )
