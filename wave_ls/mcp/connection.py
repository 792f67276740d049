"""One running MCP server, through the SDK's public client API (``mcp.ClientSession`` over
``stdio_client``, ``streamable_http_client`` or ``sse_client``).

A ``Connection`` starts in a background task and never raises into its users: a server
that cannot start, stops, hangs or answers garbage is ``failed`` with a readable ``error``,
and a call to it is a ``CallFailed`` (the model reads it as a tool error). A server that
stopped after it had connected starts again at its next use, at most ``MAX_RESTARTS``
times. ``stop`` ends it (for stdio: stdin closed, then SIGTERM, then SIGKILL of its process
group, the SDK's sequence); the reaper ends a stdio server's group if wave-ls itself dies.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Literal

from wave_ls import __version__
from wave_ls.mcp.config import ServerSpec, startup_timeout
from wave_ls.mcp.stderr_tail import StderrTail, launch_argv
from wave_ls.runtime.background_work import run_task

if TYPE_CHECKING:
    from mcp import ClientSession

log = logging.getLogger(__name__)

Status = Literal["starting", "connected", "failed", "stopped"]
MAX_RESTARTS = 3
STOP_TIMEOUT = 6.0  # the SDK's own shutdown is bounded at ~4.5 s
HTTP_TIMEOUT = 30.0
HTTP_READ_TIMEOUT = 300.0


class CallFailed(Exception):
    """A request to the server got no usable answer; the text is for the model."""


class Connection:
    """A server's live session, its status, tools and resources."""

    def __init__(
        self,
        spec: ServerSpec,
        cwd: str,
        on_change: Callable[[Connection], None] = lambda _c: None,
        *,
        startup: float | None = None,
    ) -> None:
        self.spec = spec
        self.cwd = cwd
        self.on_change = on_change
        self.startup = startup if startup is not None else startup_timeout()
        self.status: Status = "stopped"
        self.error: str | None = None
        self.tools: list[Any] = []  # mcp_types.Tool, as the server lists them
        self.tools_version = 0  # moves on each new tool list
        self.resources = False  # the server offers resources
        self.pid: int | None = None
        self.restarts = 0
        self.garbage = 0  # lines from the server that were not MCP messages
        self.connected_once = False
        self._session: ClientSession | None = None
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._ready = asyncio.Event()
        self._stopping = False
        self._refresh: asyncio.Task[None] | None = None

    # ------------------------------------------------------------------ lifecycle

    def start(self) -> None:
        """Start (or start again) in the background; returns at once."""
        if self._task is not None and not self._task.done():
            return
        self._stop = asyncio.Event()
        self._ready = asyncio.Event()
        self._stopping = False
        self._set("starting", None)
        self._task = run_task(self._run(), f"wave-mcp-{self.spec.name}")

    async def wait_ready(self, timeout: float | None = None) -> bool:
        """Wait until the server is connected or failed; True when connected."""
        if self._task is None:
            return self.status == "connected"
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._ready.wait(), timeout or self.startup + 1)
        return self.status == "connected"

    async def stop(self) -> None:
        """End the server (and wait until its process is gone)."""
        self._stopping = True
        self._stop.set()
        task = self._task
        if task is not None and not task.done():
            try:
                await asyncio.wait_for(asyncio.shield(task), STOP_TIMEOUT)
            except TimeoutError:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        self._set("stopped", None)

    def _set(self, status: Status, error: str | None) -> None:
        changed = (status, error) != (self.status, self.error)
        self.status, self.error = status, error
        if changed:
            self.on_change(self)

    async def _run(self) -> None:
        stderr: StderrTail | None = None
        closed = asyncio.Event()
        try:
            await load_sdk()
            import anyio
            from mcp import ClientSession, types

            async with contextlib.AsyncExitStack() as stack:
                if self.spec.transport == "stdio":
                    stderr = StderrTail()
                    stack.callback(stderr.close)
                read, write = await stack.enter_async_context(self._transport(stderr))
                if stderr is not None:
                    stderr.spawned()
                    self.pid = await stderr.pid(2.0)
                    if self.pid is not None:
                        from wave_ls.runtime.processes import reaper

                        reaper.watch(self.pid)
                # Between the transport and the session: its end is the server's end.
                inbound, forward_to = anyio.create_memory_object_stream[Any](0)
                group = await stack.enter_async_context(anyio.create_task_group())
                stack.callback(group.cancel_scope.cancel)
                group.start_soon(self._forward, read, inbound, closed)
                session = await stack.enter_async_context(
                    ClientSession(
                        forward_to,
                        write,
                        message_handler=self._on_message,
                        client_info=types.Implementation(name="wave-ls", version=__version__),
                    )
                )
                try:
                    with anyio.fail_after(self.startup):
                        init = await session.initialize()
                    capabilities = init.capabilities
                    tools = await self._list_tools(session) if capabilities.tools else []
                except TimeoutError:
                    raise CallFailed(f"no answer to initialize within {self.startup:g} s") from None
                self.tools = tools
                self.tools_version += 1
                self.resources = capabilities.resources is not None
                self._session = session
                self.connected_once = True
                self._set("connected", None)
                self._ready.set()
                stop = asyncio.ensure_future(self._stop.wait())
                lost = asyncio.ensure_future(closed.wait())
                try:
                    await asyncio.wait({stop, lost}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    stop.cancel()
                    lost.cancel()
                self._session = None
                if not self._stopping:
                    self._set("failed", self._lost_reason(stderr))
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # anything the server did is its failure, not ours
            if isinstance(exc, KeyboardInterrupt | SystemExit):
                raise
            if not self._stopping:
                log.info("MCP server %s failed: %s", self.spec.name, describe(exc))
                self._set("failed", self._start_failure(exc, stderr, closed.is_set()))
        finally:
            self._session = None
            self._ready.set()

    def _transport(self, stderr: StderrTail | None) -> contextlib.AbstractAsyncContextManager[Any]:
        spec = self.spec
        if spec.transport == "stdio":
            from mcp.client.stdio import StdioServerParameters, stdio_client

            command, args = launch_argv(spec.command, spec.args)
            parameters = StdioServerParameters(
                command=command,
                args=args,
                env={**server_environment(), **spec.env},
                cwd=self.cwd,
                encoding_error_handler="replace",
            )
            assert stderr is not None
            return stdio_client(parameters, errlog=stderr.writer)
        if spec.transport == "sse":
            from mcp.client.sse import sse_client

            return sse_client(spec.url, headers=dict(spec.headers), timeout=HTTP_TIMEOUT)
        return _streamable_http(spec)

    async def _forward(self, read: Any, inbound: Any, closed: asyncio.Event) -> None:
        try:
            async with inbound:
                async for item in read:
                    if isinstance(item, Exception):
                        self.garbage += 1
                    await inbound.send(item)
        except Exception as exc:  # the transport broke: the same as its end
            log.debug("MCP server %s: the stream ended: %s", self.spec.name, exc)
        finally:
            closed.set()

    async def _on_message(self, message: Any) -> None:
        from mcp import types

        if isinstance(message, Exception):
            return  # counted in ``_forward``; the call it belonged to times out
        if isinstance(message, types.ToolListChangedNotification):
            self._refresh = run_task(self._refresh_tools(), f"wave-mcp-tools-{self.spec.name}")

    async def _list_tools(self, session: ClientSession) -> list[Any]:
        tools: list[Any] = []
        cursor: str | None = None
        from mcp import types

        for _page in range(100):  # a server that pages forever is cut off
            params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
            listed = await session.list_tools(params=params)
            tools.extend(listed.tools)
            cursor = listed.next_cursor
            if not cursor:
                break
        return tools

    async def _refresh_tools(self) -> None:
        session = self._session
        if session is None:
            return
        try:
            self.tools = await asyncio.wait_for(self._list_tools(session), self.startup)
        except Exception as exc:
            log.info("MCP server %s: listing its tools again failed: %s", self.spec.name, exc)
            return
        self.tools_version += 1
        self.on_change(self)

    def _lost_reason(self, stderr: StderrTail | None) -> str:
        said = f": {stderr.text()}" if stderr is not None and stderr.text() else ""
        more = (
            f"; it starts again at its next use ({MAX_RESTARTS - self.restarts} restarts left)"
            if self.restarts < MAX_RESTARTS
            else ""
        )
        return f"the server stopped{said}{more}"

    def _start_failure(self, exc: BaseException, stderr: StderrTail | None, closed: bool) -> str:
        said = stderr.text() if stderr is not None else ""
        if closed and said:
            return f"the server exited while starting: {said}"
        text = describe(exc)
        return f"{text}: {said}" if said else text

    # ------------------------------------------------------------------ requests

    async def session(self) -> ClientSession:
        """The live session; a stopped server is started again if it may be."""
        if self.status == "starting":
            await self.wait_ready()
        elif self.status == "failed" and self.connected_once and self.restarts < MAX_RESTARTS:
            self.restarts += 1
            log.info("MCP server %s: starting again (%d)", self.spec.name, self.restarts)
            self.start()
            await self.wait_ready()
        session = self._session
        if session is None or self.status != "connected":
            reason = self.error or "it is not running"
            if self.status == "failed" and self.connected_once and self.restarts >= MAX_RESTARTS:
                reason += f" (stopped {self.restarts + 1} times: not started again)"
            raise CallFailed(f"MCP server '{self.spec.name}' is not available: {reason}")
        return session

    async def call_tool(self, name: str, arguments: dict[str, Any], timeout: float) -> Any:
        """``tools/call``; the result, or ``CallFailed`` with what went wrong. A tool list
        the server changed during the call is listed again first (the next round has it)."""
        session = await self.session()
        result = await self._request(
            session.call_tool(name, arguments, read_timeout_seconds=timeout), timeout
        )
        await asyncio.sleep(0)  # a notification sent before the answer is handled first
        refresh = self._refresh
        if refresh is not None and not refresh.done():
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(refresh), self.startup)
        return result

    async def list_resources(self, timeout: float) -> list[Any]:
        session = await self.session()
        listed = await self._request(session.list_resources(), timeout)
        return list(listed.resources)

    async def read_resource(self, uri: str, timeout: float) -> Any:
        session = await self.session()
        return await self._request(session.read_resource(uri), timeout)

    async def _request(self, request: Any, timeout: float) -> Any:
        try:
            async with asyncio.timeout(timeout + 1):  # the SDK's own timeout comes first
                return await request
        except asyncio.CancelledError:
            raise
        except TimeoutError:
            raise CallFailed(self._no_answer(timeout)) from None
        except Exception as exc:
            text = describe(exc)
            # By the SDK's codes, not by words a server's own error may hold ("closed").
            from mcp.types import CONNECTION_CLOSED, REQUEST_TIMEOUT  # loaded: a call ran

            code = getattr(exc, "code", None)
            if code == REQUEST_TIMEOUT:
                raise CallFailed(self._no_answer(timeout)) from None
            if code == CONNECTION_CLOSED and getattr(exc, "message", "") == CLOSED_MESSAGE:
                await self._wait_down()
                raise CallFailed(
                    f"MCP server '{self.spec.name}' stopped during the call"
                    + (f" ({self.error})" if self.error else "")
                ) from None
            raise CallFailed(
                f"MCP server '{self.spec.name}' answered with an error: {text}"
            ) from None

    async def _wait_down(self) -> None:
        """After a closed connection: let the run task record why (status ``failed``)."""
        task = self._task
        if task is not None and not task.done():
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(task), STOP_TIMEOUT)

    def _no_answer(self, timeout: float) -> str:
        extra = (
            f" (it also wrote {self.garbage} lines that are not MCP messages)"
            if self.garbage
            else ""
        )
        return (
            f"MCP server '{self.spec.name}' gave no answer within {timeout:g} s{extra}; "
            "the call was abandoned (mcp.toolTimeoutSeconds or MCP_TOOL_TIMEOUT set the limit)"
        )


_SDK_MODULES = ("mcp", "mcp.client.stdio", "mcp.client.streamable_http", "mcp.client.sse")


async def load_sdk() -> None:
    """Import the SDK (~0.8 s of imports) in a worker thread, once: the event loop goes on
    serving the session (its first model request) meanwhile."""
    import sys

    if all(name in sys.modules for name in _SDK_MODULES):
        return
    await asyncio.to_thread(_import_sdk)


def _import_sdk() -> None:
    import importlib

    for name in _SDK_MODULES:
        importlib.import_module(name)


@contextlib.asynccontextmanager
async def _streamable_http(spec: ServerSpec) -> Any:
    import httpx2
    from mcp.client.streamable_http import streamable_http_client

    timeout = httpx2.Timeout(HTTP_TIMEOUT, read=HTTP_READ_TIMEOUT)
    async with (
        httpx2.AsyncClient(headers=dict(spec.headers), timeout=timeout) as client,
        streamable_http_client(spec.url, http_client=client) as streams,
    ):
        yield streams


def describe(exc: BaseException) -> str:
    """One line for an error (an exception group: its first leaf)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip() or type(exc).__name__
    if isinstance(exc, FileNotFoundError | PermissionError | ConnectionError):
        return f"{type(exc).__name__}: {text}"
    return " ".join(text.split())[:500]


# The text of the SDK's own error for a connection that closed (its dispatcher's MCPError with
# CONNECTION_CLOSED): a server's error may use that code too.
CLOSED_MESSAGE = "Connection closed"


# wave-ls's own configuration (the model endpoint's key among it) is not the server's.
OWN_VARIABLES = ("OPENAI_", "WAVE_")


def server_environment() -> dict[str, str]:
    """What a stdio server inherits: wave-ls's environment, as Claude Code passes its own
    (servers read their tokens from it), less wave-ls's own variables."""
    return {k: v for k, v in os.environ.items() if not k.startswith(OWN_VARIABLES)}
