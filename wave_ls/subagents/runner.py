"""Running one subagent: a fresh conversation from its definition, and the outcome rules.

- Context: the definition's body as system prompt, memory unless ``omitAgentsMd``, the task
  prompt as the only user message (CTX-1). Nothing of the parent's conversation.
- Tools: the resolved set only; tools outside it are not registered (LOAD-4, FM-2..5), and
  never ``Agent`` nor the task-list tools.
- Model: the definition's, or with ``inherit`` the parent's model and parameters (EXP-1).
- Outcome (FAIL-1..3): the last assistant text, even after a later failure; no assistant
  text at all: ``Agent delegation failed: <reason>``. Notices never cross.
- Isolation (WT-1..11): an isolated run works in its own worktree (cwd, write root), which
  the keep/remove rule ends whatever the outcome; the summary is added to the result.
- Fork (FORK-2): a copy of the main agent continuing from a copy of its conversation.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import dataclasses
import logging
import secrets
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

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
from wave_ls.runtime.sandbox import Confinement, sandbox_confines
from wave_ls.runtime.tools import builtin_tools
from wave_ls.subagents.activity import SubagentBridge, SubagentListener
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
from wave_ls.worktrees.sandboxing import sandbox_prompt

if TYPE_CHECKING:
    from wave_ls.worktrees.isolation import WorktreeLaunch

log = logging.getLogger(__name__)
T = TypeVar("T")

DEFAULT_FOREGROUND_TIMEOUT = 600.0
# Subagents of one session that run at once (``{"agent": {"maxConcurrent": N}}``); the
# others wait for a free slot. A one-slot local server answers them one by one anyway.
DEFAULT_MAX_CONCURRENT = 4
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
    (what its block shows) up to date.

    Isolated runs get their own worktree and their own command sandbox
    (``docs/sandbox.md``), and the keep/remove rule at every end, cancellation included.
    What can refuse the worktree is checked first (an ``IsolationError`` then means nothing
    ran); git's checkout then overlaps the first model request, which does not need it,
    and the first tool call waits for it (a checkout that fails after all stops the run and
    raises the ``IsolationError``). Other runs share the caller's sandbox, if any.
    """
    # A free slot first: nothing (a worktree, a model request) starts while it waits.
    async with host.slot(lambda text: ctx.report(text, record.to_json())):
        return await _run_delegation(host, delegation, ctx, record, listeners)


async def _run_delegation(
    host: SubagentHost,
    delegation: Delegation,
    ctx: ToolContext,
    record: DelegationRecord,
    listeners: Sequence[SubagentListener],
) -> SubagentRun:
    instance_id = record.subagent_id
    cwd, write_root, notes = ctx.cwd, ctx.write_root, list[str]()
    launch: WorktreeLaunch | None = None
    if delegation.isolated:
        # On first use (~15 ms of imports): a session that never isolates never pays it.
        from wave_ls.worktrees.isolation import launch_isolated_worktree

        try:
            launch = await launch_isolated_worktree(
                ctx.cwd,
                home=host.home,
                owner=owner_label(instance_id, record, ctx.session_id),
                session_id=instance_id,
            )
            if delegation.in_place_fallback or not launch.cwd_known:
                await launch.wait()  # the fallback, or the agent's directory, needs it made
        except IsolationError as exc:
            if not delegation.in_place_fallback:
                raise
            launch = None
            note = f"The fork ran in place in {ctx.cwd}: no worktree could be made ({exc})."
            notes.append(note)
            # Background runs report through the details' summary (their notice), not the text.
            record.worktree = {"inPlace": True, "path": str(ctx.cwd), "summary": note}
    planned = launch.planned if launch is not None else None
    if launch is not None and launch.ready.done():
        planned = launch.ready.result()[0]
    if planned is not None:
        cwd, write_root = planned.cwd, planned.path
        record.worktree = planned.to_json()
    context = ToolContext(
        cwd=cwd,
        home=ctx.home,
        session_id=instance_id,
        write_root=write_root,
        services=ctx.services.for_subagent(planned),
        sandbox=ctx.sandbox if launch is None else None,  # an isolated run's: when it is made
    )
    servers: AgentServers | None = None
    if delegation.definition is None:
        config = fork_config(host)
        history = fork_history(host.parent_messages(), ctx.tool_call_id)
    else:
        choice = subagent_model(host, delegation.definition)  # the settings read once
        definition = delegation.definition
        servers = agent_servers(definition, host.mcp, read_only_builtin(definition))
        config = subagent_config(host, definition, cwd, choice.model, servers)
        history = []
        record.model_note = choice.note
    record.model = config.model
    intro = ""
    if planned is not None and sandbox_confines():
        intro = sandbox_prompt(planned.path, planned.branch)
        if delegation.definition is not None:
            # A fork keeps its parent's system prompt verbatim (a copy of the conversation):
            # it hears about its sandbox with its first command's result.
            config.system_prompt += intro

    async def worktree_made() -> ToolContext:
        assert launch is not None
        workspace, sandbox = await launch.wait()
        record.worktree = workspace.to_json()
        record.sandbox = sandbox_details(sandbox)
        if delegation.definition is None and sandbox.confined:
            sandbox.note = intro.strip()
        return dataclasses.replace(
            conversation.context,
            cwd=workspace.cwd,
            write_root=workspace.path,
            services=ctx.services.for_subagent(workspace),
            sandbox=sandbox,
        )

    hooks = None
    if delegation.definition is not None:
        hooks = agent_hooks(
            delegation.definition, host.memory_cwd, ctx.session_id, instance_id, host.home
        )
        config.tool_hooks = hooks
    bridge = SubagentBridge(instance_id, listeners, lambda text: ctx.report(text, record.to_json()))
    # Its requests name the block they come from: the delegation's own, or the run's.
    asker = DelegatedAsker(
        host.asker(),
        lambda: record.task_id or ctx.tool_call_id,
        prompts=config.permission_mode != "dontAsk",
    )
    conversation = Conversation(
        config,
        host.client,
        context,
        sink=bridge,
        asker=asker,
        messages=history,
        tools_ready=worktree_made if launch is not None else None,
    )
    ctx.report(bridge.tracker.short_result(), record.to_json())
    error: str | None = None
    try:
        async with asyncio.timeout(delegation.timeout):
            if servers is not None:  # the MCP servers it names, before its first request
                await servers.ready(startup_timeout())
            turn = await beside_worktree(run_turns(conversation, delegation.prompt, hooks), launch)
        error = turn.error if turn.status != "completed" else None
        if turn.limit_reached and delegation.definition and delegation.definition.max_turns:
            record.max_turns_reached = True
            error = f"reached its maxTurns limit ({delegation.definition.max_turns} model requests)"
    except IsolationError:
        raise
    except TimeoutError:
        error = f"timed out after {delegation.timeout:g} s and was stopped"
    except Exception as exc:  # a crash inside the subagent is its failure, not the parent's
        log.exception("subagent %s crashed", instance_id)
        error = f"{type(exc).__name__}: {exc}"
    finally:
        bridge.cleanup()
        if servers is not None:
            await servers.close()
        # What it cost so far, also when it was stopped (a stopped run's notice reports it).
        record.usage = RunUsage(
            conversation.usage, bridge.tracker.tool_calls, bridge.tracker.duration_ms()
        )
        made = None
        if launch is not None and (launch.abandoned or (not launch.ready.done() and _stopping())):
            launch.abandon()  # a stopped run does not wait for git's checkout to end
        elif launch is not None:
            made = await launch.made()
        if made is not None:
            workspace, sandbox = made
            record.sandbox = sandbox_details(sandbox)
            from wave_ls.worktrees.isolation import finish_isolated_worktree

            ended = await finish_isolated_worktree(workspace)
            summary = ended.summary
            sandbox.close()
            if not sandbox.confined:  # never silently: the summary says so too
                summary += "\n" + sandbox.note
            record.worktree = {**workspace.to_json(), **ended.to_json(), "summary": summary}
            notes.append(summary)
    result = outcome(conversation.messages[len(history) :], error)
    record.status = "failed" if result.is_error else "completed"
    record.error = error
    done = "Done, maxTurns reached" if record.max_turns_reached else "Done"
    record.summary = bridge.tracker.summary("Failed" if result.is_error else done)
    if notes and delegation.report_worktree:
        result.content += "\n\n" + "\n".join(notes)
    if delegation.definition is not None:
        tools_note = mcp_note(delegation.definition, [tool.name for tool in config.tools])
        result.content += f"\n\n{tools_note}" if tools_note else ""
    result.short_result = record.summary
    result.details = record.to_json()
    if error and not result.is_error:
        log.warning("subagent %s failed after answering: %s", instance_id, error)
    return SubagentRun(instance_id, result, record.usage)


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


def _stopping() -> bool:
    """Whether the running task is being cancelled (a stop, not a timeout)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


async def beside_worktree(turn: Awaitable[T], launch: WorktreeLaunch | None) -> T:
    """Run ``turn`` while its worktree is still being made; a worktree that cannot be made
    after all stops the turn, and its ``IsolationError`` is raised instead."""
    if launch is None or launch.ready.done():
        return await turn
    running = asyncio.ensure_future(turn)
    either: set[asyncio.Future[Any]] = {running, launch.ready}
    try:
        await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
    except asyncio.CancelledError:
        running.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await running  # its end (tool calls closed, commands stopped) before the worktree's
        raise
    if launch.ready.done() and not launch.ready.cancelled() and launch.ready.exception():
        running.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await running
        raise launch.ready.exception()  # type: ignore[misc]
    return await running


def sandbox_details(sandbox: Confinement) -> dict[str, Any]:
    """How an isolated run's commands are confined, for its block's details."""
    return {
        "mechanism": sandbox.mechanism,
        "writable": [str(path) for path in sandbox.writable],
        **({"note": sandbox.note} if sandbox.note and not sandbox.confined else {}),
    }


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
