"""``wave-ls doctor`` lists the folder's MCP servers (issue 26): the ones that may start are
started once and report their tools; the others say why they wait."""

from __future__ import annotations

from pathlib import Path

from tests.support.mcp_helpers import project_servers, stdio_server, user_servers
from tests.test_cli_doctor import checks, doctor


def test_doctor_lists_each_server_with_its_status(project: Path, home: Path) -> None:
    user_servers(home, srv=stdio_server(), missing={"command": "no-such-mcp-server-here"})
    project_servers(project, proj=stdio_server())
    done = doctor(project, home, "--json")
    mcp = checks(done)["mcp"]
    assert mcp["level"] == "warn" and mcp["summary"] == "3 servers, 1 failed"
    details = "\n".join(mcp["details"])
    assert "srv (user, stdio): connected, 10 tools" in details
    assert "missing (user, stdio): failed" in details and "no-such-mcp-server-here" in details
    assert "proj (project, stdio): needs-approval" in details


def test_doctor_without_servers_says_so(project: Path, home: Path) -> None:
    mcp = checks(doctor(project, home, "--json"))["mcp"]
    assert mcp["level"] == "ok" and mcp["summary"] == "no MCP servers"
