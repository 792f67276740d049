"""MCP helpers for the tests: definitions of the test server (``mcp_server.py``), settings
files that define servers, and waiting for a server's status over LSP."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from tests.support.lsp import WaveClient
from tests.support.waiting import eventually_blocking

SERVER_SCRIPT = Path(__file__).with_name("mcp_server.py")


def stdio_server(*args: str, **extra: Any) -> dict[str, Any]:
    """The test server over stdio, as a ``mcpServers`` entry."""
    return {"command": sys.executable, "args": [str(SERVER_SCRIPT), *args], **extra}


def user_servers(home: Path, **servers: dict[str, Any]) -> None:
    """Define ``servers`` in ``$HOME/.wave/settings.json`` (the user's: no approval)."""
    path = home / ".wave" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    data = json.loads(path.read_text()) if path.exists() else {}
    data["mcpServers"] = servers
    path.write_text(json.dumps(data))


def project_servers(project: Path, **servers: dict[str, Any]) -> Path:
    """Define ``servers`` in the project's ``.mcp.json``."""
    path = project / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


async def wait_status(
    client: WaveClient, name: str, status: str, timeout: float = 30
) -> dict[str, Any]:
    """The ``mcpStatus`` update saying ``name`` reached ``status``."""
    return await client.wait_update(
        lambda u: u.get("kind") == "mcpStatus" and u.get("name") == name and u["status"] == status,
        timeout,
    )


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def http_server(*args: str, transport: str = "http") -> Iterator[str]:
    """The test server over streamable HTTP (or ``sse``) on a free loopback port; yields its
    URL."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(SERVER_SCRIPT), f"--{transport}", str(port), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:

        def listening() -> bool:
            if process.poll() is not None:
                raise RuntimeError("the HTTP test server exited")
            with socket.socket() as probe:
                return probe.connect_ex(("127.0.0.1", port)) == 0

        # It says nothing when it listens: its port is tried (30 s: a first import is slow).
        eventually_blocking(listening, 30)
        yield f"http://127.0.0.1:{port}/{'mcp' if transport == 'http' else 'sse'}"
    finally:
        process.terminate()
        process.wait(10)
