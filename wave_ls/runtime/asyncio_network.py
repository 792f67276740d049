"""The model client's network streams on plain asyncio, under the SDK's own HTTP stack.

httpcore's default backend reads through anyio: every read opens a cancel scope for its
timeout, and anyio's stream protocol pauses and resumes the socket's reading around each
piece of data (two epoll changes). An answer streams one small HTTP chunk per token, so
that was half of wave-ls's CPU per token (~70 us of ~150 us on a fast model). Here the
socket's data lands in a buffer as it arrives; a read that finds data returns at once, one
that waits arms one timer. The HTTP parsing (h11), httpx and the openai SDK stay as they
are: this is httpcore's public ``AsyncNetworkBackend`` interface, given to its connection
pool by ``transport``.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from collections.abc import AsyncIterable, AsyncIterator, Iterable, Iterator
from typing import TYPE_CHECKING, Any

import httpcore2
import httpx2

if TYPE_CHECKING:
    from httpcore2._types import SOCKET_OPTION

# Past this much unread data the socket stops being read until the reader catches up.
HIGH_WATER = 256 * 1024


class _Protocol(asyncio.Protocol):
    def __init__(self) -> None:
        self.buffer = bytearray()
        self.waiter: asyncio.Future[None] | None = None
        self.closed = False
        self.error: BaseException | None = None
        self.transport: asyncio.Transport | None = None
        self.paused = False
        self.drained: asyncio.Future[None] | None = None  # while writing is paused

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if len(self.buffer) > HIGH_WATER and self.transport is not None and not self.paused:
            self.paused = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool | None:
        self.closed = True
        self._wake()
        return None

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self.error = exc
        self._wake()
        if self.drained is not None and not self.drained.done():
            self.drained.set_result(None)

    def pause_writing(self) -> None:
        self.drained = asyncio.get_running_loop().create_future()

    def resume_writing(self) -> None:
        if self.drained is not None and not self.drained.done():
            self.drained.set_result(None)
        self.drained = None

    def _wake(self) -> None:
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)


class AsyncioStream(httpcore2.AsyncNetworkStream):
    """One connection: a transport and the protocol that buffers what it receives."""

    def __init__(self, transport: asyncio.Transport, protocol: _Protocol) -> None:
        self._transport = transport
        self._protocol = protocol
        protocol.transport = transport
        self._timer: asyncio.TimerHandle | None = None
        self._deadline = 0.0

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        protocol = self._protocol
        if not protocol.buffer and not protocol.closed:
            loop = asyncio.get_running_loop()
            waiter = protocol.waiter = loop.create_future()
            if timeout is not None:
                self._arm(loop, timeout)
            try:
                await waiter
            except TimeoutError:
                raise httpcore2.ReadTimeout("timed out") from None
            finally:
                protocol.waiter = None
        buffer = protocol.buffer
        if not buffer:
            if protocol.error is not None:
                raise httpcore2.ReadError(str(protocol.error)) from protocol.error
            return b""
        if len(buffer) <= max_bytes:
            data = bytes(buffer)
            buffer.clear()
        else:
            data = bytes(buffer[:max_bytes])
            del buffer[:max_bytes]
        if protocol.paused and len(buffer) <= HIGH_WATER // 2:
            protocol.paused = False
            self._transport.resume_reading()
        return data

    def _arm(self, loop: asyncio.AbstractEventLoop, timeout: float) -> None:
        # One timer for the reads of a stream, moved only when it would move by a hundredth
        # of the limit (a wait may end that much early): a timer armed and cancelled per
        # read cost ~3 us a token, and the cancelled ones crowd the loop's heap.
        deadline = loop.time() + timeout
        if self._timer is not None:
            if self._deadline <= deadline <= self._deadline + timeout / 100:
                return
            self._timer.cancel()
        self._deadline = deadline
        self._timer = loop.call_at(deadline, self._expire)

    def _expire(self) -> None:
        self._timer = None
        waiter = self._protocol.waiter
        if waiter is not None and not waiter.done():
            waiter.set_exception(TimeoutError())

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        if not buffer:
            return
        if self._transport.is_closing():
            raise httpcore2.WriteError("the connection is closed")
        self._transport.write(buffer)
        drained = self._protocol.drained
        if drained is not None:
            try:
                async with asyncio.timeout(timeout):
                    await asyncio.shield(drained)
            except TimeoutError:
                raise httpcore2.WriteTimeout("timed out") from None
            if self._protocol.error is not None:
                raise httpcore2.WriteError(str(self._protocol.error))

    async def aclose(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._transport.close()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                transport = await loop.start_tls(
                    self._transport, self._protocol, ssl_context, server_hostname=server_hostname
                )
        except TimeoutError:
            self._transport.close()
            raise httpcore2.ConnectTimeout("timed out") from None
        except (OSError, ssl.SSLError) as error:
            self._transport.close()
            raise httpcore2.ConnectError(str(error)) from error
        assert isinstance(transport, asyncio.Transport)
        return AsyncioStream(transport, self._protocol)

    def get_extra_info(self, info: str) -> Any:
        transport = self._transport
        if info == "is_readable":
            # An idle connection that the server closed (or wrote to) is not reused.
            return bool(self._protocol.buffer) or self._protocol.closed or transport.is_closing()
        if transport.is_closing():  # a closed TLS transport no longer answers
            return None
        if info == "ssl_object":
            return transport.get_extra_info("ssl_object")
        if info == "client_addr":
            return transport.get_extra_info("sockname")
        if info == "server_addr":
            return transport.get_extra_info("peername")
        if info == "socket":
            return transport.get_extra_info("socket")
        return None


class AsyncioBackend(httpcore2.AsyncNetworkBackend):
    """Opens ``AsyncioStream`` connections."""

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[SOCKET_OPTION] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        local = None if local_address is None else (local_address, 0)
        try:
            async with asyncio.timeout(timeout):
                transport, protocol = await loop.create_connection(
                    _Protocol, host, port, local_addr=local
                )
        except TimeoutError:
            raise httpcore2.ConnectTimeout("timed out") from None
        except OSError as error:
            raise httpcore2.ConnectError(str(error)) from error
        sock = transport.get_extra_info("socket")
        for option in socket_options or ():
            sock.setsockopt(*option)
        assert isinstance(transport, asyncio.Transport)
        return AsyncioStream(transport, protocol)

    async def connect_unix_socket(
        self,
        path: str,
        timeout: float | None = None,
        socket_options: Iterable[SOCKET_OPTION] | None = None,
    ) -> httpcore2.AsyncNetworkStream:
        loop = asyncio.get_running_loop()
        try:
            async with asyncio.timeout(timeout):
                transport, protocol = await loop.create_unix_connection(_Protocol, path)
        except TimeoutError:
            raise httpcore2.ConnectTimeout("timed out") from None
        except OSError as error:
            raise httpcore2.ConnectError(str(error)) from error
        assert isinstance(transport, asyncio.Transport)
        return AsyncioStream(transport, protocol)

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


# httpcore's errors and the httpx errors the SDK acts on (retries, timeouts), the most
# specific first: both libraries export each of these names.
_ERROR_NAMES = (
    "ConnectTimeout",
    "ReadTimeout",
    "WriteTimeout",
    "PoolTimeout",
    "TimeoutException",
    "ConnectError",
    "ReadError",
    "WriteError",
    "NetworkError",
    "ProxyError",
    "UnsupportedProtocol",
    "LocalProtocolError",
    "RemoteProtocolError",
    "ProtocolError",
)
_ERRORS: tuple[tuple[type[Exception], type[Exception]], ...] = tuple(
    (getattr(httpcore2, name), getattr(httpx2, name)) for name in _ERROR_NAMES
)


@contextlib.contextmanager
def _as_httpx_errors() -> Iterator[None]:
    """httpcore's errors raised as httpx's, which is what the SDK catches."""
    try:
        yield
    except Exception as error:
        for raised, meant in _ERRORS:
            if isinstance(error, raised):
                raise meant(str(error)) from error
        raise


class _ResponseStream(httpx2.AsyncByteStream):
    def __init__(self, stream: AsyncIterable[bytes]) -> None:
        self._stream = stream

    async def __aiter__(self) -> AsyncIterator[bytes]:
        with _as_httpx_errors():
            async for part in self._stream:
                yield part

    async def aclose(self) -> None:
        close = getattr(self._stream, "aclose", None)
        if close is not None:
            await close()


class AsyncioTransport(httpx2.AsyncBaseTransport):
    """An httpx transport (HTTP/1.1, no proxy: the caller uses the SDK's own client when the
    environment names one) over httpcore's connection pool on ``AsyncioBackend``."""

    def __init__(self, verify: ssl.SSLContext | bool, limits: httpx2.Limits) -> None:
        context = verify if isinstance(verify, ssl.SSLContext) else httpx2.create_ssl_context()
        self._pool = httpcore2.AsyncConnectionPool(
            ssl_context=context,
            max_connections=limits.max_connections,
            max_keepalive_connections=limits.max_keepalive_connections,
            keepalive_expiry=limits.keepalive_expiry,
            network_backend=AsyncioBackend(),
        )

    async def handle_async_request(self, request: httpx2.Request) -> httpx2.Response:
        assert isinstance(request.stream, httpx2.AsyncByteStream)
        core_request = httpcore2.Request(
            method=request.method,
            url=httpcore2.URL(
                scheme=request.url.raw_scheme,
                host=request.url.raw_host,
                port=request.url.port,
                target=request.url.raw_path,
            ),
            headers=request.headers.raw,
            content=request.stream,
            extensions=request.extensions,
        )
        with _as_httpx_errors():
            response = await self._pool.handle_async_request(core_request)
        assert isinstance(response.stream, AsyncIterable)
        return httpx2.Response(
            status_code=response.status,
            headers=response.headers,
            stream=_ResponseStream(response.stream),
            extensions=response.extensions,
        )

    async def aclose(self) -> None:
        await self._pool.aclose()
