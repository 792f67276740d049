"""A ``wave-ls`` process spoken to byte by byte: for framing and lifecycle tests that a
well-behaved LSP client cannot send."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from tests.support.lsp import server_env


class RawServer:
    """``wave-ls --stdio`` with its pipes; ``send_raw`` writes bytes as they are."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.buffer = b""

    @classmethod
    async def start(cls, home: Path, **env: str) -> RawServer:
        process = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "wave_ls",
            "--stdio",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=server_env(home, **env),
        )
        return cls(process)

    def send_raw(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)

    def send(self, message: dict[str, Any]) -> None:
        self.send_raw(frame(json.dumps(message).encode()))

    async def receive(self, timeout: float = 10) -> dict[str, Any]:
        """The next message the server sends."""
        return await asyncio.wait_for(self._next(), timeout)

    async def _next(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        while True:
            head, sep, rest = self.buffer.partition(b"\r\n\r\n")
            if sep:
                length = next(
                    int(line.split(b":", 1)[1])
                    for line in head.split(b"\r\n")
                    if line.lower().startswith(b"content-length:")
                )
                if len(rest) >= length:
                    self.buffer = rest[length:]
                    result: dict[str, Any] = json.loads(rest[:length])
                    return result
            chunk = await self.process.stdout.read(65536)
            if not chunk:
                raise EOFError(f"the server closed its output; left: {self.buffer[:200]!r}")
            self.buffer += chunk

    async def response(self, msg_id: Any, timeout: float = 10) -> dict[str, Any]:
        """The next response with ``id`` (notifications and other responses are skipped)."""
        while True:
            message = await self.receive(timeout)
            if "method" not in message and message.get("id") == msg_id:
                return message

    async def request(self, msg_id: int, method: str, params: Any = None) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return await self.response(msg_id)

    async def initialize(self, options: Any = None) -> dict[str, Any]:
        params: dict[str, Any] = {"processId": os.getpid(), "rootUri": None, "capabilities": {}}
        if options is not None:
            params["initializationOptions"] = options
        reply = await self.request(0, "initialize", params)
        self.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        return reply

    async def wait(self, timeout: float = 10) -> int:
        return await asyncio.wait_for(self.process.wait(), timeout)

    async def close(self) -> None:
        if self.process.returncode is None:
            self.process.kill()
            await self.process.wait()


def frame(body: bytes) -> bytes:
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
