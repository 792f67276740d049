"""The ACP agent: thin handlers that map ACP requests onto ``AgentSession``s.

``initialize`` advertises ``loadSession``, session listing and the prompt content taken
(text, resource links, embedded resources); ``session/new`` and ``session/load`` open a
session (its modes are the four permission modes); ``session/prompt`` runs one turn and
answers with its stop reason once every update of the turn has been sent (the first
prompt of a session in a folder that needs a trust decision asks it first: ``trust.py``);
``session/cancel`` stops it; ``session/set_mode`` (and ``session/set_config_option`` for
its ``mode`` option) switches the permission mode and echoes it; ``session/resume`` is
``session/load`` without the replay, ``session/close`` ends a session; ``/compact`` compacts
(``compact.py``). The
``mcpServers`` of ``session/new`` and ``session/load`` are the session's own MCP servers, and
a project's server waiting for approval is asked about at the first prompt
(``mcp_servers.py``).
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, cast

from acp import RequestError
from acp.schema import (
    AgentCapabilities,
    CloseSessionResponse,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionConfigOptionBoolean,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionInfo,
    SessionListCapabilities,
    SessionMode,
    SessionModeState,
    SessionResumeCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
)

from wave_ls import __version__
from wave_ls.acp.commands import CommandsAnnouncer
from wave_ls.acp.compact import (
    COMPACT_COMMAND,
    busy_line,
    compact_instructions,
    nothing_line,
)
from wave_ls.acp.history import replay
from wave_ls.acp.mcp_servers import (
    MCP_STATUS,
    ApprovalAsker,
    McpNotices,
    given_servers,
    wants_mcp_status,
)
from wave_ls.acp.outbox import Outbox
from wave_ls.acp.permissions import AcpPermissionAsker
from wave_ls.acp.prompt import prompt_message
from wave_ls.acp.trust import (
    TRUST_COMMAND,
    TrustAsker,
    decided_text,
    is_trust_command,
    notice_text,
)
from wave_ls.acp.updates import SessionUpdates
from wave_ls.runtime.background_work import run_task
from wave_ls.runtime.client_paths import UnusablePath, absolute_path, existing_dir
from wave_ls.runtime.core import PERMISSION_MODES, Message, PermissionMode
from wave_ls.runtime.settings import RuntimeSettings, model_client_for, session_model

if TYPE_CHECKING:
    from collections.abc import Sequence

    from acp.interfaces import Client
    from acp.schema import ClientCapabilities

    from wave_ls.acp.mcp_servers import GivenServers
    from wave_ls.acp.prompt import ContentBlock
    from wave_ls.agents import AgentRegistry
    from wave_ls.mcp.config import ServerSpec
    from wave_ls.runtime.loop import TurnResult
    from wave_ls.session import AgentSession, Resume

log = logging.getLogger(__name__)

INVALID_PARAMS = -32602
SESSION_BUSY = -32010  # as wave/chat/send over LSP
MODE_OPTION = "mode"  # the configuration option that is the permission mode
MODES: dict[PermissionMode, tuple[str, str]] = {
    "default": ("Default", "Ask before edits and commands"),
    "acceptEdits": ("Accept edits", "Edit files without asking; ask before other commands"),
    "plan": ("Plan", "Read and plan only: no edits, no commands that change anything"),
    "bypassPermissions": ("Bypass permissions", "Run every tool without asking"),
}


@dataclass
class LiveSession:
    """One session of this connection and its ACP wiring."""

    session: AgentSession
    updates: SessionUpdates
    commands: CommandsAnnouncer
    # The turns of pending prompts (None: ``/trust``, answered without a turn).
    prompts: set[asyncio.Task[TurnResult | None]] = field(default_factory=set)
    trust_settled: bool = False  # asked (or no need), and said what is held back
    offer_trust: bool = False  # something is held back: ``/trust`` is offered
    mcp_settled: bool = False  # its project servers waiting for approval were asked about


def mode_state(current: str) -> SessionModeState:
    return SessionModeState(
        current_mode_id=current,
        available_modes=[
            SessionMode(id=mode, name=MODES[mode][0], description=MODES[mode][1])
            for mode in PERMISSION_MODES
        ],
    )


def config_options(current: str) -> list[SessionConfigOptionSelect | SessionConfigOptionBoolean]:
    """The session's one configuration option: its permission mode (``mode``), the same
    choice as ``session/set_mode`` for clients that use configuration options."""
    return [
        SessionConfigOptionSelect(
            type="select",
            id=MODE_OPTION,
            name="Mode",
            category="mode",
            current_value=current,
            options=[
                SessionConfigSelectOption(
                    value=mode, name=MODES[mode][0], description=MODES[mode][1]
                )
                for mode in PERMISSION_MODES
            ],
        )
    ]


def invalid(message: str) -> RequestError:
    return RequestError(INVALID_PARAMS, message)


def existing_folder(cwd: str, method: str) -> Path:
    """An absolute path to an existing folder, resolved; invalid params for anything else
    (also a path no system call could take: too long, a NUL byte), as over LSP."""
    try:
        return existing_dir(cwd, "cwd")
    except UnusablePath as error:
        raise invalid(f"{method}: {error}") from None


class WaveAgent:
    """The ``acp.Agent`` of ``wave-ls acp``: one per connection."""

    def __init__(self, home: Path, settings: RuntimeSettings) -> None:
        self.home = home
        self.settings = settings
        self.sessions: dict[str, LiveSession] = {}
        self._registry: AgentRegistry | None = None
        self._conn: Client | None = None
        self._outbox: Outbox | None = None
        self._trust_lock = asyncio.Lock()  # one trust question at a time per connection
        self._mcp_notices = McpNotices()
        # MCP approval questions asked on this connection: (folder, server, definition hash).
        self._mcp_asked: set[tuple[Path, str, str]] = set()
        self._mcp_status_wanted = False  # the client opted in to ``_wave/mcp/status``

    def on_connect(self, conn: Client) -> None:
        self._conn = conn
        self._outbox = Outbox(
            lambda sid, update: conn.session_update(session_id=sid, update=update)
        )
        from wave_ls.mcp.status_events import on_status

        on_status(self._mcp_status)

    @property
    def conn(self) -> Client:
        assert self._conn is not None, "on_connect runs before any request"
        return self._conn

    @property
    def outbox(self) -> Outbox:
        assert self._outbox is not None, "on_connect runs before any request"
        return self._outbox

    @property
    def registry(self) -> AgentRegistry:
        if self._registry is None:
            from wave_ls.agents import AgentRegistry

            self._registry = AgentRegistry(self.home)
        return self._registry

    # ------------------------------------------------------------------ ACP methods

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        **_: object,
    ) -> InitializeResponse:
        from acp import PROTOCOL_VERSION

        self._mcp_status_wanted = wants_mcp_status(client_capabilities)
        return InitializeResponse(
            # A version we do not speak (0, or one newer than ours) gets the latest we do.
            protocol_version=protocol_version
            if 1 <= protocol_version <= PROTOCOL_VERSION
            else PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(
                    image=False, audio=False, embedded_context=True
                ),
                mcp_capabilities=McpCapabilities(http=True, sse=True),
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(),
                    resume=SessionResumeCapabilities(),
                    close=SessionCloseCapabilities(),
                ),
            ),
            agent_info=Implementation(name="wave-ls", title="Wave", version=__version__),
            auth_methods=[],
        )

    async def new_session(
        self, cwd: str, mcp_servers: GivenServers | None = None, **_: object
    ) -> NewSessionResponse:
        folder = existing_folder(cwd, "session/new")
        given = given_servers(mcp_servers)
        live = self._open(folder, uuid.uuid4().hex, self.settings.model, "default", [], given)
        self._after_open(live)
        mode = live.session.permission_mode
        return NewSessionResponse(
            session_id=live.session.id, modes=mode_state(mode), config_options=config_options(mode)
        )

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: GivenServers | None = None, **_: object
    ) -> LoadSessionResponse:
        live = await self._reopen(cwd, session_id, mcp_servers, "session/load")
        # A session already open on this connection keeps the servers it was opened with.
        for update in replay(live.session.messages, live.session.cwd):
            self.outbox.put(session_id, update)
        await self.outbox.drain()  # the history first, then the answer
        self._after_open(live)
        mode = live.session.permission_mode
        return LoadSessionResponse(modes=mode_state(mode), config_options=config_options(mode))

    async def resume_session(
        self, cwd: str, session_id: str, mcp_servers: GivenServers | None = None, **_: object
    ) -> ResumeSessionResponse:
        """``session/load`` without the history sent again (the client has it)."""
        live = await self._reopen(cwd, session_id, mcp_servers, "session/resume")
        self._after_open(live)
        mode = live.session.permission_mode
        return ResumeSessionResponse(modes=mode_state(mode), config_options=config_options(mode))

    async def close_session(self, session_id: str, **_: object) -> CloseSessionResponse:
        """End one session: its turn cancelled, its background tasks stopped, its transcript
        closed (``session/load`` or ``session/resume`` opens it again)."""
        await self._close(self._live(session_id, "session/close"))
        return CloseSessionResponse()

    async def _close(self, live: LiveSession) -> None:
        if self.sessions.get(live.session.id) is live:
            del self.sessions[live.session.id]
        for turn in live.prompts:
            turn.cancel()
        await live.commands.stop()
        await live.session.close()  # its own MCP servers stop, the folder's with the last

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **_: object
    ) -> SetSessionConfigOptionResponse:
        live = self._live(session_id, "session/set_config_option")
        if config_id != MODE_OPTION:
            raise invalid(f"session/set_config_option: unknown configId {config_id!r}")
        self._set_mode(live, value, "session/set_config_option")
        mode = live.session.permission_mode
        return SetSessionConfigOptionResponse(config_options=config_options(mode))

    async def _reopen(
        self, cwd: str, session_id: str, mcp_servers: GivenServers | None, method: str
    ) -> LiveSession:
        """The session open on this connection, else the saved one opened again
        (``open_saved``), in the mode it last had."""
        from wave_ls.session import CannotResume, open_saved

        live = self.sessions.get(session_id)
        if live is not None:
            return live
        given = given_servers(mcp_servers)

        def reopen(saved: Resume) -> LiveSession:
            # Opened by a request that came while this one read the disk: that one.
            return self.sessions.get(session_id) or self._open(
                saved.cwd, session_id, saved.model, saved.permission_mode, saved.messages, given
            )

        try:
            return await open_saved(
                self.home, session_id, reopen, cwd=cwd, configured_model=self.settings.model
            )
        except CannotResume as error:
            raise invalid(f"{method}: {error}") from None

    async def list_sessions(
        self, cwd: str | None = None, cursor: str | None = None, **_: object
    ) -> ListSessionsResponse:
        from wave_ls.runtime.session_index import list_sessions

        try:
            folder = absolute_path(cwd, "cwd") if cwd else None
        except UnusablePath as error:
            raise invalid(f"session/list: {error}") from None
        saved = await asyncio.to_thread(list_sessions, self.home, folder)
        return ListSessionsResponse(
            sessions=[
                SessionInfo(
                    session_id=summary.session_id,
                    cwd=summary.cwd,
                    title=summary.title or None,
                    updated_at=datetime.fromtimestamp(summary.updated_at / 1000, UTC).isoformat(),
                )
                for summary in saved
            ]
        )

    async def set_session_mode(
        self, session_id: str, mode_id: str, **_: object
    ) -> SetSessionModeResponse:
        self._set_mode(self._live(session_id, "session/set_mode"), mode_id, "session/set_mode")
        return SetSessionModeResponse()

    def _set_mode(self, live: LiveSession, mode_id: object, method: str) -> None:
        if mode_id not in PERMISSION_MODES:
            raise invalid(
                f"{method}: the mode must be one of {', '.join(PERMISSION_MODES)}, got {mode_id!r}"
            )
        live.session.configure(permission_mode=cast(PermissionMode, mode_id))
        # Echoed: clients such as acpx show the mode from the update.
        live.updates.announced_mode = ""
        live.updates.mode_changed()

    async def prompt(
        self, session_id: str, prompt: list[ContentBlock], **_: object
    ) -> PromptResponse:
        from wave_ls.session import SessionBusy

        live = self._live(session_id, "session/prompt")
        message = prompt_message(prompt, live.session.cwd, live.commands.names)
        instructions = compact_instructions(message.text, live.commands.names)
        if instructions is not None:
            await self._compact(live, instructions)
            return PromptResponse(stop_reason="end_turn")

        async def trusted_then_sent() -> TurnResult | None:
            if is_trust_command(message.text, live.commands.names):
                await self._settle_trust(live, again=True)
                live.trust_settled = True
                return None
            if not live.trust_settled:
                await self._settle_trust(live)
                live.trust_settled = True
            if not live.mcp_settled:
                live.mcp_settled = True
                await self._ask_mcp_approvals(live)
            self.outbox.put_text(session_id, self._mcp_notices.take(session_id))
            return await live.session.send(message.text, supplied_files=message.supplied_files)

        turn = run_task(  # awaited below, which handles its failure; cancel stops either part
            trusted_then_sent(),
            f"acp-prompt-{session_id}",
            log_failure=False,
        )
        live.prompts.add(turn)
        try:
            await asyncio.wait({turn})
        except asyncio.CancelledError:  # the connection is closing
            turn.cancel()
            raise
        finally:
            live.prompts.discard(turn)
        await self.outbox.drain()  # every update of the turn before its answer
        if turn.cancelled():
            return PromptResponse(stop_reason="cancelled")
        error = turn.exception()
        if isinstance(error, SessionBusy):
            raise RequestError(SESSION_BUSY, str(error))
        if error is not None:
            raise error
        result = turn.result()
        if result is None:  # /trust: answered without a turn
            return PromptResponse(stop_reason="end_turn")
        if result.status == "cancelled":
            return PromptResponse(stop_reason="cancelled")
        if result.status == "failed":
            if result.limit_reached:
                return PromptResponse(stop_reason="max_turn_requests")
            raise RequestError(-32603, f"wave-ls: {result.error or 'the turn failed'}")
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **_: object) -> None:
        """Stop the prompt's turn, or the turn the session started by itself for a task
        notice (which a prompt may be waiting behind)."""
        live = self.sessions.get(session_id)
        if live is None:
            return
        for turn in live.prompts:
            turn.cancel()
        live.session.cancel_turn()

    async def shutdown(self) -> None:
        """End every session (the connection closed): turns cancelled, background tasks
        stopped, transcripts closed."""
        from wave_ls.mcp.status_events import LISTENERS
        from wave_ls.session import close_all

        await close_all(list(self.sessions.values()), self._close)
        self.sessions.clear()
        if self._mcp_status in LISTENERS:
            LISTENERS.remove(self._mcp_status)
        if self._outbox is not None:
            await self._outbox.close()

    # ------------------------------------------------------------------ helpers

    async def _compact(self, live: LiveSession, instructions: str) -> None:
        """``/compact``: the runtime's compaction; its outcome line comes from the session's
        ``compacted`` event (``updates.py``)."""
        from wave_ls.runtime.core import ModelError
        from wave_ls.session import SessionBusy

        session_id = live.session.id
        try:
            done = await live.session.compact(instructions or None)
        except SessionBusy:
            self.outbox.put_text(session_id, busy_line())
        except ModelError as error:
            raise RequestError(-32603, f"wave-ls: {error}") from None
        else:
            if not done.compacted:
                self.outbox.put_text(session_id, nothing_line())
        await self.outbox.drain()

    async def _settle_trust(self, live: LiveSession, again: bool = False) -> None:
        """Ask whether to trust the session's folder if it needs a decision (``again``: if
        anything is held back or was decided); then say what is held back while it is not
        trusted (``again``: the outcome, whatever it is)."""
        from wave_ls.runtime.trust import set_trust, trust_status

        folder, session_id = live.session.cwd, live.session.id
        async with self._trust_lock:  # another session of the folder may be asking
            try:
                status = await asyncio.to_thread(trust_status, folder, self.home)
                decided = status.decision is not None or bool(status.held_back)
                if status.needs_decision or (again and decided):
                    asker = TrustAsker(self.conn.request_permission, self.outbox)
                    answer = await asker.ask(session_id, status)
                    if answer is not None:
                        status = await asyncio.to_thread(set_trust, folder, self.home, answer)
                        self._trust_changed(status.root)
            except Exception:  # a broken folder must not end the session
                log.exception("session %s: the trust of %s was not settled", session_id, folder)
                return
        held = not status.trusted and bool(status.held_back)
        if again:
            self.outbox.put_text(session_id, decided_text(status))
        elif held:
            self.outbox.put_text(session_id, notice_text(status))
        offer = held or status.decision is not None
        if offer != live.offer_trust:
            live.offer_trust = offer
            live.commands.announce()

    def _trust_changed(self, root: Path) -> None:
        """A decision for ``root``: its live sessions take what now applies (the sandbox is
        the one setting a session holds; the rest is read where it is used)."""
        folders = set()
        for other in self.sessions.values():
            if other.session.cwd == root or other.session.cwd.is_relative_to(root):
                other.session.reload_sandbox()
                other.mcp_settled = False  # a server held back may now wait for approval
                folders.add(other.session.cwd)
        for folder in folders:  # the project's MCP servers are gated again
            run_task(self._regate_mcp(folder), f"acp-mcp-regate-{folder.name}")

    async def _regate_mcp(self, folder: Path) -> None:
        from wave_ls.mcp.manager import default_manager

        await default_manager().list(folder, self.home)

    async def _ask_mcp_approvals(self, live: LiveSession) -> None:
        """Ask about each project server of the session waiting for approval (once per
        connection, folder and definition), then keep the answer as ``wave/mcp/approve``."""
        from wave_ls.mcp.manager import UnknownServer, default_manager

        handle, folder = live.session.mcp, live.session.cwd
        if not handle.defined:  # no file defines a server: nothing to read
            return
        try:
            await default_manager().list(folder, self.home)  # trust and settings as they are now
            handle.prepare()
            waiting = [s for s in handle.servers() if s.status == "needs-approval"]
        except Exception:  # a broken settings file must not end the session
            log.exception(
                "session %s: the MCP servers of %s were not read", live.session.id, folder
            )
            return
        asker = ApprovalAsker(self.conn.request_permission, self.outbox)
        for server in waiting:
            key = (folder, server.spec.name, server.spec.definition_hash)
            async with self._trust_lock:  # one question at a time; another session may ask
                if key in self._mcp_asked:
                    continue
                self._mcp_asked.add(key)
                answer = await asker.ask(live.session.id, server, folder)
            if answer is None:
                continue
            try:
                await default_manager().approve(folder, self.home, server.spec.name, answer)
            except UnknownServer:  # the definition went away meanwhile
                continue

    def _mcp_status(self, folder: Path, owner: str | None, row: dict[str, object]) -> None:
        """An MCP server's status changed: the sessions that use it say so at their next
        prompt (``McpNotices``)."""
        for session_id, live in list(self.sessions.items()):
            if owner == session_id or (owner is None and live.session.cwd == folder):
                self._mcp_notices.heard(session_id, row)
                if self._mcp_status_wanted:
                    run_task(
                        self.conn.ext_notification(MCP_STATUS, {"sessionId": session_id, **row}),
                        "acp-mcp-status",
                    )

    def _live(self, session_id: str, method: str) -> LiveSession:
        live = self.sessions.get(session_id)
        if live is None:
            raise invalid(f"{method}: unknown sessionId {session_id!r}")
        return live

    def _open(
        self,
        cwd: Path,
        session_id: str,
        model: str | None,
        mode: PermissionMode,
        messages: list[Message],
        mcp_servers: Sequence[ServerSpec] = (),
    ) -> LiveSession:
        from wave_ls.session import AgentSession

        session: AgentSession | None = None

        def current() -> AgentSession:
            assert session is not None
            return session

        updates = SessionUpdates(
            session_id,
            self.outbox,
            cwd=lambda: current().working_dir,
            mode=lambda: current().permission_mode,
            announced_mode=mode,
        )

        def accept_edits() -> None:
            current().configure(permission_mode="acceptEdits")

        asker = AcpPermissionAsker(
            session_id,
            request=self.conn.request_permission,
            before=self.outbox.drain,
            folder=cwd,
            accept_edits=accept_edits,
            restore=updates.restore,
        )
        session = AgentSession(
            cwd=cwd,
            home=self.home,
            model=session_model(model),
            client=model_client_for(self.settings),
            session_id=session_id,
            permission_mode=mode,
            sink=updates,
            asker=asker,
            messages=messages,
            catalog=lambda: self.registry.load(cwd),
            mcp_servers=mcp_servers,
        )
        commands = CommandsAnnouncer(
            session_id,
            self.outbox,
            lambda: self.registry.load(cwd),
            own=lambda: [COMPACT_COMMAND, *([TRUST_COMMAND] if live.offer_trust else [])],
        )
        live = LiveSession(session, updates, commands)
        self.sessions[session_id] = live
        return live

    def _after_open(self, live: LiveSession) -> None:
        """What follows the answer to session/new or session/load: the subagents as
        commands."""
        live.commands.announce()
