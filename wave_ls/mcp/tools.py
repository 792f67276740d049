"""MCP servers' tools as tools of an agent: ``mcp__<server>__<tool>``, plus the resource tools
``ListMcpResources`` and ``ReadMcpResource`` (Claude Code's names and shapes).

Each tool carries one ``McpToolInfo``: what the permission policy, the subagent filters and
the renderers read (its effect, whether the server annotates it read-only, its key
argument), in one place (issue 29's descriptor).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, overload

from wave_ls.mcp.config import tool_name_part
from wave_ls.mcp.connection import CallFailed, Connection
from wave_ls.mcp.results import call_result_text, cut, resource_text
from wave_ls.runtime.core import Effect, Tool, ToolContext, ToolError, ToolKind, ToolResult

DESCRIPTION_LIMIT = 2048
LIST_RESOURCES = "ListMcpResources"
READ_RESOURCE = "ReadMcpResource"


def full_name(server: str, tool: str) -> str:
    """``mcp__<server>__<tool>``, each part with Claude Code's character rule."""
    return f"mcp__{tool_name_part(server)}__{tool_name_part(tool)}"


@dataclass(frozen=True)
class McpToolInfo:
    """How one MCP tool is described: to the policy (``effect``: ``read`` when the server
    annotates it ``readOnlyHint: true``, else ``other``, which asks in ``default`` mode),
    to the filters (``server``, ``read_only``) and to the renderers (``title``,
    ``key_argument``: its first required string parameter, else its first string one)."""

    name: str
    server: str
    tool: str
    title: str
    read_only: bool
    key_argument: str | None

    @property
    def effect(self) -> Effect:
        return "read" if self.read_only else "other"

    @property
    def prefix(self) -> str:
        """``mcp__<server>``: how a tools list names all of this server's tools."""
        return f"mcp__{tool_name_part(self.server)}"

    def to_json(self) -> dict[str, Any]:
        """What a tool block's ``details.mcp`` carries."""
        out: dict[str, Any] = {"server": self.server, "tool": self.tool, "readOnly": self.read_only}
        if self.title != self.tool:
            out["title"] = self.title
        if self.key_argument:
            out["keyArgument"] = self.key_argument
        return out


def _is_text(spec: object) -> bool:
    return isinstance(spec, dict) and spec.get("type") == "string"


def tool_info(server: str, remote: Any) -> McpToolInfo:
    annotations = getattr(remote, "annotations", None)
    read_only = bool(getattr(annotations, "read_only_hint", None) is True)
    title = getattr(remote, "title", None) or getattr(annotations, "title", None) or remote.name
    schema = remote.input_schema if isinstance(remote.input_schema, dict) else {}
    properties = schema.get("properties") if isinstance(schema.get("properties"), dict) else {}
    texts = [name for name, spec in (properties or {}).items() if _is_text(spec)]
    required = set(schema.get("required") or [])
    # The first required text parameter, else the first text one (a tool whose parameters
    # all have defaults still has one that says what it works on).
    key = next((name for name in texts if name in required), texts[0] if texts else None)
    return McpToolInfo(full_name(server, remote.name), server, remote.name, title, read_only, key)


class McpTool:
    """One tool of one server."""

    def __init__(self, connection: Connection, remote: Any, timeout: Callable[[], float]) -> None:
        self.connection = connection
        self.info = tool_info(connection.spec.name, remote)
        self.name = self.info.name
        self.effect: Effect = self.info.effect
        self.kind: ToolKind = "other"
        self.key_argument = self.info.key_argument
        # Read-only calls may run side by side; the others one at a time, in order.
        self.concurrency_safe = self.info.read_only
        self.parameters = parameters_of(remote.input_schema)
        text = (remote.description or self.info.title or "").strip()
        self._description = text[:DESCRIPTION_LIMIT] or f"Tool {remote.name} of MCP server"
        self.timeout = timeout

    @property
    def description(self) -> str:
        return self._description

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        details = {"mcp": self.info.to_json()}
        try:
            result = await self.connection.call_tool(self.info.tool, args, self.timeout())
        except CallFailed as exc:
            return ToolResult(str(exc), is_error=True, short_result="error", details=details)
        text, failed = call_result_text(result)
        short = "error" if failed else _first_line(text)
        return ToolResult(text, is_error=failed, short_result=short, details=details)


def parameters_of(schema: Any) -> dict[str, Any]:
    """The server's input schema, as an object schema the model endpoint accepts."""
    if not isinstance(schema, dict):
        return {"type": "object", "properties": {}}
    out = dict(schema)
    out["type"] = "object"
    if not isinstance(out.get("properties"), dict):
        out["properties"] = {}
    return out


def _first_line(text: str, limit: int = 80) -> str:
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return line if len(line) <= limit else line[: limit - 1] + "…"


class ResourceTools:
    """``ListMcpResources`` and ``ReadMcpResource`` over the servers an agent has."""

    def __init__(self, connections: Callable[[], Sequence[Connection]], timeout: float) -> None:
        self.connections = connections
        self.timeout = timeout

    def tools(self) -> list[Tool]:
        return [ListResourcesTool(self), ReadResourceTool(self)]

    def with_resources(self, server: str | None = None) -> list[Connection]:
        found = [c for c in self.connections() if c.resources and c.status == "connected"]
        if server is None:
            return found
        named = [c for c in self.connections() if c.spec.name == server]
        if not named:
            known = ", ".join(c.spec.name for c in self.connections()) or "(none)"
            raise ToolError(f"No MCP server named '{server}'. Servers: {known}")
        return named


LIST_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "server": {"type": "string", "description": "Only this server's resources"},
    },
    "additionalProperties": False,
}

READ_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "server": {"type": "string", "description": "The MCP server's name"},
        "uri": {"type": "string", "description": "The resource's URI"},
    },
    "required": ["server", "uri"],
    "additionalProperties": False,
}


class ListResourcesTool:
    name = LIST_RESOURCES
    effect: Effect = "read"
    kind: ToolKind = "other"
    key_argument: str | None = "server"
    concurrency_safe = True
    description = (
        "List the resources (files, records, documents) that the connected MCP servers "
        "offer, with their URIs; read one with ReadMcpResource."
    )
    parameters = LIST_PARAMETERS

    def __init__(self, owner: ResourceTools) -> None:
        self.owner = owner

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        server = args.get("server")
        if server is not None and not isinstance(server, str):
            raise ToolError("ListMcpResources: 'server' must be a string")
        listed: list[dict[str, Any]] = []
        problems: list[str] = []
        for connection in self.owner.with_resources(server or None):
            try:
                resources = await connection.list_resources(self.owner.timeout)
            except CallFailed as exc:
                problems.append(str(exc))
                continue
            for resource in resources:
                item = {"server": connection.spec.name, "uri": str(resource.uri)}
                item["name"] = resource.name
                if resource.mime_type:
                    item["mimeType"] = resource.mime_type
                if resource.description:
                    item["description"] = resource.description
                listed.append(item)
        text = json.dumps(listed, ensure_ascii=False, indent=1) if listed else "No resources."
        if problems:
            text += "\n" + "\n".join(problems)
        return ToolResult(cut(text), short_result=f"{len(listed)} resources")


class ReadResourceTool:
    name = READ_RESOURCE
    effect: Effect = "read"
    kind: ToolKind = "other"
    key_argument: str | None = "uri"
    concurrency_safe = True
    description = "Read one resource of an MCP server by its URI (see ListMcpResources)."
    parameters = READ_PARAMETERS

    def __init__(self, owner: ResourceTools) -> None:
        self.owner = owner

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        server, uri = args.get("server"), args.get("uri")
        if not isinstance(server, str) or not server or not isinstance(uri, str) or not uri:
            raise ToolError("ReadMcpResource: 'server' and 'uri' must be non-empty strings")
        connection = self.owner.with_resources(server)[0]
        try:
            result = await connection.read_resource(uri, self.owner.timeout)
        except CallFailed as exc:
            raise ToolError(str(exc)) from exc
        text = "\n".join(resource_text(item) for item in result.contents) or "(empty)"
        return ToolResult(cut(text), short_result=uri)


class LiveTools(Sequence[Tool]):
    """An agent's tools: its fixed ones, then what ``extra`` gives at the time asked (MCP
    tools join and leave between model rounds; the loop reads the list each round)."""

    def __init__(self, fixed: Sequence[Tool], extra: Callable[[], Sequence[Tool]]) -> None:
        self.fixed = list(fixed)
        self.extra = extra

    def _all(self) -> list[Tool]:
        extra = self.extra()
        if not extra:
            return self.fixed
        taken = {tool.name for tool in self.fixed}
        return [*self.fixed, *(tool for tool in extra if tool.name not in taken)]

    @overload
    def __getitem__(self, index: int) -> Tool: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[Tool]: ...

    def __getitem__(self, index: int | slice) -> Tool | Sequence[Tool]:
        return self._all()[index]

    def __len__(self) -> int:
        return len(self._all())

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._all())
