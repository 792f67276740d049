"""The language server: state shared by the features, start-up and initialization.

The server is a thin adapter: each ``wave/*`` method lives in a feature module under
``wave_ls/server/`` and calls into the runtime; nothing here knows how an agent works.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from wave_ls import __version__
from wave_ls.chat_input.query import ENCODINGS, Encoding
from wave_ls.runtime.settings import RuntimeSettings
from wave_ls.server.agent_progress import AgentProgress
from wave_ls.server.options import InitializationOptions, parse_initialization_options
from wave_ls.server.protocol import WaveProtocol
from wave_ls.server.session_registry import SessionRegistry

if TYPE_CHECKING:  # imported on first use: start-up must stay fast
    from wave_ls.agents import AgentRegistry
    from wave_ls.chat_input.workspace_files import WorkspaceFiles

log = logging.getLogger(__name__)


class WaveServer(LanguageServer):
    """pygls server plus the state the ``wave/*`` features share."""

    def __init__(self) -> None:
        super().__init__("wave-ls", __version__, protocol_cls=WaveProtocol)
        self.options = InitializationOptions()
        self.settings = RuntimeSettings.from_env()
        self.home = Path.home()
        self.root: Path = Path.cwd()
        self.sessions = SessionRegistry()
        self._agents: AgentRegistry | None = None
        self.files: dict[Path, WorkspaceFiles] = {}
        self.agent_progress = AgentProgress(
            lambda: self.work_done_progress, lambda: self.supports_progress
        )
        self.background: set[asyncio.Task[Any]] = set()

    # ---------------------------------------------------------------- client facts

    @property
    def supports_progress(self) -> bool:
        window = self.client_capabilities.window
        return bool(window and window.work_done_progress)

    @property
    def position_encoding(self) -> Encoding:
        """The position encoding agreed at ``initialize`` (pygls picks the client's first
        choice among utf-8, utf-16 and utf-32; utf-16 when it offered none)."""
        chosen = self.workspace.position_encoding
        value = getattr(chosen, "value", chosen)  # an lsprotocol enum, or a plain string
        return cast(Encoding, value if value in ENCODINGS else "utf-16")

    def client_experimental(self, name: str) -> bool:
        """Whether the client declared ``capabilities.experimental.wave.<name>: true``."""
        experimental = self.client_capabilities.experimental
        if not isinstance(experimental, dict):
            return False
        wave = experimental.get("wave")
        return isinstance(wave, dict) and wave.get(name) is True

    def show_warning(self, message: str) -> None:
        self.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Warning, message=f"wave-ls: {message}")
        )

    def notify(self, method: str, params: dict[str, Any]) -> None:
        self.protocol.notify(method, params)

    def run_task(self, coro: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        """Start background work, keep a reference, and log its failure."""
        task = asyncio.get_running_loop().create_task(coro, name=name)
        self.background.add(task)

        def done(finished: asyncio.Task[Any]) -> None:
            self.background.discard(finished)
            if not finished.cancelled() and finished.exception():
                log.error("background task %s failed", name, exc_info=finished.exception())

        task.add_done_callback(done)
        return task

    @property
    def agents(self) -> AgentRegistry:
        """The subagent definitions (every session and request shares one cache)."""
        if self._agents is None:
            from wave_ls.agents import AgentRegistry

            self._agents = AgentRegistry(self.home)
        return self._agents

    def workspace_files(self, cwd: Path) -> WorkspaceFiles:
        """The cached file list of a folder, for ``@`` completion."""
        from wave_ls.chat_input.workspace_files import WorkspaceFiles

        if cwd not in self.files:
            self.files[cwd] = WorkspaceFiles(cwd)
        return self.files[cwd]


def create_server() -> WaveServer:
    server = WaveServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: WaveServer, params: types.InitializeParams) -> None:
        options, problems = parse_initialization_options(params.initialization_options)
        ls.options = options
        if options.logFile or options.logLevel:
            from wave_ls.log import setup_logging

            setup_logging(options.logLevel, options.logFile)
        ls.settings = RuntimeSettings.from_env().override(
            model=options.model,
            base_url=options.baseUrl,
            api_key=options.apiKey,
            permission_mode=options.permissionMode,
        )
        if params.workspace_folders:
            ls.root = Path(to_fs_path(params.workspace_folders[0].uri) or ls.root)
        elif params.root_uri:
            ls.root = Path(to_fs_path(params.root_uri) or ls.root)
        elif params.root_path:
            ls.root = Path(params.root_path)
        for problem in problems:
            ls.show_warning(problem)
        # What start-up allocated lives as long as the server: keep the collector from
        # walking it again and again (full collections were the completion p99 tail).
        gc.freeze()

    from wave_ls.server import (
        agents_feature,
        authoring_feature,
        sessions_feature,
        tasks_feature,
        worktrees_feature,
    )

    agents_feature.register(server)
    authoring_feature.register(server)
    sessions_feature.register(server)
    tasks_feature.register(server)
    worktrees_feature.register(server)
    return server


def serve(tcp: bool = False, host: str = "127.0.0.1", port: int = 2087) -> int:
    # Some libraries print; stdout belongs to JSON-RPC.
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    server = create_server()
    if tcp:
        server.start_tcp(host, port)
    else:
        server.start_io()
    return 0
