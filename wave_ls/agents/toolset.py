"""Which tools a subagent gets, and how that is summarised for the model (SPEC section 7)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wave_ls.agents.definition import AgentDefinition

# The model-facing tool names of PROTOCOL.md, in the order the runtime registers them.
ALL_TOOL_NAMES: tuple[str, ...] = (
    "Read",
    "Write",
    "Edit",
    "Bash",
    "Grep",
    "Glob",
    "WebFetch",
    "WebSearch",
    "Skill",
    "LSP",
    "Agent",
    "TaskCreate",
    "TaskGet",
    "TaskUpdate",
    "TaskList",
    "TaskOutput",
    "TaskStop",
    "EnterWorktree",
    "ExitWorktree",
    "ExitPlanMode",
    "Artifact",
)

# One level of nesting only, and the task list belongs to the main agent.
NEVER_FOR_SUBAGENTS: frozenset[str] = frozenset(
    {"Agent", "TaskCreate", "TaskGet", "TaskUpdate", "TaskList"}
)

# In a whitelist, "*" means every tool (Claude Code's spelling).
ALL_TOOLS_WILDCARD = "*"


def resolve_tools(
    available: Sequence[str],
    tools: Sequence[str] | None,
    disallowed: Sequence[str] | None,
) -> list[str]:
    """The tools a subagent gets, in the order of ``available``.

    Whitelist intersection first (``None`` or ``"*"`` = everything), then minus the
    blacklist; unknown names on either list are ignored; ``NEVER_FOR_SUBAGENTS`` always go.
    """
    allowed = None if tools is None or ALL_TOOLS_WILDCARD in tools else set(tools)
    blocked = set(disallowed or ()) | NEVER_FOR_SUBAGENTS
    out: list[str] = []
    for name in available:
        if name in blocked or name in out:
            continue
        if allowed is None or name in allowed:
            out.append(name)
    return out


def tool_summary(defn: AgentDefinition) -> str:
    """The tool summary the model reads in the ``Agent`` tool description (FM-4).

    ``"Read, Grep"`` for a whitelist (the resolved tools), ``"All except Edit, Write"`` for a
    blacklist alone (never ``*``), ``"All tools"`` when neither restricts anything, and
    ``"None"`` when nothing is left.
    """
    if defn.tools is not None and ALL_TOOLS_WILDCARD not in defn.tools:
        resolved = resolve_tools(ALL_TOOL_NAMES, defn.tools, defn.disallowed_tools)
        return ", ".join(resolved) if resolved else "None"
    excluded = _known_unique(defn.disallowed_tools or ())
    return "All except " + ", ".join(excluded) if excluded else "All tools"


def _known_unique(names: Sequence[str]) -> list[str]:
    """Known, grantable names in written order, each once."""
    out: list[str] = []
    for name in names:
        if name in ALL_TOOL_NAMES and name not in NEVER_FOR_SUBAGENTS and name not in out:
            out.append(name)
    return out
