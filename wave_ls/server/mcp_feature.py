"""MCP servers for the client: ``wave/mcp/list``, ``wave/mcp/approve``, and the ``mcpStatus``
session updates (docs/mcp.md, docs/protocol.md)."""

from __future__ import annotations

from pathlib import Path

from pygls.exceptions import JsonRpcInvalidParams

from wave_ls.mcp.status_events import on_status
from wave_ls.server.app import WaveServer
from wave_ls.server.params import existing_dir, require_object, required_str

MCP_LIST = "wave/mcp/list"
MCP_APPROVE = "wave/mcp/approve"


def register(server: WaveServer) -> None:
    def status_changed(folder: Path, owner: str | None, row: dict[str, object]) -> None:
        """Each live session that uses the server hears the change."""
        registry = server.sessions
        for session_id, session in list(registry.sessions.items()):
            if owner == session_id or (owner is None and session.cwd == folder):
                sink = registry.sinks.get(session_id)
                if sink is not None:
                    sink.push({"kind": "mcpStatus", **row})

    on_status(status_changed)

    @server.feature(MCP_LIST)
    async def mcp_list(ls: WaveServer, params: object) -> dict[str, object]:
        from wave_ls.mcp.manager import default_manager

        p = require_object(params, MCP_LIST)
        cwd = existing_dir(required_str(p, "cwd", MCP_LIST), "cwd", MCP_LIST)
        return {"servers": await default_manager().list(cwd, ls.home)}

    @server.feature(MCP_APPROVE)
    async def mcp_approve(ls: WaveServer, params: object) -> dict[str, object]:
        from wave_ls.mcp.manager import UnknownServer, default_manager

        p = require_object(params, MCP_APPROVE)
        cwd = existing_dir(required_str(p, "cwd", MCP_APPROVE), "cwd", MCP_APPROVE)
        name = required_str(p, "name", MCP_APPROVE)
        approved = p.get("approved")
        if not isinstance(approved, bool):
            raise JsonRpcInvalidParams(f"{MCP_APPROVE}: 'approved' must be true or false")
        try:
            status = await default_manager().approve(cwd, ls.home, name, approved)
        except UnknownServer:
            raise JsonRpcInvalidParams(
                f"{MCP_APPROVE}: no MCP server named {name!r} is defined for {cwd}"
            ) from None
        return {"status": status}
