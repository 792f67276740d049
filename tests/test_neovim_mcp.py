"""MCP servers in the Neovim plugin (issue 26): headless Neovim 0.11, a real ``wave-ls``
started by the plugin, the offline model, and real MCP servers written with the ``mcp`` SDK
(``tests/support/mcp_server.py``); the scenario is ``tests/neovim/mcp.lua``."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.fake_model import FakeModelServer, call, reply, route
from tests.support.mcp_helpers import project_servers, stdio_server, user_servers
from tests.support.neovim import nvim_env, run_scenario
from tests.test_lsp_delegation import tool_names, tool_results

SCRIPT = {
    "routes": [
        route("hello", reply("Hello.")),
        route("peek with proj", reply("", call("mcp__proj__peek", {"what": "x"})), reply("Done.")),
    ],
    "default": {"content": "Noted."},
}


def test_wave_mcp_lists_approves_and_denies_servers_and_checkhealth_lists_them(
    project: Path, home: Path
) -> None:
    user_servers(home, srv=stdio_server(), bad={"command": str(project / "no-such-server")})
    project_servers(project, proj=stdio_server())  # untracked: approval only
    with FakeModelServer(SCRIPT) as model:
        run_scenario("mcp", project, nvim_env(home, model), timeout=150)
        bodies = model.chat_bodies()
    peek = next(b for b in bodies if "mcp__proj__peek" in tool_names(b))
    assert not any("mcp__bad" in name for name in tool_names(peek))
    assert tool_results(bodies[-1]) == ["peeked x"]
    kept = json.loads((home / ".wave" / "mcp-approvals.json").read_text())["projects"]
    assert kept[str(project.resolve())]["proj"]["approved"] is False  # denied last
