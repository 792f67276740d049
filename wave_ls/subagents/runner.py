"""Running one subagent: a fresh conversation from its definition, and the outcome rules.

- Context: the definition's body as system prompt, memory unless ``omitAgentsMd``, the task
  prompt as the only user message (CTX-1). Nothing of the parent's conversation.
- Tools: the resolved set only; tools outside it are not registered (LOAD-4, FM-2..5), and
  never ``Agent`` nor the task-list tools.
- Model: the definition's, or with ``inherit`` the parent's model and parameters (EXP-1).
- Outcome (FAIL-1..3): the last assistant text, even after a later failure; no assistant
  text at all: ``Agent delegation failed: <reason>``. Notices never cross.
- Isolation (WT-1..11): an isolated run works in its own worktree (cwd, write root), which
  the keep/remove rule ends whatever the outcome (``worktrees/workspace.py``); the summary
  is added to the result.
- Fork (FORK-2): a copy of the main agent continuing from a copy of its conversation.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import dataclasses
import logging
import secrets
from collections.abc import AsyncIterator, Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from wave_ls.agents import NEVER_FOR_SUBAGENTS, AgentCatalog, AgentDefinition, resolve_tools
from wave_ls.mcp.config import startup_timeout
from wave_ls.mcp.tools import LiveTools
from wave_ls.runtime.allowances import RememberingAsker
from wave_ls.runtime.core import (
    Event,
    Message,
    ModelClient,
    PermissionAsker,
    PermissionDecision,
    PermissionRequest,
    RunUsage,
    Tool,
    ToolContext,
    ToolResult,
)
from wave_ls.runtime.loop import (
    DEFAULT_MAX_ROUNDS,
    AgentConfig,
    Conversation,
    TurnResult,
    last_assistant_text,
)
from wave_ls.runtime.memory import memory_reminder_for
from wave_ls.runtime.permissions import DONT_ASK_DENIED, subagent_permission_mode
from wave_ls.runtime.prompts import subagent_environment
from wave_ls.runtime.request_sent import RequestSentSignal
from wave_ls.runtime.tools import builtin_tools
from wave_ls.subagents.activity import ActivityTracker, SubagentBridge, SubagentListener
from wave_ls.subagents.agent_mcp import AgentServers, SessionMcp, agent_servers, mcp_note
from wave_ls.subagents.claude_keys import (
    agent_hooks,
    agent_params,
    agent_start,
    trusted_mode,
)
from wave_ls.subagents.hooks import AgentHooks
from wave_ls.subagents.models import subagent_model
from wave_ls.subagents.record import DelegationRecord
from wave_ls.worktrees.model import IsolationError
from wave_ls.worktrees.workspace import (
    Workspace,
    WorkspaceRequest,
    load_isolation_soon,
    open_workspace,
)

log = logging.getLogger(__name__)

DEFAULT_FOREGROUND_TIMEOUT = 600.0
# Subagents of one session that run at once (``{"agent": {"maxConcurrent": N}}``); the
# others wait for a free slot. A one-slot local server answers them one by one anyway.
DEFAULT_MAX_CONCURRENT = 4
# How long work left for after a delegation's return waits for the parent's next request.
LATER_WORK_WAIT = 0.5
# Built-ins that follow plan mode's read-only Bash rules even outside plan mode.
READ_ONLY_BUILTINS = frozenset({"Explore", "Plan"})
DELEGATION_FAILED = "Agent delegation failed: {reason}"


@dataclass
class SubagentHost:
    """What delegation needs from the session that owns it."""

    client: ModelClient
    catalog: Callable[[], AgentCatalog]
    parent_config: Callable[[], AgentConfig]
    asker: Callable[[], PermissionAsker]  # the parent's, as it is when the run starts
    memory_cwd: Path
    home: Path
    parent_messages: Callable[[], list[Message]] = list
    emit: Callable[[Event], None] = lambda _event: None  # the parent session's event sink
    tool_factory: Callable[[], Sequence[Tool]] = builtin_tools
    foreground_timeout: float = DEFAULT_FOREGROUND_TIMEOUT
    # The endpoint's model ids when known (a `claude-*` id it lists is sent as is).
    served_models: Callable[[], Collection[str] | None] = lambda: None
    # The session's MCP servers, as its subagents may use them (none by default).
    mcp: SessionMcp = field(default_factory=SessionMcp)
    max_concurrent: int = DEFAULT_MAX_CONCURRENT
    _slots: asyncio.Semaphore | None = field(default=None, init=False, repr=False)
    _running: int = field(default=0, init=False, repr=False)
    _endings: set[asyncio.Future[None]] = field(default_factory=set, init=False, repr=False)
    _quiet: asyncio.Event | None = field(default=None, init=False, repr=False)

    def parent_client(self, client: ModelClient) -> ModelClient:
        """The parent conversation's ``client``, saying when its requests are on their way."""
        return RequestSentSignal(client, self.parent_request_sent)

    def parent_request_sent(self) -> None:
        """The parent's next model request is on its way: what delegations left for after
        their return (``after_next_request``) begins, and what an isolated one would import
        is loaded meanwhile (``load_isolation_soon``)."""
        load_isolation_soon()
        quiet, self._quiet = self._quiet, None
        if quiet is not None:
            quiet.set()

    async def after_next_request(self) -> None:
        """Until the parent's next model request is on its way, its turn settles, or
        ``LATER_WORK_WAIT`` has passed (another tool call of its round still running): an
        unchanged worktree's removal waits for it, so that its git processes do not compete
        with the return (issue 30: 2-3 ms of the return gap)."""
        if self._quiet is None:
            self._quiet = asyncio.Event()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._quiet.wait(), LATER_WORK_WAIT)

    def after_return(self, ending: asyncio.Future[None]) -> None:
        """Work a delegation left running once its result was returned (an isolated
        worktree's end: the rule, then an unchanged one's removal), handed over before the
        delegation awaits it, so a delegation cancelled meanwhile leaves it here:
        ``settle`` waits for it."""
        self._endings.add(ending)
        ending.add_done_callback(self._endings.discard)

    async def settle(self) -> None:
        """Wait for what delegations left running (the session's turn end and its close
        do): nothing stays behind a turn that has ended."""
        while self._endings:
            self.parent_request_sent()  # none comes after the turn's end
            await asyncio.wait(set(self._endings))

    @contextlib.asynccontextmanager
    async def slot(self, report: Callable[[str], None]) -> AsyncIterator[None]:
        """Run when one of ``max_concurrent`` slots is free (``report`` says it waits)."""
        if self._slots is None:
            self._slots = asyncio.Semaphore(max(1, self.max_concurrent))
        if self._slots.locked():
            report(
                f"Waiting: {self._running} subagents are running "
                f"(at most {self.max_concurrent} at once: agent.maxConcurrent)"
            )
        async with self._slots:
            self._running += 1
            try:
                yield
            finally:
                self._running -= 1


@dataclass
class Delegation:
    """One validated ``Agent`` call."""

    prompt: str
    description: str
    definition: AgentDefinition | None  # None: a fork of the main agent
    isolated: bool = False
    background: bool = False
    timeout: float | None = DEFAULT_FOREGROUND_TIMEOUT  # None: no limit
    # Append the worktree (or in-place) notes to the result text; background runs carry the
    # worktree summary in their notice instead.
    report_worktree: bool = True
    # When no worktree can be made, run in place (saying so) instead of failing: only for a
    # fork that was not explicitly asked for isolation (FORK-2); everything else fails (WT-11).
    in_place_fallback: bool = False


@dataclass
class SubagentRun:
    """What one delegation produced."""

    instance_id: str
    result: ToolResult
    usage: RunUsage


def new_instance_id() -> str:
    return "sub-" + secrets.token_hex(4)


def owner_label(instance_id: str, record: DelegationRecord, session_id: str) -> str:
    """Who made a worktree, as ``wave/worktrees/list`` shows it after a restart:
    ``subagent sub-1a2b3c4d (coder) of session <id>``."""
    kind = record.subagent_type or "fork"
    return f"subagent {instance_id} ({kind})" + (f" of session {session_id}" if session_id else "")


def subagent_config(
    host: SubagentHost,
    definition: AgentDefinition,
    cwd: Path,
    model: str | None = None,
    servers: AgentServers | None = None,
) -> AgentConfig:
    """The configuration a subagent runs with, derived from its definition and its parent
    (``model``: the one ``subagent_model`` chose, when the caller has it already;
    ``servers``: its MCP side, whose tools join its own between rounds)."""
    parent = host.parent_config()
    all_tools = list(host.tool_factory())
    allowed = resolve_tools(
        [t.name for t in all_tools], definition.tools, definition.disallowed_tools
    )
    memory_cwd, home = host.memory_cwd, host.home
    start = agent_start(definition, memory_cwd, home)
    granted = {*allowed, *start.extra_tools}
    fixed = [tool for tool in all_tools if tool.name in granted]
    tools: Sequence[Tool] = fixed if servers is None else LiveTools(fixed, servers.tools)
    return AgentConfig(
        system_prompt=definition.system_prompt + start.prompt + subagent_environment(cwd),
        model=model or subagent_model(host, definition).model,
        tools=tools,
        permission_mode=subagent_permission_mode(
            parent.permission_mode, trusted_mode(definition, parent.permission_mode, home)
        ),
        params=agent_params(parent.params, definition),
        context_reminder=(lambda: None)
        if definition.omit_agents_md
        else (lambda: memory_reminder_for(memory_cwd, home)),
        read_only_bash=read_only_builtin(definition),
        sandbox_auto_allow=parent.sandbox_auto_allow,
        max_rounds=definition.max_turns or DEFAULT_MAX_ROUNDS,
        free_write_dirs=start.free_write_dirs,
        # Its own context, compacted the same way (the parent's history is never touched).
        context=parent.context.for_subagent() if parent.context else None,
    )


def read_only_builtin(definition: AgentDefinition) -> bool:
    """Explore and Plan: plan mode's Bash rules, and only read-only MCP tools."""
    return definition.source == "builtin" and definition.name in READ_ONLY_BUILTINS


def fork_config(host: SubagentHost) -> AgentConfig:
    """A copy of the main agent: its prompt, model and tools (its MCP tools as they come
    and go), minus ``Agent`` and the task list (FORK-2); no inbox, so task notices never
    reach it."""
    parent = host.parent_config()
    tools: Sequence[Tool]
    if isinstance(parent.tools, LiveTools):
        fixed = [tool for tool in parent.tools.fixed if tool.name not in NEVER_FOR_SUBAGENTS]
        tools = LiveTools(fixed, parent.tools.extra)
    else:
        tools = [tool for tool in parent.tools if tool.name not in NEVER_FOR_SUBAGENTS]
    context = parent.context.for_subagent() if parent.context else None
    return dataclasses.replace(
        parent, tools=tools, inbox=lambda: [], tool_choice=None, reply_prefix=None, context=context
    )


def fork_history(messages: Sequence[Message], tool_call_id: str) -> list[Message]:
    """The parent's conversation up to the message that made the ``fork`` call, as a copy,
    without ``@agent`` mention reminders (they never enter a subagent)."""
    cut = next(
        (
            i
            for i, message in enumerate(messages)
            if any(call.id == tool_call_id for call in message.tool_calls)
        ),
        len(messages),
    )
    return [
        copy.deepcopy(message)
        for message in messages[:cut]
        if message.meta.get("reminder") != "agent"
    ]


async def run_delegation(
    host: SubagentHost,
    delegation: Delegation,
    ctx: ToolContext,
    record: DelegationRecord,
    listeners: Sequence[SubagentListener] = (),
) -> SubagentRun:
    """Run one delegation to its end in the foreground of the caller, keeping ``record``
    (what its block shows) up to date: its workspace, its configuration and conversation,
    the run, its outcome.

    Isolated runs get their own worktree and command sandbox (``worktrees/workspace.py``,
    ``docs/sandbox.md``), ended by the keep/remove rule at every end, cancellation included:
    an ``IsolationError`` raised here means nothing ran, or that git's checkout failed
    after all (it overlaps the first model request). Other runs share the caller's sandbox.
    """
    # A free slot first: nothing (a worktree, a model request) starts while it waits.
    async with host.slot(lambda text: ctx.report(text, record.to_json())):
        request = workspace_request(host, delegation, ctx, record)
        workspace = await open_workspace(request, ctx, record.show)
        setup = subagent_setup(host, delegation, ctx, record, workspace)
        bridge = SubagentBridge(
            record.subagent_id, listeners, lambda text: ctx.report(text, record.to_json())
        )
        # Its requests name the block they come from: the delegation's own, or the run's.
        asker = DelegatedAsker(
            host.asker(),
            lambda: record.task_id or ctx.tool_call_id,
            prompts=setup.config.permission_mode != "dontAsk",
        )
        conversation = Conversation(
            setup.config,
            workspace.client(host.client),  # an isolated run's first request begins its checkout
            workspace.context,
            sink=bridge,
            asker=asker,
            messages=setup.history,
            tools_ready=workspace.tools_ready,
        )
        ctx.report(bridge.tracker.short_result(), record.to_json())
        settled = False
        try:
            error = await run_to_end(conversation, delegation, setup, workspace, record)
            # Ended on an answer without tool calls, and no Stop hook ran after it: the
            # worktree's status taken while that answer came stands (``Workspace.finish``).
            settled = error is None and not (setup.hooks and setup.hooks.hooks.get("Stop"))
        finally:
            bridge.cleanup()
            if setup.servers is not None:
                await setup.servers.close()
            # What it cost so far, also when it was stopped (a stopped run's notice reports it).
            usage = conversation.usage
            record.usage = RunUsage(usage, bridge.tracker.tool_calls, bridge.tracker.duration_ms())
            # A foreground run's result need not wait for an unchanged worktree's removal.
            after = None if delegation.background else host.after_return
            await workspace.finish(after, settled, host.after_next_request)
        answers = conversation.messages[len(setup.history) :]
        result = delegation_outcome(delegation, record, answers, error, bridge.tracker, setup)
        return SubagentRun(record.subagent_id, result, record.usage)


def workspace_request(
    host: SubagentHost, delegation: Delegation, ctx: ToolContext, record: DelegationRecord
) -> WorkspaceRequest:
    """Where the delegation asks to run: in place, or in its own worktree."""
    return WorkspaceRequest(
        session_id=record.subagent_id,
        home=host.home,
        isolated=delegation.isolated,
        owner=owner_label(record.subagent_id, record, ctx.session_id),
        in_place_fallback=delegation.in_place_fallback,
        # A fork keeps its parent's system prompt verbatim (a copy of the conversation):
        # it hears about its sandbox with its first command's result.
        intro_in_prompt=delegation.definition is not None,
    )


@dataclass
class SubagentSetup:
    """What a subagent starts with: its configuration, its history (a fork's copy of its
    parent's), its MCP servers and its own hooks."""

    config: AgentConfig
    history: list[Message]
    servers: AgentServers | None = None
    hooks: AgentHooks | None = None


def subagent_setup(
    host: SubagentHost,
    delegation: Delegation,
    ctx: ToolContext,
    record: DelegationRecord,
    workspace: Workspace,
) -> SubagentSetup:
    """A fork's copy of the main agent, or the definition's subagent working in
    ``workspace``; ``record`` gets the model it asks (and what a tier became)."""
    definition = delegation.definition
    if definition is None:
        history = fork_history(host.parent_messages(), ctx.tool_call_id)
        setup = SubagentSetup(fork_config(host), history)
    else:
        choice = subagent_model(host, definition)  # the settings read once
        servers = agent_servers(definition, host.mcp, read_only_builtin(definition))
        config = subagent_config(host, definition, workspace.context.cwd, choice.model, servers)
        config.system_prompt += workspace.intro
        hooks = agent_hooks(
            definition, host.memory_cwd, ctx.session_id, record.subagent_id, host.home
        )
        config.tool_hooks = hooks
        record.model_note = choice.note
        setup = SubagentSetup(config, [], servers, hooks)
    record.model = setup.config.model
    return setup


async def run_to_end(
    conversation: Conversation,
    delegation: Delegation,
    setup: SubagentSetup,
    workspace: Workspace,
    record: DelegationRecord,
) -> str | None:
    """The subagent's run within its time limit: why it failed, or None. A crash inside
    it is its failure, not the parent's; an ``IsolationError`` (no worktree) goes on up."""
    try:
        async with asyncio.timeout(delegation.timeout):
            if setup.servers is not None:  # the MCP servers it names, before its first request
                await setup.servers.ready(startup_timeout())
            turn = await workspace.run(run_turns(conversation, delegation.prompt, setup.hooks))
    except IsolationError:
        raise
    except TimeoutError:
        return f"timed out after {delegation.timeout:g} s and was stopped"
    except Exception as exc:
        log.exception("subagent %s crashed", record.subagent_id)
        return f"{type(exc).__name__}: {exc}"
    max_turns = delegation.definition.max_turns if delegation.definition else None
    if turn.limit_reached and max_turns:
        record.max_turns_reached = True
        return f"reached its maxTurns limit ({max_turns} model requests)"
    return turn.error if turn.status != "completed" else None


def delegation_outcome(
    delegation: Delegation,
    record: DelegationRecord,
    messages: Sequence[Message],
    error: str | None,
    tracker: ActivityTracker,
    setup: SubagentSetup,
) -> ToolResult:
    """The ``Agent`` call's result from the subagent's ``messages`` (``outcome``), with the
    worktree's summary and the MCP note; ``record`` gets the end."""
    result = outcome(messages, error)
    record.status = "failed" if result.is_error else "completed"
    record.error = error
    done = "Done, maxTurns reached" if record.max_turns_reached else "Done"
    record.summary = tracker.summary("Failed" if result.is_error else done)
    where = record.worktree_summary
    if where and delegation.report_worktree:
        result.content += "\n\n" + where
    if delegation.definition is not None:
        tools_note = mcp_note(delegation.definition, [tool.name for tool in setup.config.tools])
        result.content += f"\n\n{tools_note}" if tools_note else ""
    result.short_result = record.summary
    result.details = record.to_json()
    if error and not result.is_error:
        log.warning("subagent %s failed after answering: %s", record.subagent_id, error)
    return result


# How often a Stop hook may send the subagent back to work (its own guard is
# ``stop_hook_active``; this one ends a hook that always blocks).
MAX_STOP_BLOCKS = 5


async def run_turns(
    conversation: Conversation, prompt: str, hooks: AgentHooks | None
) -> TurnResult:
    """The subagent's turn on ``prompt``, then its ``Stop`` hooks: a hook that blocks the
    end gives its reason as the next message, within the same ``maxTurns`` budget."""
    turn = await conversation.run_turn([Message("user", prompt)])
    rounds = turn.assistant_messages
    while hooks is not None:
        verdict = await hooks.stop(turn.text, conversation.context.cwd)
        left = conversation.config.max_rounds - rounds
        if not verdict.blocked or turn.status != "completed" or left <= 0:
            return turn
        if hooks.stops > MAX_STOP_BLOCKS:
            log.warning("subagent Stop hooks blocked %d times; the subagent ends", hooks.stops)
            return turn
        conversation.config.max_rounds = left
        turn = await conversation.run_turn([Message("user", verdict.reason)])
        rounds += turn.assistant_messages
    return turn


def outcome(messages: Sequence[Message], error: str | None) -> ToolResult:
    """The tool result of a delegation under the outcome rules (FAIL-1, FAIL-2, FAIL-3)."""
    text = last_assistant_text(messages)
    if text is not None:
        return ToolResult(text)
    reason = error or "the subagent returned no text"
    return ToolResult(DELEGATION_FAILED.format(reason=reason), is_error=True)


class DelegatedAsker:
    """A subagent's ``PermissionAsker``: its session's asker, with each request marked with
    the delegation's block (``PermissionRequest.parent_tool_call_id``).

    ``prompts=False`` (``dontAsk``): nobody is asked; a rule the user gave for the session
    ("allow for this session") still allows, anything else is denied.
    """

    def __init__(
        self, asker: PermissionAsker, block_id: Callable[[], str], *, prompts: bool = True
    ) -> None:
        self.asker = asker
        self.block_id = block_id
        self.prompts = prompts

    async def ask(self, request: PermissionRequest) -> PermissionDecision:
        if not self.prompts:
            return unprompted(self.asker, request)
        if not request.parent_tool_call_id:
            request = dataclasses.replace(request, parent_tool_call_id=self.block_id())
        return await self.asker.ask(request)


def unprompted(asker: PermissionAsker, request: PermissionRequest) -> PermissionDecision:
    """The answer without a prompt: allowed by a session rule of ``asker``, else denied."""
    if isinstance(asker, RememberingAsker):
        for known in asker.allowances:
            if known.covers(request):
                return PermissionDecision(
                    True, rule=f"allowed for this session: {known.description}"
                )
    return PermissionDecision(False, DONT_ASK_DENIED.format(summary=request.summary))
