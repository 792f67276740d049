"""Reading JSON-RPC messages off a byte stream: ``Content-Length`` framing that survives
bad input.

This replaces pygls's reader loop (``pygls.io_.run_async``), which stops answering after a
bad header, dies on a huge length (``MemoryError``) and sends no reply to invalid JSON,
a batch or a message without ``jsonrpc``. Here:

- a bad header (a length that is missing, not a number, negative, or over
  ``MAX_MESSAGE_BYTES``) is logged and skipped: reading goes on at the next line that ends
  in a valid ``Content-Length`` header (a body shorter than its length leaves such a line);
- invalid JSON is answered with ``-32700`` (Parse error), anything that is not a single
  JSON-RPC 2.0 message with ``-32600`` (Invalid Request), with the request's id when it can
  be read and ``null`` otherwise (``wave_ls/jsonrpc.py``, shared with ACP); a request whose
  params do not fit its LSP type gets pygls's ``-32602`` instead of silence.

Upstream note (pygls 2.1): the same three changes would fit ``run_async`` itself.
"""

from __future__ import annotations

import asyncio
import logging
import re
import threading
from collections.abc import Awaitable, Callable
from concurrent.futures import Executor
from typing import BinaryIO, Protocol

from pygls.exceptions import JsonRpcException

from wave_ls.jsonrpc import MAX_MESSAGE_BYTES, check_message, error_response
from wave_ls.server.protocol import WaveProtocol

log = logging.getLogger(__name__)

# Header lines are short; a longer "line" is the rest of a body being skipped, read in
# pieces of this size so that skipping never holds much in memory.
MAX_LINE_BYTES = 64 * 1024
# "Content-Length: N" at the end of a line: after a body shorter than its length, the next
# header starts in the middle of the line that holds the rest of that body.
_LENGTH_HEADER = re.compile(rb"Content-Length[ \t]*:[ \t]*([^\r\n]*?)[ \t]*\r?\n\Z", re.I)


class ByteReader(Protocol):
    def readline(self, limit: int) -> Awaitable[bytes]:
        """At most ``limit`` bytes up to and including a newline; b"" at the end."""
        ...

    def read(self, size: int) -> Awaitable[bytes]:
        """Exactly ``size`` bytes, fewer only at the end of the stream."""
        ...


class ThreadedReader:
    """A blocking binary stream (stdin) read in an executor, off the event loop;
    ``on_end`` is called in the reading thread when the stream ends (even while the event
    loop is blocked)."""

    def __init__(
        self,
        stream: BinaryIO,
        executor: Executor | None = None,
        on_end: Callable[[], None] | None = None,
    ) -> None:
        self.stream = stream
        self.executor = executor
        self.on_end = on_end

    def readline(self, limit: int) -> Awaitable[bytes]:
        loop = asyncio.get_running_loop()
        return loop.run_in_executor(self.executor, self._readline, limit)

    def read(self, size: int) -> Awaitable[bytes]:
        return asyncio.get_running_loop().run_in_executor(self.executor, self._read, size)

    def _readline(self, limit: int) -> bytes:
        data = self.stream.readline(limit)
        if not data and self.on_end is not None:
            self.on_end()
        return data

    def _read(self, size: int) -> bytes:
        data = self.stream.read(size)
        if len(data) < size and self.on_end is not None:
            self.on_end()
        return data


class StreamReaderAdapter:
    """An ``asyncio.StreamReader`` (TCP) as a ``ByteReader``."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self.reader = reader

    async def readline(self, limit: int) -> bytes:
        try:
            return await self.reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as error:
            return error.partial
        except asyncio.LimitOverrunError as error:
            return await self.reader.read(max(1, min(error.consumed, limit)))

    async def read(self, size: int) -> bytes:
        try:
            return await self.reader.readexactly(size)
        except asyncio.IncompleteReadError as error:
            return error.partial


def parse_length(value: bytes) -> int | None:
    """The body length a header gives, or None when it is not a positive decimal number."""
    text = value.strip()
    if not text.isdigit():
        return None
    length = int(text)
    return length if length > 0 else None


async def read_body_length(reader: ByteReader, max_bytes: int) -> int | None:
    """Read one header block; the body length, or None at the end of the stream.

    Bad blocks are logged and skipped; so is everything before the next valid header.
    """
    in_headers = False
    length: int | None = None
    skipped = 0
    while True:
        line = await reader.readline(MAX_LINE_BYTES)
        if not line:
            return None
        if in_headers and line in (b"\r\n", b"\n"):
            in_headers = False
            if length is not None:
                return length
            log.error("a message header without a valid Content-Length; skipped")
            continue
        found = _LENGTH_HEADER.search(line)
        if found is None:
            if not in_headers and line.strip():
                if not skipped:
                    log.error("unexpected data instead of a message header; skipping to the next")
                skipped += len(line)
            continue
        in_headers, skipped = True, 0
        length = parse_length(found.group(1))
        if length is None:
            log.error("invalid Content-Length %r; message skipped", found.group(1)[:40])
            in_headers = False  # the next valid header starts over
        elif length > max_bytes:
            log.error(
                "a message of %d bytes is over the %d MiB limit; skipped",
                length,
                max_bytes // (1024 * 1024),
            )
            length = None
            in_headers = False


def send_error(protocol: WaveProtocol, msg_id: int | str | None, code: int, text: str) -> None:
    # A plain dict: lsprotocol's message class would leave a null id out.
    protocol.send_payload(error_response(msg_id, code, text))


def handle_body(protocol: WaveProtocol, body: bytes) -> None:
    """Parse, check and dispatch one message body; answer what cannot be handled."""
    checked = check_message(body, batches="the Language Server Protocol has none")
    for error in checked.errors:
        protocol.send_payload(error)
    data = checked.message
    if data is None:
        return
    try:
        message = protocol.structure_message(data)
    except JsonRpcException as error:
        if "method" in data and "id" in data:
            send_error(protocol, data["id"], error.code, f"{data['method']}: {error.message}")
        return
    try:
        protocol.handle_message(message)
    except Exception:
        log.exception("unable to handle a message")


async def read_messages(
    reader: ByteReader,
    protocol: WaveProtocol,
    stop: threading.Event,
    max_bytes: int = MAX_MESSAGE_BYTES,
) -> None:
    """Hand every message of the stream to ``protocol`` until it ends or ``stop`` is set."""
    while not stop.is_set():
        length = await read_body_length(reader, max_bytes)
        if length is None:
            return
        body = await reader.read(length)
        if len(body) < length:
            log.error("the stream ended inside a message body")
            return
        handle_body(protocol, body)
