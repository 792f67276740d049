"""The end of a server's life: shutdown, exit, and processes that must not outlive it
(issue 12, defect 6)."""

from __future__ import annotations

import contextlib
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
from tests.support.waiting import eventually, until


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
        await eventually(lambda: len(marked_processes(mark)) >= 4, 10)
        started = [pid for pid in marked_processes(mark) if pid != server.pid]
        # bash (the tool's shell), bash -c, and the two sleeps
        assert len(started) >= 3, started
        os.kill(server.pid, signal.SIGKILL)
        await server.wait()
        await eventually(lambda: not marked_processes(mark), 5)
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
    await asyncio.sleep(0)  # a yield, not a wait: what answering initialize scheduled runs
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


# issue 25 point 4 (and 3, "exit when the editor is gone"): LSP says the server exits once
# initialize's processId is gone; the end of stdin ends it too, even with a request stuck.


async def initialize_for(server: RawServer, pid: int) -> None:
    params: dict[str, object] = {"processId": pid, "rootUri": None, "capabilities": {}}
    assert "result" in await server.request(0, "initialize", params)
    server.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})


async def test_a_process_id_that_is_already_dead_ends_the_server(home: Path) -> None:
    gone = subprocess.Popen(["true"])
    gone.wait()
    server = await RawServer.start(home)
    try:
        await initialize_for(server, gone.pid)
        assert await server.wait(10) == 1
    finally:
        await server.close()


async def test_the_server_ends_when_the_editor_process_ends(home: Path) -> None:
    editor = subprocess.Popen(["sleep", "600"])
    server = await RawServer.start(home)
    try:
        await initialize_for(server, editor.pid)
        listed = await server.request(1, "wave/agents/list", {})
        assert listed["result"]["agents"]  # it serves while the editor runs
        editor.kill()
        editor.wait()
        assert await server.wait(10) == 1
    finally:
        editor.kill()
        await server.close()


HUNG_GIT = """#!/bin/sh
echo $$ >> "{started}"
exec sleep 600
"""


async def test_the_end_of_stdin_ends_the_server_while_a_request_is_stuck(
    home: Path, project: Path, tmp_path: Path
) -> None:
    # A git that never answers (as one reading a planted FIFO): `@` completion's file
    # listing waits for it in a thread. Without the exit timer the server waited for that
    # thread after the editor had gone (37 minutes seen; here git's own 20 s timeout).
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    started = tmp_path / "git-started"
    git = bin_dir / "git"
    git.write_text(HUNG_GIT.format(started=started))
    git.chmod(0o755)
    server = await RawServer.start(home, PATH=f"{bin_dir}:{os.environ['PATH']}")
    try:
        params: dict[str, object] = {
            "processId": os.getpid(),
            "rootUri": project.as_uri(),
            "capabilities": {},
        }
        assert "result" in await server.request(0, "initialize", params)
        completion = {"text": "@src", "cursor": 4}
        server.send(
            {"jsonrpc": "2.0", "id": 1, "method": "wave/chatInput/completion", "params": completion}
        )
        await until(started.exists, 20, "the request to run git")
        assert server.process.stdin is not None
        server.process.stdin.close()  # the editor is gone; git never answers
        ended = time.monotonic()
        await server.wait(30)
        assert time.monotonic() - ended < 10
    finally:
        await server.close()
        for pid in started.read_text().split() if started.exists() else []:
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(pid), signal.SIGKILL)


async def test_a_server_told_not_to_watch_the_editor_keeps_serving(home: Path) -> None:
    gone = subprocess.Popen(["true"])
    gone.wait()
    server = await RawServer.start(home, WAVE_WATCH_PROCESS_ID="0")  # in a container, say
    try:
        await initialize_for(server, gone.pid)
        listed = await server.request(1, "wave/agents/list", {})
        assert listed["result"]["agents"]
        server.send({"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
        assert "error" not in await server.response(2)
        server.send({"jsonrpc": "2.0", "method": "exit"})
        assert await server.wait() == 0  # not 1, as after the editor's end
    finally:
        await server.close()
