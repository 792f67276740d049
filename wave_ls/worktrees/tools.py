"""``EnterWorktree`` / ``ExitWorktree``: move the session into a git worktree and back.

They act on ``ctx.services.session_worktree``, the ``SessionWorktrees`` the session owns: it
creates or removes the worktree and switches the session's working directory. Both tools are
refused inside an isolated subagent (``ctx.services.isolated_worktree`` set, WT-9).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal, cast

from wave_ls.runtime.core import Effect, ToolContext, ToolError, ToolKind, ToolResult
from wave_ls.runtime.tool_names import WaveTool
from wave_ls.runtime.tools.args import optional_bool, optional_str, require_str
from wave_ls.worktrees.model import IsolationError
from wave_ls.worktrees.session_switch import SessionWorktrees

ENTER_DESCRIPTION = """\
Creates an isolated git worktree (a separate checkout on its own branch) and switches this \
session into it: from then on file and command tools work in the worktree, and writes \
outside it are refused.

Usage:
- Use it only when the user asks to work in a worktree (or in isolation from their working \
tree). Do not use it for ordinary edits.
- name is optional (letters, digits, '.', '_', '-'); without it a random name is chosen. The \
worktree is <repo>/.wave/worktrees/<name> on branch worktree-<name>.
- An existing worktree of that name is entered as it is.
- Use ExitWorktree to leave it (keeping or removing it)."""

EXIT_DESCRIPTION = """\
Leaves the worktree entered with EnterWorktree and returns the session to its original \
directory.

Usage:
- action "keep" leaves the worktree and its branch on disk for the user to review or merge.
- action "remove" deletes the worktree and its branch worktree-<name>. It is refused when \
the worktree has uncommitted files or new commits, listing them: ask the user, and only \
with their confirmation call again with discard_changes: true.
- Without an active worktree session it does nothing."""

ENTER_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {
            "type": "string",
            "description": "Optional name of the worktree; a random one when omitted",
        }
    },
    "additionalProperties": False,
}

EXIT_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "action": {
            "type": "string",
            "enum": ["keep", "remove"],
            "description": '"keep" leaves the worktree on disk; "remove" deletes it',
        },
        "discard_changes": {
            "type": "boolean",
            "description": "Remove even with uncommitted files or commits (only after the "
            "user confirmed)",
        },
    },
    "required": ["action"],
    "additionalProperties": False,
}


def _refuse_when_isolated(tool: str, ctx: ToolContext) -> None:
    isolated = ctx.services.isolated_worktree
    if isolated is not None:
        raise ToolError(
            f"{tool} is not available inside an isolated subagent: it already runs in its "
            f"own worktree {isolated.path}"
        )


def _switch(tool: str, ctx: ToolContext) -> SessionWorktrees:
    switch = ctx.services.session_worktree
    if not isinstance(switch, SessionWorktrees):
        raise ToolError(
            f"{tool} is not available here: this agent has no session whose working "
            "directory it can switch (subagents cannot change the session's directory)."
        )
    return switch


class EnterWorktreeTool:
    """Moves the session into a new or existing worktree (see ``ENTER_DESCRIPTION``)."""

    name = WaveTool.ENTER_WORKTREE.value
    description = ENTER_DESCRIPTION
    effect: Effect = "worktree"
    kind: ToolKind = "other"
    key_argument: str | None = "name"
    concurrency_safe = False
    parameters = ENTER_PARAMETERS

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        _refuse_when_isolated(self.name, ctx)
        name = (optional_str(args, "name") or "").strip() or None
        switch = _switch(self.name, ctx)
        current = switch.current
        if current is not None:
            raise ToolError(
                f"Already in a worktree session ({current.path}, branch {current.branch}). "
                "Call ExitWorktree first to leave it."
            )
        try:
            wt = await switch.enter(name)
        except IsolationError as error:
            raise ToolError(str(error)) from error
        if wt.is_new:
            text = f"Created worktree at {wt.path}" + (
                f" on branch {wt.branch}" if wt.branch else ""
            )
            text += f" (based on {wt.base_ref})." if wt.base_ref else "."
        else:
            text = (
                f"Entered the existing worktree at {wt.path}"
                + (f" on branch {wt.branch}" if wt.branch else "")
                + " (reused as it is: nothing was copied into it)."
            )
        text += (
            f" The session is now working in the worktree ({wt.cwd}): file and command tools "
            "run there and writes outside it are refused. Use ExitWorktree to leave it."
        )
        text += "".join(f"\nNote: {note}" for note in wt.notes)
        return ToolResult(
            text,
            short_result=f"Worktree {wt.name}",
            details={"worktree": wt.to_json()},
        )


class ExitWorktreeTool:
    """Leaves the session's worktree, keeping or removing it (see ``EXIT_DESCRIPTION``)."""

    name = WaveTool.EXIT_WORKTREE.value
    description = EXIT_DESCRIPTION
    effect: Effect = "worktree"
    kind: ToolKind = "other"
    key_argument: str | None = "action"
    concurrency_safe = False
    parameters = EXIT_PARAMETERS

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        _refuse_when_isolated(self.name, ctx)
        action = require_str(args, "action")
        if action not in ("keep", "remove"):
            raise ToolError(f'Parameter \'action\' must be "keep" or "remove", got {action!r}')
        discard = optional_bool(args, "discard_changes")
        switch = _switch(self.name, ctx)
        if switch.current is None:
            return ToolResult(
                "No active worktree session (none was entered with EnterWorktree in this "
                "session): nothing was changed.",
                short_result="No worktree session",
            )
        try:
            outcome = await switch.exit(cast(Literal["keep", "remove"], action), discard)
        except IsolationError as error:
            raise ToolError(str(error)) from error
        back = getattr(switch, "original_cwd", None)
        where = f" in {back}" if isinstance(back, Path) else " in its original directory"
        return ToolResult(
            f"Exited the worktree session; the session is back{where}. {outcome.summary}",
            short_result="Worktree kept" if outcome.kept else "Worktree removed",
            details={"worktree": outcome.to_json()},
        )
