"""Running one subagent: a fresh conversation from its definition, and the outcome rules.

- Context: the definition's body as system prompt, memory unless ``omitAgentsMd``, the task
  prompt as the only user message (CTX-1). Nothing of the parent's conversation.
- Tools: the resolved set only; tools outside it are not registered (LOAD-4, FM-2..5), and
  never ``Agent`` nor the task-list tools.
- Model: the definition's, or with ``inherit`` the parent's model and parameters (EXP-1).
- Outcome (FAIL-1..3): the last assistant text, even after a later failure; no assistant
  text at all: ``Agent delegation failed: <reason>``. Notices never cross.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wave_ls.agents import AgentCatalog, AgentDefinition, resolve_tools
from wave_ls.runtime.core import (
    Message,
    ModelClient,
    PermissionAsker,
    Tool,
    ToolContext,
    ToolResult,
    Usage,
)
from wave_ls.runtime.loop import AgentConfig, Conversation
from wave_ls.runtime.memory import memory_reminder_for
from wave_ls.runtime.prompts import subagent_environment
from wave_ls.runtime.tools import builtin_tools
from wave_ls.subagents.activity import SubagentBridge, SubagentListener

log = logging.getLogger(__name__)

DEFAULT_FOREGROUND_TIMEOUT = 600.0
# Built-ins that follow plan mode's read-only Bash rules even outside plan mode.
READ_ONLY_BUILTINS = frozenset({"Explore", "Plan"})
# Services a subagent must not share with its parent (its own task list, no delegation).
PARENT_ONLY_SERVICES = frozenset({"task_list", "subagents"})
DELEGATION_FAILED = "Agent delegation failed: {reason}"


@dataclass
class SubagentHost:
    """What delegation needs from the session that owns it."""

    client: ModelClient
    catalog: Callable[[], AgentCatalog]
    parent_config: Callable[[], AgentConfig]
    asker: PermissionAsker
    memory_cwd: Path
    home: Path
    listeners: list[SubagentListener] = field(default_factory=list)
    tool_factory: Callable[[], Sequence[Tool]] = builtin_tools
    foreground_timeout: float = DEFAULT_FOREGROUND_TIMEOUT


@dataclass
class SubagentRun:
    """What one delegation produced."""

    instance_id: str
    result: ToolResult
    usage: Usage
    tool_calls: int
    duration_ms: int


def new_instance_id() -> str:
    return "sub-" + secrets.token_hex(4)


def subagent_config(host: SubagentHost, definition: AgentDefinition, cwd: Path) -> AgentConfig:
    """The configuration a subagent runs with, derived from its definition and its parent."""
    parent = host.parent_config()
    all_tools = list(host.tool_factory())
    allowed = resolve_tools(
        [t.name for t in all_tools], definition.tools, definition.disallowed_tools
    )
    tools = [tool for tool in all_tools if tool.name in allowed]
    memory_cwd, home = host.memory_cwd, host.home
    return AgentConfig(
        system_prompt=definition.system_prompt + subagent_environment(cwd),
        model=parent.model if definition.model == "inherit" else definition.model,
        tools=tools,
        permission_mode=parent.permission_mode,
        params=dict(parent.params),
        context_reminder=(lambda: None)
        if definition.omit_agents_md
        else (lambda: memory_reminder_for(memory_cwd, home)),
        read_only_bash=definition.source == "builtin" and definition.name in READ_ONLY_BUILTINS,
    )


async def run_subagent(
    host: SubagentHost,
    definition: AgentDefinition,
    prompt: str,
    ctx: ToolContext,
    details: dict[str, Any],
    *,
    timeout: float | None = None,
) -> SubagentRun:
    """Run ``definition`` on ``prompt`` in the caller's working directory and return its outcome."""
    instance_id = details.setdefault("subagentId", new_instance_id())
    config = subagent_config(host, definition, ctx.cwd)
    services = {k: v for k, v in ctx.services.items() if k not in PARENT_ONLY_SERVICES}
    context = ToolContext(
        cwd=ctx.cwd,
        home=ctx.home,
        session_id=instance_id,
        write_root=ctx.write_root,
        services=services,
    )
    bridge = SubagentBridge(instance_id, host.listeners, lambda text: ctx.report(text, details))
    conversation = Conversation(config, host.client, context, sink=bridge, asker=host.asker)
    ctx.report(bridge.tracker.short_result(), details)
    error: str | None = None
    try:
        async with asyncio.timeout(timeout or host.foreground_timeout):
            turn = await conversation.run_turn([Message("user", prompt)])
        error = turn.error if turn.status != "completed" else None
    except TimeoutError:
        error = f"timed out after {timeout or host.foreground_timeout:g} s and was stopped"
    except Exception as exc:  # a crash inside the subagent is its failure, not the parent's
        log.exception("subagent %s crashed", instance_id)
        error = f"{type(exc).__name__}: {exc}"
    finally:
        bridge.cleanup()
    tracker = bridge.tracker
    result = outcome(conversation.messages, error)
    details.update(
        status="failed" if result.is_error else "completed",
        error=error,
        totalTokens=conversation.usage.total_tokens,
        toolCalls=tracker.tool_calls,
        durationMs=tracker.duration_ms(),
        summary=tracker.summary("Failed" if result.is_error else "Done"),
    )
    result.short_result = details["summary"]
    result.details = details
    if error and not result.is_error:
        log.warning("subagent %s failed after answering: %s", instance_id, error)
    return SubagentRun(
        instance_id, result, conversation.usage, tracker.tool_calls, tracker.duration_ms()
    )


def outcome(messages: Sequence[Message], error: str | None) -> ToolResult:
    """The tool result of a delegation under the outcome rules (FAIL-1, FAIL-2, FAIL-3)."""
    text = last_assistant_text(messages)
    if text is not None:
        return ToolResult(text)
    reason = error or "the subagent returned no text"
    return ToolResult(DELEGATION_FAILED.format(reason=reason), is_error=True)


def last_assistant_text(messages: Sequence[Message]) -> str | None:
    for message in reversed(messages):
        if message.role == "assistant" and message.content.strip():
            return message.content
    return None
