"""A subagent's MCP tools: which of its session's servers' tools it gets, and the servers
its own frontmatter starts for it alone (docs/mcp.md).

- ``tools`` / ``disallowedTools`` filter MCP tools by full name and by ``mcp__<server>``
  (``agents.toolset.mcp_tool_granted``); Explore and Plan get only the tools their server
  annotates ``readOnlyHint: true``.
- ``mcpServers`` in the frontmatter: names of configured servers (the subagent waits for
  them before its first request), or inline definitions (scope ``agent``), started when it
  starts and stopped when it ends. A project agent file's inline servers ask first, like a
  ``.mcp.json``'s (and wait for workspace trust when git tracks the file).
- A subagent that names MCP servers or tools waits (at most the start-up timeout) until
  those servers have connected or failed, so its tool list is complete from its first
  request; one that names none never waits.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from wave_ls.agents import AgentDefinition
from wave_ls.agents.toolset import MCP_PREFIX, mcp_tool_granted

if TYPE_CHECKING:
    from wave_ls.mcp.config import ServerSpec
    from wave_ls.mcp.manager import McpHandle
    from wave_ls.runtime.core import Tool

log = logging.getLogger(__name__)

NO_MCP_TOOLS_NOTE = (
    "note: this subagent lists only MCP tools ({names}) and none of them is available "
    "(no connected MCP server offers them), so it ran without tools"
)


@dataclass
class SessionMcp:
    """What a session lends its subagents of its MCP servers."""

    tools: Callable[[], Sequence[Tool]] = lambda: []
    wait: Callable[[Collection[str] | None], Awaitable[None]] | None = None
    # Opens a handle with the given inline servers (owned by the subagent's run).
    open_own: Callable[[Sequence[ServerSpec]], McpHandle] | None = None


@dataclass
class AgentServers:
    """One run's MCP side: its own servers' handle (if any) and the session's tools."""

    definition: AgentDefinition
    session: SessionMcp
    read_only: bool
    own: McpHandle | None = None
    named: tuple[str, ...] = ()
    warnings: list[str] = field(default_factory=list)

    def tools(self) -> list[Tool]:
        """The MCP tools this subagent gets now (its own servers' first)."""
        own = self.own.tools() if self.own is not None else []
        mine = {tool.name for tool in own}
        offered = [*own, *(t for t in self.session.tools() if t.name not in mine)]
        return [tool for tool in offered if self.granted(tool)]

    def granted(self, tool: Tool) -> bool:
        info = getattr(tool, "info", None)  # an MCP server's tool (else a resource tool)
        prefix = info.prefix if info is not None else None
        defn = self.definition
        if not mcp_tool_granted(tool.name, prefix, defn.tools, defn.disallowed_tools):
            return False
        return not self.read_only or tool.effect == "read"

    async def ready(self, timeout: float) -> None:
        """Wait for the servers this subagent names (nothing when it names none)."""
        wanted = self.wanted()
        if wanted is None:
            return
        if self.own is not None:
            await self.own.wait_for(None, timeout)
        elif self.session.wait is not None:
            await self.session.wait(wanted or None)

    def wanted(self) -> set[str] | None:
        """The servers to wait for (empty: any), or None when the definition names none."""
        listed = [*(self.definition.tools or ()), *(self.definition.disallowed_tools or ())]
        servers = {name[len(MCP_PREFIX) :].split("__")[0] for name in listed if _mcp(name)}
        if not servers and not self.named and self.own is None:
            return None
        return {*servers, *self.named}

    async def close(self) -> None:
        if self.own is not None:
            await self.own.close()


def _mcp(name: str) -> bool:
    return name.startswith(MCP_PREFIX)


def agent_servers(
    definition: AgentDefinition, session: SessionMcp, read_only: bool
) -> AgentServers:
    """The run's MCP side; its own servers are started here (in the background)."""
    run = AgentServers(definition, session, read_only)
    written = definition.extra.get("mcpServers")
    if not written:
        return run
    names, specs, warnings = _frontmatter_servers(definition, written)
    run.named, run.warnings = tuple(names), warnings
    for warning in warnings:
        log.warning("%s: %s", definition.path or definition.name, warning)
    if specs and session.open_own is not None:
        run.own = session.open_own(specs)
        run.own.start()
    return run


def _frontmatter_servers(
    definition: AgentDefinition, written: str
) -> tuple[list[str], list[ServerSpec], list[str]]:
    from wave_ls.mcp.config import agent_servers as parse

    data = _yaml(written)
    tracked = False
    if definition.path is not None and definition.source == "project":
        from wave_ls.runtime.trust import from_repository

        tracked = from_repository(definition.path)
    return parse(
        data,
        source=definition.path,
        from_repository=tracked,
        ask_first=definition.source == "project",
    )


def _yaml(text: str) -> Any:
    """The frontmatter value (kept as its YAML source) as plain data."""
    import strictyaml

    try:
        return _plain(strictyaml.dirty_load(text, allow_flow_style=True).data)
    except Exception:  # a value the loader kept but YAML cannot read: its text
        return text


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def mcp_note(definition: AgentDefinition, granted: Collection[str]) -> str | None:
    """The note for the main model when the ``tools`` list named only MCP tools and the
    subagent got none of them (their server is not configured or not connected)."""
    if not definition.mcp_tools or granted:
        return None
    return NO_MCP_TOOLS_NOTE.format(names=", ".join(definition.mcp_tools))
