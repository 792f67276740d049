"""What a definition's Claude Code keys add to a subagent's run (docs/agents.md).

``permissionMode`` and ``maxTurns`` set fields of its ``AgentConfig``; ``effort`` a request
parameter; ``memory`` and ``skills`` text of its system prompt (and, for ``memory``, its
folder and the file tools to keep it); ``hooks`` the ``AgentHooks`` of its tool calls.
``background`` and ``color`` are read by the ``Agent`` tool.

Workspace trust (``runtime/trust.py``): the ``hooks`` of a project agent file the folder's
git repository tracks, and its ``permissionMode`` when looser than the session's, apply only
once the user trusts the folder; until then the agent runs without those hooks, in the
session's mode (``trusted_hooks``, ``trusted_mode``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wave_ls.agents import AgentDefinition
from wave_ls.runtime import trust
from wave_ls.runtime.memory import agent_memory_dir, agent_memory_prompt, prepare_agent_memory
from wave_ls.runtime.tool_names import WaveTool
from wave_ls.runtime.tools.skill import preloaded_skills
from wave_ls.subagents.hooks import AgentHooks, parse_agent_hooks

# The tools an agent with ``memory`` gets to keep its folder (as Claude Code enables them).
MEMORY_TOOLS = (WaveTool.READ.value, WaveTool.WRITE.value, WaveTool.EDIT.value)
EFFORT_PARAM = "reasoning_effort"


@dataclass(frozen=True)
class AgentStart:
    """What a definition's keys give its run at the start."""

    prompt: str = ""  # appended to the system prompt: memory, then skills
    free_write_dirs: tuple[Path, ...] = ()
    extra_tools: frozenset[str] = frozenset()


def agent_start(definition: AgentDefinition, project: Path, home: Path) -> AgentStart:
    """The memory folder (made if missing) and the preloaded skills of ``definition``;
    ``project`` is the parent session's directory (memory and skills come from it)."""
    prompt, extra = "", frozenset[str]()
    free: tuple[Path, ...] = ()
    if definition.memory:
        folder = agent_memory_dir(definition.memory, definition.name, project, home)
        prepare_agent_memory(folder, definition.memory)
        prompt = agent_memory_prompt(folder, definition.memory)
        free = (folder,)
        extra = frozenset(MEMORY_TOOLS) - set(definition.disallowed_tools or ())
    prompt += preloaded_skills(definition.skills, project, home)
    return AgentStart(prompt, free, extra)


def agent_params(parent: Mapping[str, Any], definition: AgentDefinition) -> dict[str, Any]:
    """The request parameters: the parent's, with the definition's ``effort``."""
    params = dict(parent)
    if definition.effort:
        params[EFFORT_PARAM] = definition.effort
    return params


def agent_hooks(
    definition: AgentDefinition,
    project: Path,
    session_id: str,
    agent_id: str,
    home: Path | None = None,
) -> AgentHooks | None:
    """The run's ``AgentHooks``, or None when the definition has none (or the folder's
    trust holds them back: ``home`` given)."""
    if not definition.hooks:
        return None
    if home is not None and not trusted_hooks(definition, home):
        return None
    hooks = parse_agent_hooks(definition.hooks, definition.path or Path(definition.name))
    if not any(hooks.values()):
        return None
    return AgentHooks(hooks, project, session_id, agent_id, definition.name)


def _held_back(definition: AgentDefinition, home: Path) -> bool:
    """A project agent file git tracks, in a folder the user has not trusted."""
    path = definition.path
    if definition.source != "project" or path is None:
        return False
    return trust.from_repository(path) and not trust.is_trusted(path.parent, home)


def trusted_hooks(definition: AgentDefinition, home: Path) -> bool:
    """Whether the definition's frontmatter ``hooks`` may run."""
    return not definition.hooks or not _held_back(definition, home)


def trusted_mode(definition: AgentDefinition, session_mode: str, home: Path) -> str | None:
    """The definition's ``permissionMode`` as trust lets it apply: None (the session's mode)
    when it is looser than ``session_mode`` and held back."""
    mode = definition.permission_mode
    if mode is None or not trust.looser_mode(mode, session_mode):
        return mode
    return None if _held_back(definition, home) else mode
