"""``ExitPlanMode``: present the plan and ask the user to approve leaving plan mode.

``ctx.services.plan_mode``, when present, is an object with
``async exit(plan, tool_call_id) -> bool`` (the user's approval); without it the plan is
returned for the user with a note.
"""

from __future__ import annotations

from typing import Any

from wave_ls.runtime.core import Effect, ToolContext, ToolKind, ToolResult
from wave_ls.runtime.tool_names import WaveTool
from wave_ls.runtime.tools.args import require_str

DESCRIPTION = """\
Use this tool when you are in plan mode and have finished planning an implementation: it \
presents your plan to the user and asks for approval to start.

Usage:
- plan is the complete plan in Markdown: the steps, and the files to change.
- Only use it for tasks that need code to be written. For research (searching, reading \
files, understanding the codebase) answer directly instead.
- Resolve open questions with the user before calling it; it asks "is this plan ready?", \
not "should I proceed?"."""


PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "plan": {
            "type": "string",
            "description": "The plan to present to the user for approval, in Markdown",
        }
    },
    "required": ["plan"],
    "additionalProperties": False,
}


class ExitPlanModeTool:
    """Presents the plan for approval (see ``DESCRIPTION``)."""

    name = WaveTool.EXIT_PLAN_MODE.value
    description = DESCRIPTION
    effect: Effect = "session"  # it must stay callable in plan mode
    kind: ToolKind = "other"
    key_argument: str | None = None
    concurrency_safe = True
    parameters = PARAMETERS

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        plan = require_str(args, "plan", allow_empty=False)
        plan_mode = ctx.services.plan_mode
        if plan_mode is None:
            return ToolResult(
                "This session has no plan-mode approval step; the plan below is shown to the "
                f"user as it is.\n\n{plan}",
                short_result="Plan presented",
                details={"plan": plan, "approved": None},
            )
        approved = await plan_mode.exit(plan, ctx.tool_call_id)
        if approved:
            return ToolResult(
                "The user approved your plan. You can now start coding; begin with the "
                "first step and update your task list as you go.\n\n"
                f"Approved plan:\n{plan}",
                short_result="Plan approved",
                details={"plan": plan, "approved": True},
            )
        return ToolResult(
            "The user did not approve the plan. Stay in plan mode: ask what to change, refine "
            "the plan, and call ExitPlanMode again when it is ready.",
            is_error=True,
            short_result="Plan not approved",
            details={"plan": plan, "approved": False},
        )
