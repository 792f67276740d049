"""The end of a server's life: shutdown, exit, and processes that must not outlive it
(issue 12, defect 6)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

from tests.support.fake_model import FakeModelServer, call, reply, route
from tests.support.lsp import server_env, wave_client
from tests.support.processes import alive
from tests.support.raw_stdio import RawServer


async def test_a_request_after_shutdown_is_an_invalid_request(home: Path) -> None:
    server = await RawServer.start(home)
    try:
        await server.initialize()
        assert (await server.request(1, "shutdown"))["result"] is None
        late = await server.request(2, "wave/agents/list", {})
        assert late["error"]["code"] == -32600
        assert "shutting down" in late["error"]["message"]
        server.send({"jsonrpc": "2.0", "method": "exit"})
        assert await server.wait() == 0
    finally:
        await server.close()


async def test_exit_without_shutdown_exits_with_code_1(home: Path) -> None:
    server = await RawServer.start(home)
    try:
        await server.initialize()
        server.send({"jsonrpc": "2.0", "method": "exit"})
        assert await server.wait() == 1
    finally:
        await server.close()


def marked_processes(mark: str) -> list[int]:
    """Live processes whose environment holds ``mark`` (what the server started)."""
    found = []
    needle = mark.encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            environ = Path(f"/proc/{entry}/environ").read_bytes()
        except OSError:
            continue
        if needle in environ and alive(int(entry)):
            found.append(int(entry))
    return found


async def test_a_background_command_dies_with_a_killed_server(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    mark = f"WAVE_TEST_MARK_{uuid.uuid4().hex}=1"
    name, _, value = mark.partition("=")
    command = "bash -c 'sleep 100 & sleep 100'"
    fake_model.set_script(
        {
            "routes": [
                route(
                    "start the sleeper",
                    reply("", call("Bash", {"command": command, "run_in_background": True})),
                    reply("Started."),
                ),
                route("", reply("ok")),
            ]
        }
    )
    env = server_env(home, fake_model.base_url, **{name: value})
    async with wave_client(env) as client:
        sid = (
            await client.request(
                "wave/session/new", {"cwd": str(project), "permissionMode": "bypassPermissions"}
            )
        )["sessionId"]
        result = await client.request(
            "wave/chat/send", {"sessionId": sid, "text": "start the sleeper"}
        )
        assert result["text"] == "Started."
        server = client._server
        assert server is not None
        deadline = time.monotonic() + 10
        while len(marked_processes(mark)) < 4 and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        started = [pid for pid in marked_processes(mark) if pid != server.pid]
        # bash (the tool's shell), bash -c, and the two sleeps
        assert len(started) >= 3, started
        os.kill(server.pid, signal.SIGKILL)
        await server.wait()
        deadline = time.monotonic() + 5
        while marked_processes(mark) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        left = marked_processes(mark)
        for pid in left:  # do not leave them to the next test
            os.kill(pid, signal.SIGKILL)
        assert left == [], "processes outlived the server by 5 s"


# The server starts with the collector off (``cli.main``) and turns it back on once the
# ``initialize`` answer is out, when it also starts the process reaper; run in its own
# interpreter, as the collector and the reaper are process-wide.
COLLECTOR_AROUND_INITIALIZE = """
import asyncio, gc, json
from wave_ls.runtime.processes import reaper
from wave_ls.server.app import create_server

gc.disable()
server = create_server()
sent = []

class Writer:
    def write(self, data): sent.append(data)
    def close(self): pass

server.protocol.set_writer(Writer())
initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"processId": None, "rootUri": None, "capabilities": {}}}

async def main():
    server.protocol.handle_message(server.protocol.structure_message(initialize))
    answered = [json.loads(data.split(b"\\r\\n\\r\\n", 1)[1]) for data in sent]
    during = gc.isenabled(), reaper.pid
    await asyncio.sleep(0)
    print(json.dumps({"answered": [a.get("id") for a in answered], "during": during,
                      "after": [gc.isenabled(), reaper.pid], "frozen": gc.get_freeze_count()}))

asyncio.run(main())
"""


def test_the_collector_and_the_reaper_start_once_initialize_is_answered(home: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", COLLECTOR_AROUND_INITIALIZE],
        env=server_env(home),
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    state = json.loads(done.stdout)
    assert state["answered"] == [1]  # the answer went out while the collector was still off
    assert state["during"] == [False, None]
    collecting, reaper_pid = state["after"]
    assert collecting is True
    assert state["frozen"] > 10_000  # start-up's long-lived objects, never walked again
    assert isinstance(reaper_pid, int)  # before any command can start
