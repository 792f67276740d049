"""Serve ACP on the process's stdin/stdout, and keep them for JSON-RPC alone.

The protocol gets its own duplicates of file descriptors 0 and 1; fd 0 then reads
``/dev/null`` and fd 1 writes to stderr, so a stray ``print``, a library's output or a
child process that inherits them can never corrupt the stream.

The ``acp`` package's own line reader takes any JSON: a line that is an array, a number
or a string ended its receive loop (``AttributeError``), and invalid JSON or a message
without method or id went unanswered. So the connection gets our ``LineTransport``
(the package's ``Transport`` interface): each line is checked as LSP checks a message
(``wave_ls/jsonrpc.py``), what is not one JSON-RPC 2.0 message is answered there
(``-32700``/``-32600`` with ``id: null``) and never reaches the package; a line over
``MAX_MESSAGE_BYTES`` is skipped without being held whole.
"""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import cast

from wave_ls.jsonrpc import INVALID_REQUEST, MAX_MESSAGE_BYTES, check_message, error_response
from wave_ls.runtime.lifetime import exit_soon
from wave_ls.runtime.settings import RuntimeSettings
from wave_ls.runtime.text import json_dumps

log = logging.getLogger(__name__)

TOO_LONG = (
    f"Invalid Request: a message over {MAX_MESSAGE_BYTES // (1024 * 1024)} MiB; skipped unread"
)


def claim_stdio() -> tuple[int, int]:
    """Duplicates of stdin and stdout for the protocol; the originals are neutralised."""
    protocol_in, protocol_out = os.dup(0), os.dup(1)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    os.dup2(2, 1)
    return protocol_in, protocol_out


async def streams(fd_in: int, fd_out: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_MESSAGE_BYTES)
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fd_in, "rb", buffering=0)
    )
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(fd_out, "wb", buffering=0)
    )
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)


class LineTransport:
    """Newline-delimited JSON-RPC messages on a stream pair, for ``acp``'s connection:
    ``receive`` hands it only single JSON-RPC 2.0 messages, answering the rest itself."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self._writing = asyncio.Lock()

    async def send(self, message: dict[str, object]) -> None:
        # json_dumps: text UTF-8 cannot hold (a file name that is not UTF-8) is escaped.
        line = (json_dumps(message, separators=(",", ":")) + "\n").encode("utf-8")
        async with self._writing:
            self.writer.write(line)
            await self.writer.drain()

    async def receive(self) -> dict[str, object] | None:
        """The next message; None once the client has closed the stream."""
        while True:
            line = await self._line()
            if line is None:
                return None
            if line is _SKIPPED:
                await self.send(error_response(None, INVALID_REQUEST, TOO_LONG))
                continue
            if not line.strip():
                continue
            checked = check_message(line, batches="ACP has none")
            for error in checked.errors:
                await self.send(error)
            if checked.message is not None:
                return checked.message

    async def close(self) -> None:
        """Nothing to release: the streams end with the process."""

    async def _line(self) -> bytes | None:
        try:
            return await self.reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as error:  # the last line, without its newline
            return error.partial or None
        except asyncio.LimitOverrunError as error:
            log.error("a message over %d bytes; skipped", MAX_MESSAGE_BYTES)
            await self._skip_line(error.consumed)
            return _SKIPPED

    async def _skip_line(self, consumed: int) -> None:
        """Drop the rest of a line too long to hold, a buffer at a time."""
        while True:
            try:
                await self.reader.readexactly(consumed)
                await self.reader.readuntil(b"\n")
                return
            except asyncio.LimitOverrunError as error:
                consumed = error.consumed
            except asyncio.IncompleteReadError:
                return


_SKIPPED = b"\0skipped"  # not a line: only ``_line`` makes it, compared by identity


async def serve(home: Path, settings: RuntimeSettings) -> None:
    """Run one ACP connection until the client closes stdin; then end every session."""
    from acp import Agent, run_agent

    from wave_ls.acp.agent import WaveAgent

    reader, writer = await streams(*claim_stdio())
    agent = WaveAgent(home, settings)
    try:
        # Methods WaveAgent leaves out answer "method not found" (the Agent protocol lists
        # every method the package knows, unstable ones included).
        # session/resume and session/close are "unstable" in the package (stable in ACP).
        await run_agent(
            cast("Agent", agent), LineTransport(reader, writer), use_unstable_protocol=True
        )
    finally:
        # A request stuck in a thread must not keep the process once the client is gone.
        exit_soon(lambda: 0, "the ACP client closed stdin")
        await agent.shutdown()
