"""A main-agent chat session: the SDK's entry point, used by the server and the CLI.

A session owns one ``Conversation`` plus what surrounds it: the working directory (and the
session worktree it may switch to), the model, the permission mode, the session-wide
services tools use (task list, background tasks, subagents, plan-mode exit), the transcript,
and the mention reminders added to each user message.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import logging
import uuid
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from wave_ls.agents import AgentCatalog
from wave_ls.chat_input.mentions import (
    file_mention_reminder,
    find_agent_mentions,
    find_file_mentions,
    mention_reminder,
)
from wave_ls.mcp.config import ServerSpec
from wave_ls.mcp.manager import McpManager, default_manager
from wave_ls.mcp.tools import LiveTools
from wave_ls.runtime.allowances import RememberingAsker
from wave_ls.runtime.background_work import run_task
from wave_ls.runtime.client_paths import UnusablePath, existing_dir
from wave_ls.runtime.context.policy import ContextPolicy, load_context_settings
from wave_ls.runtime.core import (
    EventSink,
    Message,
    ModelClient,
    ModelRequest,
    ModelResponse,
    PermissionAsker,
    PermissionMode,
    PermissionRequest,
    Tool,
    ToolContext,
    Usage,
)
from wave_ls.runtime.loop import AgentConfig, Compaction, Conversation, DenyAll, TurnResult
from wave_ls.runtime.memory import memory_reminder_for
from wave_ls.runtime.model_settings import load_model_options
from wave_ls.runtime.prompts import main_system_prompt
from wave_ls.runtime.sandbox import Confinement
from wave_ls.runtime.services import Services
from wave_ls.runtime.session_index import read_summary
from wave_ls.runtime.tool_names import WaveTool
from wave_ls.runtime.tools import builtin_tools
from wave_ls.runtime.tools.task_list import TaskList
from wave_ls.runtime.transcript import (
    InvalidSessionId,
    SavedSession,
    TranscriptWriter,
    UnreadableTranscript,
    read_saved,
    transcript_path,
)
from wave_ls.subagents.agent_mcp import SessionMcp
from wave_ls.subagents.agent_tool import AgentTool
from wave_ls.subagents.runner import SubagentHost
from wave_ls.subagents.settings import foreground_timeout, max_concurrent
from wave_ls.tasks import BackgroundTasks, TaskInfo
from wave_ls.tasks.control import TaskOutputTool, TaskStopTool
from wave_ls.worktrees.sandboxing import session_sandbox
from wave_ls.worktrees.session_switch import SessionWorktrees
from wave_ls.worktrees.tools import EnterWorktreeTool, ExitWorktreeTool

log = logging.getLogger(__name__)

# An idle session waits this long for more task notices, while other tasks still run, before
# its automatic turn (docs/protocol.md, "Background tasks and automatic turns").
NOTICE_GATHER_SECONDS = 0.25
# A new session starts its MCP servers this long after it opens (a message sent before then
# starts them with the first answer instead: never before the first model request).
MCP_START_DELAY = 0.3


class SessionBusy(Exception):
    """A message was sent while the session's previous turn is still running."""


class AgentSession:
    """One chat with the main agent."""

    def __init__(
        self,
        *,
        cwd: Path,
        home: Path,
        model: str,
        client: ModelClient,
        session_id: str | None = None,
        permission_mode: PermissionMode = "default",
        sink: EventSink | None = None,
        asker: PermissionAsker | None = None,
        services: Services | None = None,
        tools: Sequence[Tool] | None = None,
        messages: Sequence[Message] = (),
        persist: bool = True,
        catalog: Callable[[], AgentCatalog] | None = None,
        mcp: McpManager | None = None,
        mcp_servers: Sequence[ServerSpec] = (),
        context_window: int | None = None,
    ) -> None:
        self.id = session_id or uuid.uuid4().hex
        self.cwd = cwd.resolve()
        self.home = home
        self.catalog = catalog
        self.transcript: TranscriptWriter | None = None
        if persist:
            self.transcript = TranscriptWriter(transcript_path(home, self.id))
            if not messages:
                self.transcript.write_header(
                    session_id=self.id,
                    cwd=str(self.cwd),
                    model=model,
                    permission_mode=permission_mode,
                )
        # The opt-in sandbox of every command (``sandbox`` in .wave/settings.json).
        self.sandbox = session_sandbox(self.cwd, home)
        self._retired_sandboxes: list[Confinement] = []  # replaced by reload_sandbox
        self.tasks = BackgroundTasks(self.id, home)
        self.tasks.on_notice(lambda _info: self._wake_soon())
        self.worktrees = SessionWorktrees(
            self.cwd, home, owner=f"session {self.id}", session_id=self.id, on_change=self._moved
        )
        self.services = dataclasses.replace(
            services or Services(),
            task_list=TaskList(),
            background=self.tasks,
            session_worktree=self.worktrees,
            plan_mode=PlanModeExit(self),
        )
        all_tools = list(tools) if tools is not None else session_tools()
        # MCP servers (docs/mcp.md): the folder's, shared with its other sessions, plus the
        # ones an ACP client gave; started in the background, tools join between rounds.
        manager = mcp or default_manager()
        self.mcp = manager.open(self.cwd, home, self.id, mcp_servers)
        self.subagents: SubagentHost | None = None  # delegation needs a catalog
        if catalog is not None:
            self.subagents = SubagentHost(
                client=client,
                catalog=catalog,
                parent_config=lambda: self.conversation.config,
                asker=lambda: self.conversation.asker,
                memory_cwd=self.cwd,
                home=home,
                parent_messages=lambda: self.conversation.messages,
                emit=self.conversation_sink_emit,
                foreground_timeout=foreground_timeout(self.cwd, home),
                max_concurrent=max_concurrent(self.cwd, home),
                tool_factory=session_tools,
                mcp=SessionMcp(
                    tools=self.mcp.tools,
                    wait=self.mcp.wait_for,
                    open_own=lambda specs: manager.open(self.cwd, home, self.id, specs),
                ),
            )
            all_tools.append(AgentTool(self.subagents))
        # The window (docs/endpoints.md): a setting, else what the endpoint says (asked now,
        # in the background), else a default; compaction and cut tool outputs follow it.
        context_settings = load_context_settings(self.cwd, home, option_window=context_window)
        for problem in context_settings.problems:
            log.warning("session %s: %s", self.id, problem)
        base_url, api_key = getattr(client, "endpoint", (None, None))
        self.context = ContextPolicy.from_settings(
            context_settings,
            base_url=base_url,
            api_key=api_key,
            state=self._state_note,
            keep_dir=home / ".wave" / "tool-outputs" / self.id,
        )
        self.context.window.start_probe(model)
        options = load_model_options(self.cwd, home, model)
        for problem in options.problems:
            log.warning("session %s: %s", self.id, problem)
        config = AgentConfig(
            system_prompt=main_system_prompt(self.cwd),
            model=model,
            params=options.params(),
            tool_choice=options.tool_choice,
            reply_prefix=options.reply_prefix,
            context=self.context,
            tools=LiveTools(all_tools, self.mcp.tools),
            permission_mode=permission_mode,
            context_reminder=lambda: memory_reminder_for(self.cwd, self.home),
            inbox=lambda: [
                *(notice.message() for notice in self.tasks.take_notices()),
                *self.mcp.take_notes(),
            ],
            sandbox_auto_allow=self.sandbox is not None,
        )
        context = ToolContext(
            cwd=self.cwd,
            home=home,
            session_id=self.id,
            services=self.services,
            sandbox=self.sandbox,
        )
        own_client = McpStarter(client, self.mcp.start) if self.mcp.defined else client
        if self.subagents is not None:  # a delegation's leftover work waits for its requests
            own_client = self.subagents.parent_client(own_client)
        self.conversation = Conversation(
            config,
            own_client,
            context,
            sink=sink,
            # "Allow for this session" answers are kept here; subagents ask through it too.
            asker=RememberingAsker(asker or DenyAll(), self.cwd),
            messages=list(messages),
            on_append=self.transcript.append if self.transcript else None,
        )
        self._lock = asyncio.Lock()
        if self.mcp.defined:
            with contextlib.suppress(RuntimeError):  # no loop yet: the first message starts them
                asyncio.get_running_loop().call_later(MCP_START_DELAY, self._start_mcp_idle)
        self._turn: asyncio.Task[Any] | None = None  # the task running the current turn
        self._waking: asyncio.Task[None] | None = None
        self._turn_reason = ""
        self._user_waiting = False  # a message waits for the session's own turn to end
        self._closed = False

    def conversation_sink_emit(self, event: Any) -> None:
        self.conversation.sink.emit(event)

    @property
    def messages(self) -> list[Message]:
        return self.conversation.messages

    @property
    def model(self) -> str:
        return self.conversation.config.model

    @property
    def permission_mode(self) -> PermissionMode:
        """The permission mode from the next model round on (a switch asked for during a
        turn included)."""
        mode: PermissionMode = self.conversation.upcoming("permission_mode")
        return mode

    @property
    def working_dir(self) -> Path:
        """Where the session's tools run now: its folder, or the session worktree it is in."""
        return self.conversation.context.cwd

    @property
    def usage(self) -> Usage:
        """The tokens of every model request of the session so far."""
        return self.conversation.usage

    async def send(
        self, text: str, *, supplied_files: Mapping[str, str] | None = None
    ) -> TurnResult:
        """Run one turn for the user's ``text``.

        A turn the session started itself for task notices is waited for: the message is
        queued behind it. ``SessionBusy`` while a turn the user started is running, or while
        another message already waits. ``supplied_files`` holds file texts the client sent
        with the message, by absolute path (see ``user_messages``).
        """
        if self._user_waiting or (self._lock.locked() and self._turn_reason != "notification"):
            raise SessionBusy(f"session {self.id} is still answering the previous message")
        self._user_waiting = True
        try:
            await self._lock.acquire()
        finally:
            self._user_waiting = False
        try:
            if self._closed:  # closed while this message waited behind an automatic turn
                return TurnResult("cancelled", "", Usage(), "the session was closed")
            self._turn_reason = "user"
            self._turn = asyncio.current_task()
            result = await self.conversation.run_turn(self.user_messages(text, supplied_files))
        finally:
            self._turn_reason = ""
            self._turn = None
            self._lock.release()
            self._turn_ended()
            if self.tasks.pending_notices:
                self._wake_soon()
        # The clients saw the turn end: the next message may start while what the
        # delegations left (an unchanged worktree's removal) ends; this answer waits for it.
        await self._settle_delegations()
        return result

    async def compact(self, instructions: str | None = None) -> Compaction:
        """Compact the conversation now (``wave/session/compact``). ``SessionBusy`` while a
        turn runs; ``ModelError`` when the model could not write the summary."""
        if self._lock.locked() or self._user_waiting:
            raise SessionBusy(
                f"session {self.id} is running a turn: compact it once the turn has ended "
                "(or cancel the turn first)"
            )
        async with self._lock:
            return await self.conversation.compact(instructions, reason="manual")

    def _state_note(self) -> str:
        """What a summary must carry besides the conversation: background tasks and the
        session's worktree."""
        lines = [
            f"- background task {info.task_id}: {info.summary()}" for info in self.tasks.list()
        ]
        current = self.worktrees.current
        if current is not None:
            lines.append(f"- the session works in the worktree {current.path}")
        return "\n".join(lines)

    def _start_mcp_idle(self) -> None:
        """The MCP servers start a moment after the session opens, unless a turn runs:
        then with its first answer (``McpStarter``), so that starting them (the SDK's
        imports, the processes) never delays the first model request."""
        if not self._lock.locked():
            self.mcp.start()

    def _wake_soon(self) -> None:
        """Let the main agent react to task notices: a running turn takes them at its next
        round; an idle session starts a turn of its own."""
        if self._closed:
            return
        if self._waking is None or self._waking.done():
            self._waking = run_task(self._wake(), f"wave-wake-{self.id}")

    async def _wake(self) -> None:
        await asyncio.sleep(0)  # a turn that is running takes the notices first
        if self.tasks.has_running:
            # Others may end in a moment (tasks started together end together): one turn
            # answers all their notices, instead of one turn, and one more request carrying
            # the whole conversation, per task.
            await asyncio.sleep(NOTICE_GATHER_SECONDS)
        while self.tasks.pending_notices and not self._lock.locked() and not self._closed:
            async with self._lock:
                if not self.tasks.pending_notices:  # a message queued first has taken them
                    return
                self._turn_reason = "notification"
                self._turn = asyncio.current_task()
                try:
                    await self.conversation.run_turn([])
                except Exception:
                    log.exception("session %s: the turn for task notices failed", self.id)
                finally:
                    self._turn_reason = ""
                    self._turn = None
                    self._turn_ended()
            await self._settle_delegations()

    def _moved(self, cwd: Path, write_root: Path | None) -> None:
        """The session entered or left a worktree: its tools run there from now on."""
        self.conversation.move_to(cwd, write_root, main_system_prompt(cwd))

    def task_changed(self, callback: Callable[[TaskInfo], None]) -> None:
        self.tasks.on_change(callback)

    async def wait_idle(self, poll: float = 0.05) -> None:
        """Wait until no background task runs and the agent has answered every notice
        (what a one-shot ``wave-ls run`` does before it exits)."""
        while (
            self.tasks.has_running
            or self.tasks.pending_notices
            or self._lock.locked()
            or (self._waking is not None and not self._waking.done())
        ):
            await asyncio.sleep(poll)

    def reload_sandbox(self) -> None:
        """Read the ``sandbox`` settings again (a workspace-trust decision changed what
        applies): the next tool call uses them. A replaced sandbox is closed with the
        session, since a command may still run in it."""
        sandbox = session_sandbox(self.cwd, self.home)
        if self.sandbox is not None:
            self._retired_sandboxes.append(self.sandbox)
        self.sandbox = sandbox
        self.conversation.use_sandbox(sandbox)

    def configure(
        self, *, permission_mode: PermissionMode | None = None, model: str | None = None
    ) -> tuple[PermissionMode, str]:
        """Switch the permission mode or the model from the next model round; the values
        that will be in force are returned and kept in the transcript (a resume keeps them)."""
        self.conversation.reconfigure(permission_mode=permission_mode, model=model)
        if model:  # its own ``model.byModel`` settings, from the same round
            self.conversation.use_model_options(load_model_options(self.cwd, self.home, model))
        mode = self.permission_mode
        chosen: str = self.conversation.upcoming("model")
        self._record_config(permission_mode=permission_mode, model=model)
        return mode, chosen

    def _record_config(
        self, *, permission_mode: PermissionMode | None = None, model: str | None = None
    ) -> None:
        """Keep a switch of mode or model in the transcript (a resume reads the last one)."""
        if self.transcript is not None and (permission_mode or model):
            changed = {"permissionMode": permission_mode, "model": model}
            self.transcript.write_record(
                {"type": "config", **{k: v for k, v in changed.items() if v is not None}}
            )

    def cancel_turn(self) -> bool:
        """Cancel the running turn, whoever started it (the user, or the session itself for
        task notices); True when there was one. The session takes the next message as usual."""
        turn = self._turn
        if turn is None or turn.done():
            return False
        turn.cancel()
        return True

    @property
    def closed(self) -> bool:
        return self._closed

    async def _settle_delegations(self) -> None:
        """Wait for what delegations finish after their result, e.g. an unchanged
        worktree's removal (a session without a catalog delegates nothing). Shielded: a
        caller cancelled meanwhile leaves the removal running, never half done."""
        if self.subagents is not None:
            await asyncio.shield(self.subagents.settle())

    async def close(self) -> None:
        """End the session: cancel its turn, stop every background task (their worktree
        rules run; their notices start no turn), and let go of its transcript and worktree
        (which stays). A closed session can be resumed from its transcript."""
        self._closed = True
        running = [t for t in (self._turn, self._waking) if t is not None and not t.done()]
        for task in running:
            task.cancel()
        if running:
            await asyncio.wait(running)
        await self.tasks.stop_all()
        await self._settle_delegations()
        await self.mcp.close()  # the folder's servers stop with its last session
        self.worktrees.close()
        for sandbox in (*self._retired_sandboxes, self.sandbox):
            if sandbox is not None:
                sandbox.close()
        if self.transcript is not None:
            self.transcript.close()
            await asyncio.to_thread(read_summary, self.transcript.path)

    def _turn_ended(self) -> None:
        """Bring the saved summary (``wave/session/list``) up to date, off the event loop."""
        if self.transcript is not None and not self._closed:
            asyncio.get_running_loop().run_in_executor(None, read_summary, self.transcript.path)

    def user_messages(
        self, text: str, supplied_files: Mapping[str, str] | None = None
    ) -> list[Message]:
        """The user's message verbatim, then the reminders its mentions call for.

        A ``[@file:...]`` mention whose absolute path is in ``supplied_files`` shows that
        text (an editor's unsaved buffer) instead of the file on disk.
        """
        out = [Message("user", text)]
        text = out[0].content  # what can be encoded (``runtime.text``)
        files = find_file_mentions(text)
        file_reminder = (
            file_mention_reminder(files, self.cwd, supplied=supplied_files) if files else None
        )
        if file_reminder:
            out.append(Message("user", file_reminder, meta={"reminder": "file"}))
        agents = find_agent_mentions(text)
        choices = [(a.name, a.description) for a in self.catalog().agents] if self.catalog else []
        reminder = mention_reminder(agents, choices) if agents else None
        if reminder:
            out.append(Message("user", reminder, meta={"reminder": "agent"}))
        return out


class McpStarter:
    """The session's model client, which starts the MCP servers once the first model request
    is on its way (its first streamed text, or its answer)."""

    def __init__(self, client: ModelClient, start: Callable[[], None]) -> None:
        self.client = client
        self.start = start
        self.started = False
        # What the endpoint is, for the loop's notices (the wrapped client's address).
        self.base_url: str = getattr(client, "base_url", "") or ""

    async def complete(
        self, request: ModelRequest, on_delta: Callable[[str], None] | None = None
    ) -> ModelResponse:
        if self.started:
            return await self.client.complete(request, on_delta)

        def delta(text: str) -> None:
            self._start()
            if on_delta is not None:
                on_delta(text)

        try:
            return await self.client.complete(request, delta)
        finally:
            self._start()

    def _start(self) -> None:
        if not self.started:
            self.started = True
            self.start()


def session_tools() -> list[Tool]:
    """The main agent's tools besides ``Agent``."""
    return [
        *builtin_tools(),
        TaskOutputTool(),
        TaskStopTool(),
        EnterWorktreeTool(),
        ExitWorktreeTool(),
    ]


class PlanModeExit:
    """``ExitPlanMode``'s approval step: the user approves the plan, the session leaves plan
    mode (to ``default``, so edits are still asked for)."""

    def __init__(self, session: AgentSession) -> None:
        self.session = session

    async def exit(self, plan: str, tool_call_id: str = "") -> bool:
        conversation = self.session.conversation
        if conversation.config.permission_mode != "plan":
            return True
        request = PermissionRequest(
            WaveTool.EXIT_PLAN_MODE.value,
            {"plan": plan},
            "exit plan mode and start implementing the plan",
            effect="session",
            tool_call_id=tool_call_id,
        )
        decision = await conversation.asker.ask(request)
        if decision.allowed:
            conversation.set_permission_mode("default")
            self.session._record_config(permission_mode="default")  # a resume keeps it
        return decision.allowed


# ---------------------------------------------------------------------- for the adapters

Opened = TypeVar("Opened")
Item = TypeVar("Item")


class CannotResume(ValueError):
    """A saved session that cannot be opened again; the message says why (the id is not one
    of ours, nothing is saved, the transcript is not loaded, or the folder is not usable)."""


@dataclass(frozen=True)
class Resume:
    """What a saved session is opened again with (``open_saved`` decides it)."""

    session_id: str
    cwd: Path
    model: str
    permission_mode: PermissionMode
    messages: list[Message]


async def load_saved(home: Path, session_id: str) -> SavedSession | None:
    """The saved session ``session_id`` (None: nothing saved), read off the event loop;
    ``CannotResume`` for an id that is not one of ours or a transcript that is not loaded."""
    try:
        return await asyncio.to_thread(read_saved, home, session_id)
    except InvalidSessionId:
        raise CannotResume(f"invalid sessionId {session_id!r}") from None
    except UnreadableTranscript as error:
        raise CannotResume(f"session {session_id!r}: {error}") from None


async def open_saved(
    home: Path,
    session_id: str,
    open_session: Callable[[Resume], Opened],
    *,
    cwd: str | None = None,
    model: str | None = None,
    permission_mode: PermissionMode | None = None,
    configured_model: str | None = None,
    default_mode: PermissionMode = "default",
) -> Opened:
    """Open the saved session ``session_id`` again: the one way both adapters resume.

    Its folder is ``cwd`` when given, else the saved one; its model the client's ``model``,
    else the saved one, else ``configured_model`` (a session saved while no model was
    configured runs on the configured one, never on the placeholder it was saved with); its
    mode ``permission_mode``, else the saved one, else ``default_mode``. ``open_session``
    makes the session from that (the adapter's own wiring: sink, asker, catalog) and what it
    returns is returned. ``CannotResume`` says why a session cannot be opened again.
    """
    from wave_ls.runtime.settings import session_model

    saved = await load_saved(home, session_id)
    if saved is None:
        raise CannotResume(f"no saved session {session_id!r}")
    header = saved.header
    try:
        folder = existing_dir(cwd or header.cwd, "cwd")
    except UnusablePath as error:
        raise CannotResume(str(error)) from None
    return open_session(
        Resume(
            session_id=session_id,
            cwd=folder,
            model=session_model(model, header.model, configured_model),
            permission_mode=permission_mode or header.permission_mode or default_mode,
            messages=saved.messages,
        )
    )


async def close_all(items: Iterable[Item], close: Callable[[Item], Awaitable[object]]) -> None:
    """End every session at once (a shutdown, a connection closed): ``close`` (the adapter's
    own ending of one, which calls ``AgentSession.close``) runs for all of them together, so
    that one slow session (a background task that takes its time to stop) does not hold up
    the others. One that fails is logged; the others still end."""
    results = await asyncio.gather(*(close(item) for item in items), return_exceptions=True)
    for result in results:
        if isinstance(result, BaseException) and not isinstance(result, asyncio.CancelledError):
            log.error("a session did not close cleanly", exc_info=result)
