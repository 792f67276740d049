"""A real ACP client (the ``acp`` package's client side) talking to a real ``wave-ls acp``.

``acp_agent(env)`` starts the subprocess, connects with ``acp.connect_to_agent`` and
initializes; the ``RecordingClient`` keeps every ``session/update`` as plain JSON (what a
client reads on the wire) and answers permission requests with ``permission_answer``.
"""

from __future__ import annotations

import asyncio
import inspect
import os
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from acp import PROTOCOL_VERSION, Client, RequestError, connect_to_agent
from acp.client.connection import ClientSideConnection
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    Implementation,
    InitializeResponse,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallUpdate,
)

Update = dict[str, Any]
# Picks an option id for a permission request (or returns an awaitable of one); None answers
# "cancelled".
PermissionAnswer = Callable[[dict[str, Any]], str | Awaitable[str | None] | None]


def as_json(model: Any) -> dict[str, Any]:
    out: dict[str, Any] = model.model_dump(mode="json", by_alias=True, exclude_none=True)
    return out


@dataclass
class RecordingClient:
    """An ``acp.Client`` that records what the agent sends."""

    updates: list[tuple[str, Update]] = field(default_factory=list)
    permission_requests: list[dict[str, Any]] = field(default_factory=list)
    permission_answer: PermissionAnswer | None = None
    # Extension notifications (``_<method>``), as (method without the ``_``, params).
    notifications: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    _changed: asyncio.Event = field(default_factory=asyncio.Event)

    async def session_update(self, session_id: str, update: Any, **_: Any) -> None:
        self.updates.append((session_id, as_json(update)))
        self._changed.set()

    async def request_permission(
        self,
        session_id: str,
        tool_call: ToolCallUpdate,
        options: list[PermissionOption],
        **_: Any,
    ) -> RequestPermissionResponse:
        request = {
            "sessionId": session_id,
            "toolCall": as_json(tool_call),
            "options": [as_json(option) for option in options],
        }
        self.permission_requests.append(request)
        self._changed.set()
        chosen = self.permission_answer(request) if self.permission_answer else None
        if inspect.isawaitable(chosen):  # an answer that takes its time (or never comes)
            chosen = await chosen
        if chosen is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=chosen)
        )

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        self.notifications.append((method, params))
        self._changed.set()

    async def write_text_file(self, **_: Any) -> None:
        raise RequestError.method_not_found("fs/write_text_file")

    async def read_text_file(self, **_: Any) -> None:
        raise RequestError.method_not_found("fs/read_text_file")

    def on_connect(self, conn: Any) -> None:
        pass

    # ------------------------------------------------------------------ reading

    def of(self, session_id: str, kind: str | None = None) -> list[Update]:
        """The updates of one session (of one ``sessionUpdate`` kind), in order."""
        return [
            u
            for sid, u in self.updates
            if sid == session_id and (kind is None or u["sessionUpdate"] == kind)
        ]

    def text(self, session_id: str, kind: str = "agent_message_chunk") -> str:
        return "".join(u["content"].get("text", "") for u in self.of(session_id, kind))

    def tool_calls(self, session_id: str) -> dict[str, list[Update]]:
        """Each tool call's ``tool_call`` and ``tool_call_update``s, by id, in order."""
        calls: dict[str, list[Update]] = {}
        for update in self.of(session_id):
            if update["sessionUpdate"] in ("tool_call", "tool_call_update"):
                calls.setdefault(update["toolCallId"], []).append(update)
        return calls

    async def wait_for(self, predicate: Callable[[], Any], timeout: float = 20) -> Any:
        async def poll() -> Any:
            while not (value := predicate()):
                self._changed.clear()
                await self._changed.wait()
            return value

        return await asyncio.wait_for(poll(), timeout)


@dataclass
class AcpAgent:
    conn: ClientSideConnection
    client: RecordingClient
    process: asyncio.subprocess.Process
    init: InitializeResponse


def agent_command() -> list[str]:
    """``wave-ls acp`` as the suite runs it (``WAVE_TEST_SERVER`` names another binary)."""
    server = os.environ.get("WAVE_TEST_SERVER")
    return [server, "acp"] if server else [sys.executable, "-m", "wave_ls", "acp"]


@asynccontextmanager
async def acp_agent(
    env: dict[str, str],
    stderr_to: Path | None = None,
    command: list[str] | None = None,
    meta: dict[str, Any] | None = None,
) -> AsyncIterator[AcpAgent]:
    """A started and initialized ``wave-ls acp`` (or ``command``); closing its stdin ends it.
    ``meta``: the client capabilities' ``_meta``."""
    command = command or agent_command()
    stderr = stderr_to.open("ab") if stderr_to else asyncio.subprocess.DEVNULL
    process = await asyncio.create_subprocess_exec(
        *command,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=stderr,
        env=env,
        limit=50 * 1024 * 1024,
    )
    assert process.stdin is not None and process.stdout is not None
    client = RecordingClient()
    # RecordingClient answers what wave-ls asks; the rest of the Client protocol is unused.
    conn = connect_to_agent(cast(Client, client), process.stdin, process.stdout)
    try:
        init = await asyncio.wait_for(
            conn.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=ClientCapabilities(field_meta=meta),
                client_info=Implementation(name="wave-tests", version="1"),
            ),
            30,
        )
        yield AcpAgent(conn, client, process, init)
        process.stdin.close()  # the client goes away: the agent ends its sessions and exits
        await asyncio.wait_for(process.wait(), 20)
    finally:
        await conn.close()
        if process.returncode is None:
            process.kill()
            await process.wait()
        if stderr_to and not isinstance(stderr, int):
            stderr.close()
