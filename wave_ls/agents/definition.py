"""The values of the subagent layer: a definition, a problem, a catalog of both."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from wave_ls.agents.toolset import tool_summary

Source = Literal["builtin", "user", "project", "plugin"]
Severity = Literal["error", "warning", "info"]

# Claude Code's values of the frontmatter keys wave-ls honours (docs/agents.md).
PERMISSION_MODES: tuple[str, ...] = (
    "default",
    "acceptEdits",
    "plan",
    "bypassPermissions",
    "dontAsk",
)
EFFORTS: tuple[str, ...] = ("low", "medium", "high")
MEMORY_SCOPES: tuple[str, ...] = ("user", "project", "local")
HOOK_EVENTS: tuple[str, ...] = ("PreToolUse", "PostToolUse", "Stop")


class ProblemCode:
    """The kinds of problem an editor can offer a fix for (``Problem.code``)."""

    UNKNOWN_TOOL = "unknown-tool"
    UNQUOTED_COLON = "unquoted-colon"
    MISSING_NAME = "missing-name"
    MISSING_DESCRIPTION = "missing-description"
    NOT_BOOLEAN = "not-boolean"
    # A one-line value read the way Claude Code reads it (the whole line, quoted for you).
    LENIENT_VALUE = "lenient-value"
    BAD_VALUE = "bad-value"
    # A Claude Code tool name given as its wave-ls equivalent (or dropped), a note.
    TOOL_MAPPED = "tool-mapped"
    MCP_TOOL = "mcp-tool"


# Display and precedence order: a later source overrides an earlier one by name.
SOURCE_ORDER: tuple[Source, ...] = ("builtin", "user", "project", "plugin")


@dataclass(frozen=True)
class AgentDefinition:
    """One subagent, as parsed from its Markdown file.

    ``tools``/``disallowed_tools`` are ``None`` when the key is absent (``tools: "*"`` is
    also ``None``: every tool); ``model`` is ``"inherit"``, a tier (``haiku``, ``sonnet``,
    ``opus``) or a model id; ``isolation`` is kept as written (only ``"worktree"`` means
    anything); ``extra`` holds unknown keys.

    Claude Code's keys (docs/agents.md): ``permission_mode`` one of ``PERMISSION_MODES``;
    ``max_turns`` the most model requests of one run; ``background`` always run in the
    background; ``color`` the chip's colour as written; ``effort`` one of ``EFFORTS``;
    ``skills`` skill names loaded at the start; ``memory`` one of ``MEMORY_SCOPES``;
    ``hooks`` the agent's own hooks, ``{event: [{matcher?, hooks: [{type, command,
    timeout?}]}]}`` as in the settings files (events of ``HOOK_EVENTS``); ``mcp_tools`` the
    ``mcp__...`` names of ``tools`` (kept for the MCP servers, not yet usable).
    """

    name: str
    description: str
    system_prompt: str
    tools: tuple[str, ...] | None = None
    disallowed_tools: tuple[str, ...] | None = None
    model: str = "inherit"
    isolation: str | None = None
    omit_agents_md: bool = False
    source: Source = "project"
    path: Path | None = None
    extra: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    permission_mode: str | None = None
    max_turns: int | None = None
    background: bool = False
    color: str | None = None
    effort: str | None = None
    skills: tuple[str, ...] = ()
    memory: str | None = None
    hooks: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    mcp_tools: tuple[str, ...] = ()

    @property
    def worktree_isolated(self) -> bool:
        """True when the definition asks for its own git worktree (WT-1)."""
        return self.isolation == "worktree"

    def to_json(self) -> dict[str, Any]:
        """The item of PROTOCOL.md's ``wave/agents/list`` result."""
        out: dict[str, Any] = {
            "name": self.name,
            "description": self.description,
            "source": self.source,
            "tools": tool_summary(self),
            "model": self.model,
        }
        if self.isolation is not None:
            out["isolation"] = self.isolation
        if self.color is not None:
            out["color"] = self.color
        if self.background:
            out["background"] = True
        # A built-in's file lives inside the installed package: not something to edit.
        if self.path is not None and self.source != "builtin":
            out["path"] = str(self.path)
        return out


@dataclass(frozen=True, slots=True)
class Span:
    """A stretch of a file: 1-based lines, 0-based character columns (Python string
    indices into the line), the end exclusive."""

    line: int
    column: int
    end_line: int
    end_column: int


@dataclass(frozen=True)
class Problem:
    """Something wrong with an agent file: where (``line`` is 1-based) and what to do.

    ``severity`` is ``"error"`` when the file was skipped, ``"warning"`` when the agent was
    loaded anyway (an ignored tool name, a non-boolean ``omitAgentsMd``, a value read the
    lenient way Claude Code reads it), ``"info"`` for a note (a Claude Code tool name given
    as its equivalent; a name that overrides another scope's). The editor uses
    the rest: ``span`` is the exact text at fault when known, ``code`` names the kind of
    problem (see ``ProblemCode``), ``suggestion`` is the "did you mean" replacement.
    """

    path: str
    line: int | None
    message: str
    severity: Severity = "error"
    span: Span | None = None
    code: str | None = None
    suggestion: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The item of PROTOCOL.md's ``problems`` list: ``{path, line?, message, severity}``."""
        out: dict[str, Any] = {"path": self.path}
        if self.line is not None:
            out["line"] = self.line
        out["message"] = self.message
        out["severity"] = self.severity
        return out

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        return f"{where}: {self.message}"


@dataclass(frozen=True)
class AgentCatalog:
    """Every usable subagent (built-ins first, then user, project, plugin; each by name)
    and every problem found while loading them."""

    agents: tuple[AgentDefinition, ...] = ()
    problems: tuple[Problem, ...] = ()

    def get(self, name: str) -> AgentDefinition | None:
        """The subagent called exactly ``name``, or None."""
        for agent in self.agents:
            if agent.name == name:
                return agent
        return None

    def names(self) -> list[str]:
        """The names, in catalog order."""
        return [agent.name for agent in self.agents]

    def to_json(self) -> dict[str, Any]:
        """PROTOCOL.md's ``wave/agents/list`` result."""
        return {
            "agents": [agent.to_json() for agent in self.agents],
            "problems": [problem.to_json() for problem in self.problems],
        }
