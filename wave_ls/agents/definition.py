"""The values of the subagent layer: a definition, a problem, a catalog of both."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, Literal

from wave_ls.agents.toolset import tool_summary

Source = Literal["builtin", "user", "project", "plugin"]
Severity = Literal["error", "warning", "information"]


class ProblemCode:
    """The kinds of problem an editor can offer a fix for (``Problem.code``)."""

    UNKNOWN_TOOL = "unknown-tool"
    UNQUOTED_COLON = "unquoted-colon"
    MISSING_NAME = "missing-name"
    MISSING_DESCRIPTION = "missing-description"
    NOT_BOOLEAN = "not-boolean"


# Display and precedence order: a later source overrides an earlier one by name.
SOURCE_ORDER: tuple[Source, ...] = ("builtin", "user", "project", "plugin")


@dataclass(frozen=True)
class AgentDefinition:
    """One subagent, as parsed from its Markdown file.

    ``tools``/``disallowed_tools`` are ``None`` when the key is absent (``tools: "*"`` is
    also ``None``: every tool); ``model`` is ``"inherit"`` or a model id; ``isolation`` is
    kept as written (only ``"worktree"`` means anything); ``extra`` holds unknown keys.
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
        # A built-in's file lives inside the installed package: not something to edit.
        if self.path is not None and self.source != "builtin":
            out["path"] = str(self.path)
        return out


@dataclass(frozen=True)
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
    loaded anyway (an ignored tool name, a non-boolean ``omitAgentsMd``), ``"information"``
    for what only the editor shows (a name that overrides another scope's). The editor uses
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
        """The item of PROTOCOL.md's ``problems`` list: ``{path, line?, message}``."""
        out: dict[str, Any] = {"path": self.path}
        if self.line is not None:
            out["line"] = self.line
        out["message"] = self.message
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
