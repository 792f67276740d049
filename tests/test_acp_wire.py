"""``wave-ls acp`` on the wire: nothing but JSON-RPC on stdout, protocol names as ACP spells
them, and the prompt's answer after every update of its turn."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.support.acp_client import agent_command
from tests.support.fake_model import FakeModelServer, call, reply, route
from tests.support.lsp import server_env

STRAY = """
import os
from wave_ls.acp.stdio import claim_stdio
fd_in, fd_out = claim_stdio()
print("a stray print", flush=True)
os.system("echo a child process")
os.write(fd_out, os.read(fd_in, 100))
"""


def test_stray_output_goes_to_stderr_not_to_the_protocol() -> None:
    done = subprocess.run(
        [sys.executable, "-c", STRAY], input=b"protocol line\n", capture_output=True, timeout=30
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == b"protocol line\n"
    assert b"a stray print" in done.stderr and b"a child process" in done.stderr


class RawAgent:
    """Newline-delimited JSON-RPC, written and read by hand."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.lines: list[bytes] = []
        self.next_id = 0

    async def request(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        self.next_id += 1
        wanted = self.next_id
        message = {"jsonrpc": "2.0", "id": wanted, "method": method, "params": params}
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        await self.process.stdin.drain()
        while True:
            line = await asyncio.wait_for(self.process.stdout.readline(), 30)
            assert line, "the agent closed its stdout"
            self.lines.append(line)
            received = json.loads(line)  # every line is one JSON-RPC message
            assert received["jsonrpc"] == "2.0"
            if received.get("id") == wanted and "method" not in received:
                assert "error" not in received, received
                result: dict[str, Any] = received["result"]
                return result

    def notifications(self) -> list[dict[str, Any]]:
        return [m for m in map(json.loads, self.lines) if m.get("method") == "session/update"]


async def test_only_json_rpc_reaches_stdout_and_the_answer_comes_last(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    noisy = "echo to-stdout; echo to-stderr >&2; python3 -c 'print(42)'"
    fake_model.set_script(
        {"routes": [route("be noisy", reply("", call("Bash", {"command": noisy})), reply("Done."))]}
    )
    process = await asyncio.create_subprocess_exec(
        *agent_command(),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=server_env(home, fake_model.base_url),
    )
    agent = RawAgent(process)
    try:
        init = await agent.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        assert init["agentCapabilities"]["loadSession"] is True
        assert init["agentCapabilities"]["promptCapabilities"]["embeddedContext"] is True
        session = await agent.request("session/new", {"cwd": str(project), "mcpServers": []})
        sid = session["sessionId"]
        assert session["modes"]["currentModeId"] == "default"
        await agent.request("session/set_mode", {"sessionId": sid, "modeId": "bypassPermissions"})
        prompt = [{"type": "text", "text": "be noisy"}]
        answer = await agent.request("session/prompt", {"sessionId": sid, "prompt": prompt})
        assert answer == {"stopReason": "end_turn"}
        kinds = [n["params"]["update"]["sessionUpdate"] for n in agent.notifications()]
        # All of the turn came before the answer: the text, then how full the window is.
        assert kinds[-2:] == ["agent_message_chunk", "usage_update"]
        assert {"tool_call", "tool_call_update", "available_commands_update"} <= set(kinds)
        bash = [
            n["params"]["update"]
            for n in agent.notifications()
            if n["params"]["update"].get("toolCallId")
        ]
        assert bash[-1]["status"] == "completed"
        assert "to-stdout" in bash[-1]["content"][0]["content"]["text"]  # the tool's own output
    finally:
        assert process.stdin is not None
        process.stdin.close()
        await asyncio.wait_for(process.wait(), 20)
    assert process.returncode == 0


# issue 25 point 4: a line that is an array, a number or a string ended `wave-ls acp` (an
# AttributeError in the acp package's receive loop); invalid JSON, an object without method
# or id, NUL bytes and invalid UTF-8 were never answered. Now as over LSP.
BAD_LINES = {
    "array": (b"[1, 2]", -32600),
    "number": (b"42", -32600),
    "string": (b'"session/new"', -32600),
    "not-json": (b'{"jsonrpc": "2.0", "id": 3, "method": ', -32700),
    "neither-method-nor-id": (b'{"jsonrpc": "2.0", "params": {}}', -32600),
    "nul-byte": (b'{"jsonrpc": "2.0", "id": 4,\x00 "method": "initialize"}', -32700),
    "invalid-utf8": (b'{"jsonrpc": "2.0", "id": 5, "method": "x\xff"}', -32700),
    "error-not-an-object": (b'{"jsonrpc": "2.0", "id": 0, "error": "boom"}', -32600),
}
NO_JSONRPC = b'{"id": 6, "method": "initialize", "params": {}}'  # answered with its id


async def next_message(process: asyncio.subprocess.Process) -> dict[str, Any]:
    assert process.stdout is not None
    line = await asyncio.wait_for(process.stdout.readline(), 30)
    assert line, "the agent closed its stdout"
    message: dict[str, Any] = json.loads(line)
    return message


async def test_bad_lines_are_answered_and_the_agent_keeps_serving(
    home: Path, project: Path
) -> None:
    process = await asyncio.create_subprocess_exec(
        *agent_command(),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=server_env(home),
    )
    agent = RawAgent(process)
    assert process.stdin is not None
    try:
        for name, (line, code) in BAD_LINES.items():
            process.stdin.write(line + b"\n")
            await process.stdin.drain()
            answer = await next_message(process)
            assert answer["id"] is None, name
            assert answer["error"]["code"] == code, (name, answer)
        process.stdin.write(NO_JSONRPC + b"\n")
        answer = await next_message(process)
        assert (answer["id"], answer["error"]["code"]) == (6, -32600)
        process.stdin.write(b"\n   \n")  # blank lines are no messages
        init = await agent.request("initialize", {"protocolVersion": 1, "clientCapabilities": {}})
        assert init["agentCapabilities"]["loadSession"] is True
        for cwd in ("/" + "x" * 10_000_000, "/tmp/\0nul", "relative"):
            agent.next_id += 1
            message = {
                "jsonrpc": "2.0",
                "id": agent.next_id,
                "method": "session/new",
                "params": {"cwd": cwd, "mcpServers": []},
            }
            process.stdin.write(json.dumps(message).encode() + b"\n")
            answer = await next_message(process)
            assert answer["id"] == agent.next_id
            assert answer["error"]["code"] == -32602, answer["error"]["message"][:200]
            assert len(answer["error"]["message"]) < 2000  # the path is not echoed whole
        session = await agent.request("session/new", {"cwd": str(project), "mcpServers": []})
        assert session["sessionId"]
    finally:
        process.stdin.close()
        await asyncio.wait_for(process.wait(), 20)
    assert process.returncode == 0
