"""Which tools a subagent gets, and how that is summarised for the model (SPEC section 7)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from wave_ls.runtime.tool_names import TOOL_NAMES, WaveTool

if TYPE_CHECKING:
    from wave_ls.agents.definition import AgentDefinition

# The model-facing tool names of PROTOCOL.md: the names the registered tools take their own
# from (``Agent`` and the task and worktree tools live in layers this one cannot import;
# tests/test_tool_targets.py checks that every name has its tool). The order is the one tool
# summaries list them in.
ALL_TOOL_NAMES: tuple[str, ...] = TOOL_NAMES

# One level of nesting only, and the task list belongs to the main agent.
NEVER_FOR_SUBAGENTS: frozenset[str] = frozenset(
    tool.value
    for tool in (
        WaveTool.AGENT,
        WaveTool.TASK_CREATE,
        WaveTool.TASK_GET,
        WaveTool.TASK_UPDATE,
        WaveTool.TASK_LIST,
    )
)

# In a whitelist, "*" means every tool (Claude Code's spelling).
ALL_TOOLS_WILDCARD = "*"

# Claude Code's tool names with no tool of that name here: the wave-ls tool that does the
# same work, or None when a subagent never gets one (SPEC section 7). docs/agents.md.
CLAUDE_CODE_TOOLS: dict[str, str | None] = {
    "MultiEdit": WaveTool.EDIT.value,
    "LS": WaveTool.GLOB.value,
    "BashOutput": WaveTool.TASK_OUTPUT.value,
    "KillShell": WaveTool.TASK_STOP.value,
    "KillBash": WaveTool.TASK_STOP.value,
    "NotebookRead": WaveTool.READ.value,
    "TodoWrite": None,
    "TodoRead": None,
    "Task": None,
}
WHY_NEVER = {
    "Task": "subagents cannot delegate",
    WaveTool.AGENT.value: "subagents cannot delegate",
    "TodoWrite": "a subagent never gets the task list",
    "TodoRead": "a subagent never gets the task list",
}
# An MCP tool (``mcp__<server>__<tool>``) or all of a server's (``mcp__<server>``).
MCP_PREFIX = "mcp__"
# The tools that reach MCP servers' resources (given when a server offers resources), and
# Claude Code's names for them.
MCP_RESOURCE_TOOLS: tuple[str, ...] = ("ListMcpResources", "ReadMcpResource")
CLAUDE_CODE_RESOURCE_TOOLS = {
    "ListMcpResourcesTool": "ListMcpResources",
    "ReadMcpResourceTool": "ReadMcpResource",
}


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


def mcp_tool_granted(
    name: str,
    server_prefix: str | None,
    tools: Sequence[str] | None,
    disallowed: Sequence[str] | None,
) -> bool:
    """Whether a subagent gets the MCP tool ``name`` (``mcp__<server>__<tool>``, or a
    resource tool when ``server_prefix`` is None) under its ``tools`` / ``disallowedTools``.

    A list names it by its full name, or all of its server's tools by ``mcp__<server>``
    (also ``mcp__<server>__*``); no whitelist (or ``*``) means every tool.
    """

    def named(names: Sequence[str]) -> bool:
        if name in names:
            return True
        if server_prefix is None:
            return any(CLAUDE_CODE_RESOURCE_TOOLS.get(written) == name for written in names)
        return server_prefix in names or f"{server_prefix}__*" in names

    if disallowed and named(disallowed):
        return False
    if tools is None or ALL_TOOLS_WILDCARD in tools:
        return True
    return named(tools)


def tool_summary(defn: AgentDefinition) -> str:
    """The tool summary the model reads in the ``Agent`` tool description (FM-4).

    ``"Read, Grep"`` for a whitelist (the resolved tools), ``"All except Edit, Write"`` for a
    blacklist alone (never ``*``), ``"All tools"`` when neither restricts anything, and
    ``"None"`` when nothing is left.
    """
    if defn.tools is not None and ALL_TOOLS_WILDCARD not in defn.tools:
        resolved = resolve_tools(ALL_TOOL_NAMES, defn.tools, defn.disallowed_tools)
        # MCP names as written: which of them exist depends on the servers configured.
        extra = [
            name
            for name in defn.tools
            if (name.startswith(MCP_PREFIX) or name in MCP_RESOURCE_TOOLS)
            and name not in (defn.disallowed_tools or ())
        ]
        resolved = [*resolved, *extra]
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


@dataclass(frozen=True)
class ToolName:
    """One name of a ``tools`` / ``disallowedTools`` list, as read.

    ``granted`` is the wave-ls tool it stands for (None: none); ``kind`` says how it was
    read: ``"tool"`` (a tool of that name, or ``*``), ``"mapped"`` (Claude Code's name of a
    wave-ls tool), ``"dropped"`` (never a subagent's; ``why``), ``"rule"`` (``Tool(rule)``:
    the tool, the rule not applied), ``"mcp"`` (an MCP tool) or ``"unknown"``.
    """

    written: str
    kind: str
    granted: str | None = None
    why: str = ""


def read_tool_name(key: str, written: str) -> ToolName:
    """How one written name of the list ``key`` is read (pure; docs/agents.md)."""
    if written == ALL_TOOLS_WILDCARD:
        return ToolName(written, "tool", written)
    if written.startswith(MCP_PREFIX):
        return ToolName(written, "mcp")
    if written in MCP_RESOURCE_TOOLS:
        return ToolName(written, "tool", written)
    if written in CLAUDE_CODE_RESOURCE_TOOLS:
        return ToolName(written, "mapped", CLAUDE_CODE_RESOURCE_TOOLS[written])
    base, paren, _rule = written.partition("(")
    whitelist = key == "tools"
    if base in ALL_TOOL_NAMES:
        if whitelist and base in NEVER_FOR_SUBAGENTS:
            why = WHY_NEVER.get(base, "a subagent never gets the task list")
            return ToolName(written, "dropped", why=why)
        return ToolName(written, "rule" if paren and whitelist else "tool", base)
    if base in CLAUDE_CODE_TOOLS:
        equivalent = CLAUDE_CODE_TOOLS[base]
        if equivalent is None:
            return ToolName(written, "dropped", why=WHY_NEVER.get(base, ""))
        return ToolName(written, "mapped", equivalent)
    return ToolName(written, "unknown")
