"""A published MCP server that no one here wrote: npm's
``@modelcontextprotocol/server-filesystem``, installed from the committed lockfile in
``tests/mcp_npm/`` (``npm ci`` there: ``.ci/run`` does). Skipped only when it is not
installed."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.fake_model import FakeModelServer, call, reply, route
from tests.support.mcp_helpers import user_servers, wait_status
from tests.test_lsp_delegation import bodies_for, delegate, tool_results
from tests.test_lsp_mcp import mcp_tools, open_session, send, server, servers

SERVER = Path(__file__).parent / "mcp_npm" / "node_modules" / ".bin" / "mcp-server-filesystem"

pytestmark = pytest.mark.skipif(
    not SERVER.exists(), reason="tests/mcp_npm/node_modules is absent (npm ci there)"
)


async def test_the_filesystem_server_from_npm_reads_asks_and_serves_explore(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    (project / "notes.txt").write_text("from the published server\n")
    user_servers(home, fs={"command": str(SERVER), "args": [str(project)]})
    target, notes = project / "written.txt", str(project / "notes.txt")
    fake_model.set_script(
        {
            "routes": [
                route(
                    "read it",
                    reply("", call("mcp__fs__read_text_file", {"path": notes})),
                    reply(
                        "",
                        call("mcp__fs__write_file", {"path": str(target), "content": "x"}),
                    ),
                    reply("", delegate("Explore", "EXPLORE FS")),
                    reply("read"),
                ),
                route("EXPLORE FS", reply("seen")),
            ]
        }
    )
    async with server(fake_model, home) as client:
        sid = await open_session(client, project, mode="default")
        connected = await wait_status(client, "fs", "connected")
        result = await send(client, sid, "read it")
        listed = await servers(client, project)
    assert result["text"] == "read"
    assert "mcp__fs__read_text_file" in connected["tools"]
    bodies = bodies_for(fake_model, "read it")
    assert tool_results(bodies[1])[-1].strip() == "from the published server"
    # write_file is not annotated read-only: it asks in default mode (no one to ask here).
    assert "denied" in tool_results(bodies[2])[-1].lower() and not target.exists()
    explore = set(mcp_tools(bodies_for(fake_model, "EXPLORE FS")[0]))
    assert "mcp__fs__read_text_file" in explore
    assert not explore & {"mcp__fs__write_file", "mcp__fs__edit_file", "mcp__fs__move_file"}
    assert listed["fs"]["status"] == "connected"
