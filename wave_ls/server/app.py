"""The language server: state shared by the features, start-up and initialization.

The server is a thin adapter: each ``wave/*`` method lives in a feature module under
``wave_ls/server/`` and calls into the runtime; nothing here knows how an agent works.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import sys
import threading
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, cast

from lsprotocol import types
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from wave_ls import __version__
from wave_ls.chat_input.query import ENCODINGS, Encoding
from wave_ls.runtime.lifetime import exit_soon, watch_process
from wave_ls.runtime.settings import RuntimeSettings
from wave_ls.server.agent_progress import AgentProgress
from wave_ls.server.framing import StreamReaderAdapter, ThreadedReader, read_messages
from wave_ls.server.options import InitializationOptions, parse_initialization_options
from wave_ls.server.protocol import WaveProtocol
from wave_ls.server.session_registry import SessionRegistry

if TYPE_CHECKING:  # imported on first use: start-up must stay fast
    from wave_ls.agents import AgentRegistry
    from wave_ls.chat_input.workspace_files import WorkspaceFiles

log = logging.getLogger(__name__)


class WaveServer(LanguageServer):
    """pygls server plus the state the ``wave/*`` features share."""

    protocol: WaveProtocol

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
        self.exit_code = 0  # 1 after ``exit`` without ``shutdown`` (LSP), or the editor gone
        self._main_task: asyncio.Task[None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        # Our transports' (pygls keeps its own private): set by ``shutdown``.
        self.stopping = threading.Event()
        self.tcp_server: asyncio.Server | None = None

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

    def notify(self, method: str, params: dict[str, object]) -> None:
        self.protocol.notify(method, params)

    def watch_editor(self, pid: int) -> None:
        """End the server once the process ``pid`` (``initialize``'s ``processId``) ends."""

        def gone() -> None:
            log.error("the editor's process %d (initialize's processId) is gone; stopping", pid)
            self.exit_code = 1
            exit_soon(lambda: self.exit_code, f"the editor's process {pid} ended")
            if self._loop is not None and self._main_task is not None:
                self._loop.call_soon_threadsafe(self._main_task.cancel)

        watch_process(pid, gone)

    # ---------------------------------------------------------------- transports

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
        """Serve on stdin/stdout with our own reader (``framing``), keeping the exit code;
        the end of stdin ends the process, also while a request is stuck (``lifetime``)."""
        self.stopping = threading.Event()

        def stdin_ended() -> None:
            exit_soon(lambda: self.exit_code, "the client closed stdin")

        reader = ThreadedReader(stdin or sys.stdin.buffer, self.thread_pool, stdin_ended)
        self.protocol.set_writer(StdoutWriter(stdout or sys.stdout.buffer))
        self._run(read_messages(reader, self.protocol, self.stopping))

    def start_tcp(self, host: str, port: int) -> None:
        """Serve one client at a time over TCP, with the same reader as stdio."""
        self.stopping = stop = threading.Event()

        async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.protocol.set_writer(writer)
            await read_messages(StreamReaderAdapter(reader), self.protocol, stop)
            self.shutdown()

        async def serve_tcp() -> None:
            self.tcp_server = await asyncio.start_server(connection, host, port)
            async with self.tcp_server:
                await self.tcp_server.serve_forever()

        self._run(serve_tcp())

    def shutdown(self) -> None:
        """pygls's shutdown, and the end of the reader and TCP server started here."""
        self.stopping.set()
        if self.tcp_server is not None:
            self.tcp_server.close()
        super().shutdown()

    def _run(self, main: Coroutine[Any, Any, None]) -> None:
        async def run() -> None:
            self._main_task = asyncio.current_task()
            self._loop = asyncio.get_running_loop()
            try:
                await main
            finally:
                # However it ends (EOF, ``exit``, the editor's process gone): asyncio.run
                # then waits for every thread, and a request's thread may never end.
                exit_soon(lambda: self.exit_code, "the server was told to end")

        try:
            asyncio.run(run())
        except BrokenPipeError:
            log.error("the connection to the client is lost; stopping")
        except asyncio.CancelledError:
            pass
        except KeyboardInterrupt:
            self.exit_code = 1
        except SystemExit as exit_:  # the ``exit`` notification (pygls ends with sys.exit)
            self.exit_code = exit_.code if isinstance(exit_.code, int) else 1
        finally:
            self.shutdown()

    @property
    def agents(self) -> AgentRegistry:
        """The subagent definitions (every session and request shares one cache), kept
        fresh by a background sweep and the client's file events: a request never stats
        the agent files itself (``AgentRegistry.watch``)."""
        if self._agents is None:
            from wave_ls.agents import AgentRegistry
            from wave_ls.chat_input.completion import agent_index

            registry = AgentRegistry(self.home)
            # What `@` completion needs of a changed catalog, made in the sweep's thread.
            registry.on_change(lambda catalog: agent_index(catalog.agents))
            registry.watch(tuning(SWEEP_ENV, SWEEP_SECONDS))
            self._agents = registry
        return self._agents

    def workspace_files(self, cwd: Path) -> WorkspaceFiles:
        """The cached file list of a folder, for ``@`` completion."""
        from wave_ls.chat_input.workspace_files import DEFAULT_MAX_FILES, WorkspaceFiles

        if cwd not in self.files:
            span = int(tuning(MAX_FILES_ENV, DEFAULT_MAX_FILES, whole=True))
            self.files[cwd] = WorkspaceFiles(cwd, max_files=span)
        return self.files[cwd]


# Tuning knobs (docs/chat-input.md): how often agent files are swept when nobody reports a
# change, and how many files (shallow first) every stage of `@` file search covers.
SWEEP_ENV = "WAVE_AGENT_SWEEP_SECONDS"
WATCH_EDITOR_ENV = "WAVE_WATCH_PROCESS_ID"  # "0": do not end with initialize's processId
SWEEP_SECONDS = 0.5
MAX_FILES_ENV = "WAVE_COMPLETION_MAX_FILES"


def tuning(name: str, default: float, *, whole: bool = False) -> float:
    """A positive number from the environment variable ``name``, else ``default`` (a bad
    value is logged and ignored)."""
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    try:
        value = int(text) if whole else float(text)
    except ValueError:
        value = 0
    if value > 0:
        return value
    kind = "a whole number" if whole else "a number"
    log.warning("%s=%r is not %s above 0; using %s", name, text, kind, default)
    return default


def after_initialize_answer() -> None:
    """What start-up leaves until the ``initialize`` answer is sent (the editor waits for
    it; nothing the agent starts can exist before it):

    - the process reaper (a small process of its own: what the agent starts never outlives
      this one, docs/tools.md);
    - the garbage collector, which ``cli.main`` turns off before the server's imports.
      Nearly everything start-up allocates (lsprotocol's classes, the converter, our
      modules) lives as long as the server, so a collection during start-up is wasted:
      ~30 ms of a ~0.5 s start here. Start-up's garbage is collected once, then the rest is
      frozen: the collector's full passes never walk those objects again (they were the
      completion p99 tail).
    """
    from wave_ls.runtime.processes import reaper

    reaper.start()
    gc.collect()
    gc.freeze()
    gc.enable()


def create_server() -> WaveServer:
    server = WaveServer()

    @server.feature(types.INITIALIZE)
    def initialize(ls: WaveServer, params: types.InitializeParams) -> None:
        # Runs once this answer (or the error, should anything below raise) is sent: before
        # the loop runs its next callback.
        asyncio.get_running_loop().call_soon(after_initialize_answer)
        options, problems = parse_initialization_options(params.initialization_options)
        ls.options = options
        if options.logFile or options.logLevel:
            from wave_ls.log import setup_logging

            problems += [
                f"initializationOptions: {problem}"
                for problem in setup_logging(options.logLevel, options.logFile)
            ]
        ls.settings = RuntimeSettings.from_env().override(
            model=options.model,
            base_url=options.baseUrl,
            api_key=options.apiKey,
            permission_mode=options.permissionMode,
            model_timeout=options.modelTimeout,
            model_retries=options.modelRetries,
        )
        problems += ls.settings.problems
        if params.workspace_folders:
            ls.root = Path(to_fs_path(params.workspace_folders[0].uri) or ls.root)
        elif params.root_uri:
            ls.root = Path(to_fs_path(params.root_uri) or ls.root)
        elif params.root_path:
            ls.root = Path(params.root_path)
        for problem in problems:
            ls.show_warning(problem)
        # Off for a server in another PID namespace than its editor (a container): there
        # the editor's pid names no process, or another one.
        watch = os.environ.get(WATCH_EDITOR_ENV, "1").strip() != "0"
        if watch and params.process_id is not None and params.process_id > 0:
            ls.watch_editor(params.process_id)

    @server.feature(types.EXIT)
    def exit_(ls: WaveServer, *_: object) -> None:
        # pygls exits with this code; kept for the exit timer, which may end the process
        # first (a request stuck in a thread).
        ls.exit_code = 0 if ls.protocol.shutting_down else 1

    from wave_ls.server import (
        agents_feature,
        authoring_feature,
        mcp_feature,
        sessions_feature,
        tasks_feature,
        trust_feature,
        worktrees_feature,
    )

    agents_feature.register(server)
    authoring_feature.register(server)
    mcp_feature.register(server)
    sessions_feature.register(server)
    tasks_feature.register(server)
    trust_feature.register(server)
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
    return server.exit_code
