"""Serve ACP on the process's stdin/stdout, and keep them for JSON-RPC alone.

The protocol gets its own duplicates of file descriptors 0 and 1; fd 0 then reads
``/dev/null`` and fd 1 writes to stderr, so a stray ``print``, a library's output or a
child process that inherits them can never corrupt the stream.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import cast

from wave_ls.runtime.settings import RuntimeSettings

BUFFER_LIMIT = 50 * 1024 * 1024  # a prompt may embed whole files


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
    reader = asyncio.StreamReader(limit=BUFFER_LIMIT)
    await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(fd_in, "rb", buffering=0)
    )
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(fd_out, "wb", buffering=0)
    )
    return reader, asyncio.StreamWriter(transport, protocol, None, loop)


async def serve(home: Path, settings: RuntimeSettings) -> None:
    """Run one ACP connection until the client closes stdin; then end every session."""
    from acp import Agent, run_agent

    from wave_ls.acp.agent import WaveAgent

    reader, writer = await streams(*claim_stdio())
    agent = WaveAgent(home, settings)
    try:
        # Methods WaveAgent leaves out answer "method not found" (the Agent protocol lists
        # every method the package knows, unstable ones included).
        await run_agent(cast("Agent", agent), writer, reader)
    finally:
        await agent.shutdown()
