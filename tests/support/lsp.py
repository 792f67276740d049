"""A real pytest-lsp client talking to a real ``wave-ls`` subprocess over stdio."""

from __future__ import annotations

import asyncio
import os
import sys
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import from_fs_path
from pytest_lsp import LanguageClient, client_capabilities
from pytest_lsp.client import register_lsp_features
from pytest_lsp.protocol import LanguageClientProtocol

from tests.support.waiting import until
from wave_ls.server.protocol import wave_message_type, wave_result_type

UPDATE = "wave/session/update"
# The two client styles the suite runs against (esbonio-style capability matrix).
# "minimal": a client that declares nothing (no window.workDoneProgress, no experimental),
# as a bare LSP client (Emacs eglot) does: everything must still work, without $/progress.
CLIENTS = ("visual-studio-code", "neovim", "minimal")


class WaveClientProtocol(LanguageClientProtocol):
    """Keeps ``wave/*`` payloads as plain JSON, as a real client sees them."""

    def get_message_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        return wave_message_type(method) or super().get_message_type(method)

    def get_result_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        return wave_result_type(method) or super().get_result_type(method)


class WaveClient(LanguageClient):
    def __init__(self) -> None:
        from lsprotocol.converters import get_converter

        super().__init__(protocol_cls=WaveClientProtocol, converter_factory=get_converter)
        register_lsp_features(self)
        self.updates: list[dict[str, Any]] = []
        self.update_waiters: list[tuple[Callable[[dict[str, Any]], bool], asyncio.Future[Any]]] = []
        self.permission_answer: Callable[[dict[str, Any]], dict[str, Any]] | None = None
        self.permission_requests: list[dict[str, Any]] = []
        self.editor_lsp_answer: Callable[[dict[str, Any]], Any] | None = None
        self.editor_lsp_requests: list[dict[str, Any]] = []
        self.init_result: types.InitializeResult | None = None
        self.registrations: list[types.Registration] = []

        @self.feature(UPDATE)
        def on_update(params: dict[str, Any]) -> None:
            self.updates.append(params)
            for predicate, future in list(self.update_waiters):
                if not future.done() and predicate(params):
                    future.set_result(params)

        @self.feature("wave/permission/request")
        def on_permission(params: dict[str, Any]) -> dict[str, Any]:
            self.permission_requests.append(params)
            if self.permission_answer is None:
                return {"allowed": False, "message": "no answer configured"}
            return self.permission_answer(params)

        @self.feature(types.CLIENT_REGISTER_CAPABILITY)
        def on_register(params: types.RegistrationParams) -> None:
            # What an editor does: accept (the server registers its agent file watchers).
            self.registrations.extend(params.registrations)

        @self.feature("wave/editor/lsp")
        def on_editor_lsp(params: dict[str, Any]) -> Any:
            self.editor_lsp_requests.append(params)
            return self.editor_lsp_answer(params) if self.editor_lsp_answer else None

    async def request(self, method: str, params: Any) -> Any:
        return await self.protocol.send_request_async(method, params)

    def start_request(self, method: str, params: Any) -> tuple[str, asyncio.Future[Any]]:
        """Send a request without waiting; its id lets the test cancel it."""
        msg_id = f"test-{uuid.uuid4().hex[:8]}"
        future = self.protocol.send_request(method, params, msg_id=msg_id)
        return msg_id, asyncio.wrap_future(future)

    def send_cancel(self, msg_id: str) -> None:
        """What an editor does when the user stops a turn: ``$/cancelRequest``."""
        self.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))

    async def wait_update(
        self, predicate: Callable[[dict[str, Any]], bool], timeout: float = 20
    ) -> dict[str, Any]:
        for update in self.updates:
            if predicate(update):
                return update
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.update_waiters.append((predicate, future))
        return await asyncio.wait_for(future, timeout)

    def updates_for(self, session_id: str, kind: str | None = None) -> list[dict[str, Any]]:
        return [
            u
            for u in self.updates
            if u.get("sessionId") == session_id and (kind is None or u.get("kind") == kind)
        ]


async def progress_settled(client: WaveClient, timeout: float = 10) -> None:
    """Wait until every work-done progress the server began has ended (``$/progress`` is
    sent by its own worker: it may arrive after the answer of the request it reports on)."""

    def settled() -> bool:
        reports = client.progress_reports.values()
        return all(r and getattr(r[-1], "kind", None) == "end" for r in reports)

    await until(settled, timeout, "the end of every progress")


def server_env(home: Path, base_url: str | None = None, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "WAVE_"))}
    env["HOME"] = str(home)
    if base_url:
        env.update(OPENAI_BASE_URL=base_url, OPENAI_API_KEY="test-key", WAVE_MODEL="test-model")
    env.update(extra)
    return env


def capabilities(
    client_name: str = "visual-studio-code", *, permission: bool = False, editor_lsp: bool = False
) -> types.ClientCapabilities:
    if client_name == "minimal":
        assert not (permission or editor_lsp), "the minimal client declares no experimental"
        return types.ClientCapabilities()
    caps = client_capabilities(client_name)
    wave = {"permissionRequest": permission, "editorLsp": editor_lsp}
    if any(wave.values()):
        caps.experimental = {"wave": wave}
    return caps


@asynccontextmanager
async def wave_client(
    env: dict[str, str],
    *,
    caps: types.ClientCapabilities | None = None,
    init_options: Any = None,
    root: Path | None = None,
    command: list[str] | None = None,
) -> AsyncIterator[WaveClient]:
    client = WaveClient()
    command = command or [
        os.environ.get("WAVE_TEST_SERVER", sys.executable),
        *([] if os.environ.get("WAVE_TEST_SERVER") else ["-m", "wave_ls"]),
        "--stdio",
    ]
    await client.start_io(command[0], *command[1:], env=env)
    try:
        client.init_result = await client.initialize_session(
            types.InitializeParams(
                capabilities=caps or capabilities(),
                initialization_options=init_options,
                root_uri=from_fs_path(str(root)) if root else None,
            )
        )
        try:
            yield client
        except BaseException:
            # A failed test must not leave the server waiting for an exit that never comes.
            if client._server and client._server.returncode is None:
                client._server.kill()
            raise
        if client._server and client._server.returncode is None and not client.stopped:
            await asyncio.wait_for(client.shutdown_session(), 20)
    finally:
        await client.stop()
        server = client._server
        if server and server.returncode is None:
            server.kill()
            await server.wait()
