"""The ``Agent`` tool: how the main agent delegates to a subagent.

Its description is rebuilt from the current definitions each time the model is asked, so a
subagent added, edited or deleted on disk is seen at the next round.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from wave_ls.agents import AgentCatalog, AgentDefinition, tool_summary
from wave_ls.runtime.core import Effect, ToolContext, ToolError, ToolKind, ToolResult
from wave_ls.runtime.tool_names import WaveTool
from wave_ls.subagents.background import start_in_background
from wave_ls.subagents.record import DelegationRecord
from wave_ls.subagents.runner import Delegation, SubagentHost, new_instance_id, run_delegation
from wave_ls.worktrees.model import IsolationError

AGENT_TOOL = WaveTool.AGENT.value

GUIDANCE = """\
Launch a subagent: an autonomous agent that handles a task in its own, separate context \
with its own tools, then returns one final message to you.

Available subagents and the tools they have:
{agents}

When to use it:
- If a task matches a subagent's description, delegate it to that subagent \
(subagent_type=<name>). Choose the subagent whose description fits the task best.
- A description that says "use PROACTIVELY" or "MUST BE USED" means: delegate related tasks \
to it without being asked.
- Independent tasks: launch their subagents in parallel, several Agent calls in one message.
- When no subagent matches the task, do the work yourself with your own tools; do not \
delegate just to delegate.
- When the user mentions a subagent (@agent:<name>), delegate to it.

How to use it:
- The subagent sees none of this conversation: the prompt must say everything it needs \
(the goal, the files or names you know, what to return).
- Its result is not shown to the user: summarise it in your answer.
- description: 3-5 words for the user's activity view.
- isolation: "worktree" runs the subagent in its own git worktree (changes stay on a branch).
- run_in_background: true returns at once with a task id; you get a <task-notification> \
when it ends (TaskOutput reads its progress, TaskStop stops it). Use it for long, \
independent work while you go on.
- fork: true starts a copy of you with this whole conversation (subagent_type is ignored), \
in its own worktree when the project is a git repository: for trying an alternative \
without disturbing the main line.
"""

PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "description": {"type": "string", "description": "A short (3-5 word) task description"},
        "prompt": {"type": "string", "description": "The complete task for the subagent"},
        "subagent_type": {
            "type": "string",
            "description": "The subagent to use (any name with fork: true, which ignores it)",
        },
        "isolation": {
            "type": "string",
            "enum": ["worktree"],
            "description": "Run in an isolated git worktree",
        },
        "run_in_background": {
            "type": "boolean",
            "description": "Return at once with a task id; you are notified when it ends",
        },
        "fork": {
            "type": "boolean",
            "description": "Continue this conversation in a copy (subagent_type is then ignored)",
        },
        "timeout": {
            "type": "number",
            "description": "Foreground time limit in seconds (default 600)",
        },
    },
    # ``subagent_type`` is required (TYPE-1): under schema-constrained output a model leaves
    # optional fields out, and a call without it is refused (73 of 73 against llama.cpp).
    "required": ["description", "prompt", "subagent_type"],
    "additionalProperties": False,
}


def agent_list(agents: Sequence[AgentDefinition]) -> str:
    """``- <name>: <description> (Tools: <summary>)`` for each subagent."""
    lines = [
        f"- {a.name}: {' '.join(a.description.split())} (Tools: {tool_summary(a)})" for a in agents
    ]
    return "\n".join(lines) or "(none)"


def agent_tool_description(catalog: AgentCatalog) -> str:
    return GUIDANCE.format(agents=agent_list(catalog.agents))


def unknown_type_message(requested: str | None, catalog: AgentCatalog) -> str:
    names = ", ".join(catalog.names()) or "(none)"
    if not requested:
        return f"subagent_type is required. Available subagents: {names}"
    return f"Agent type '{requested}' not found. Available subagents: {names}"


class AgentTool:
    """Delegates a task to a subagent (foreground, in place)."""

    name = AGENT_TOOL
    parameters = PARAMETERS
    # Allowed in every permission mode (the subagent's own calls are checked), and several
    # Agent calls of one message run concurrently.
    effect: Effect = "session"
    kind: ToolKind = "think"
    key_argument: str | None = "description"
    concurrency_safe = True

    def __init__(self, host: SubagentHost) -> None:
        self.host = host
        self._described: tuple[AgentCatalog, str] | None = None

    @property
    def description(self) -> str:
        catalog = self.host.catalog()  # the same object while nothing changed on disk
        if self._described is None or self._described[0] is not catalog:
            self._described = (catalog, agent_tool_description(catalog))
        return self._described[1]

    def shown_arguments(self, args: dict[str, Any]) -> dict[str, Any] | None:
        """The call as it runs: with ``run_in_background`` when its agent always runs in the
        background (so every adapter treats its block as a background launch)."""
        if args.get("fork") is True or args.get("run_in_background") is True:
            return None
        name = args.get("subagent_type")
        definition = self.host.catalog().get(name) if isinstance(name, str) else None
        return {**args, "run_in_background": True} if definition and definition.background else None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        request = validate(args)
        catalog = self.host.catalog()
        definition = None
        if not request["fork"]:
            definition = catalog.get(request["subagent_type"] or "")
            if definition is None:
                raise ToolError(unknown_type_message(request["subagent_type"], catalog))
        # ``background: true`` in the definition: always in the background (Claude Code).
        background = request["run_in_background"] or bool(definition and definition.background)
        delegation = Delegation(
            prompt=request["prompt"],
            description=request["description"],
            definition=definition,
            # The definition is the floor (WTC-2); a fork is isolated when it can be (FORK-2).
            isolated=request["fork"]
            or request["isolation"] == "worktree"
            or bool(definition and definition.worktree_isolated),
            # Only a fork nobody asked to isolate may fall back to running in place (WT-11).
            in_place_fallback=request["fork"] and request["isolation"] is None,
            background=background,
            timeout=None if background else request["timeout"] or self.host.foreground_timeout,
            report_worktree=not background,
        )
        # A fork ignores subagent_type: its block must not be titled as that subagent.
        shown = {**args, "subagent_type": None} if request["fork"] else args
        record = DelegationRecord.start(shown, new_instance_id())
        record.color = definition.color if definition else None
        if delegation.background:
            # The run's block says it runs in the background, as if the call had asked.
            return start_in_background(
                self.host, delegation, ctx, record, {**args, "run_in_background": True}
            )
        try:
            run = await run_delegation(self.host, delegation, ctx, record)
        except IsolationError as exc:  # WT-11: nothing ran, never silently in place
            raise ToolError(f"Agent delegation failed: {exc}") from exc
        return run.result


def validate(args: dict[str, Any]) -> dict[str, Any]:
    """The call's arguments checked and defaulted; a ``ToolError`` names what is wrong (WTC-3)."""

    def text(key: str, required: bool) -> str | None:
        value = args.get(key)
        if value is None and not required:
            return None
        if not isinstance(value, str) or (required and not value.strip()):
            raise ToolError(f"Agent: '{key}' must be a non-empty string")
        return value

    def flag(key: str) -> bool:
        value = args.get(key, False)
        if not isinstance(value, bool):
            raise ToolError(f"Agent: '{key}' must be true or false")
        return value

    isolation = args.get("isolation")
    if isolation is not None and isolation != "worktree":
        raise ToolError(
            f'Agent: isolation must be "worktree" (or omitted), got {isolation!r}; '
            "nothing was started"
        )
    timeout = args.get("timeout")
    if timeout is not None and (
        isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0
    ):
        raise ToolError("Agent: 'timeout' must be a positive number of seconds")
    return {
        "timeout": timeout,
        "description": text("description", True),
        "prompt": text("prompt", True),
        "subagent_type": text("subagent_type", False),
        "isolation": isolation,
        "run_in_background": flag("run_in_background"),
        "fork": flag("fork"),
    }
