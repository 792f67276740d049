"""Parse one agent file into an ``AgentDefinition`` plus the problems found (pure)."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import cast

from strictyaml.ruamel.nodes import MappingNode, Node, ScalarNode, SequenceNode

from wave_ls.agents.definition import AgentDefinition, Problem, Source
from wave_ls.agents.frontmatter import (
    Entry,
    Frontmatter,
    FrontmatterError,
    is_plain,
    read_mapping,
    scalar_text,
    source_text,
    split_frontmatter,
)
from wave_ls.agents.toolset import ALL_TOOL_NAMES, ALL_TOOLS_WILDCARD, NEVER_FOR_SUBAGENTS

NAME_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
NAME_RULE = "a letter, then letters, digits, '_' or '-'"
# YAML 1.2 core schema spellings of the boolean true (strictyaml's own Bool() is laxer).
YAML_TRUE = frozenset({"true", "True", "TRUE"})
YAML_FALSE = frozenset({"false", "False", "FALSE"})
KNOWN_KEYS = frozenset(
    {
        "name",
        "description",
        "tools",
        "disallowedTools",
        "model",
        "isolation",
        "omitAgentsMd",
        "omitClaudeMd",
    }
)


class _Skip(Exception):
    """The file cannot give a definition; carries the problem."""

    def __init__(self, line: int | None, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


@dataclass
class _Reader:
    """Types the known keys of one frontmatter, collecting warnings on the way."""

    path: str
    front: Frontmatter
    entries: dict[str, Entry]
    warnings: list[Problem] = field(default_factory=list)

    def warn(self, line: int, message: str) -> None:
        self.warnings.append(Problem(self.path, line, message, "warning"))

    def text(self, key: str) -> str | None:
        """A scalar value, stripped; None when absent; _Skip for a list or mapping."""
        entry = self.entries.get(key)
        if entry is None:
            return None
        value = scalar_text(entry.node)
        if value is None:
            raise _Skip(entry.line, f"{key}: expected text, found {_shape(entry.node)}")
        return value.strip()

    def required(self, key: str, example: str) -> str:
        value = self.text(key)
        if value is None:
            raise _Skip(self.front.open_line, f"missing required key '{key}'; add '{example}'")
        if not value:
            raise _Skip(self.entries[key].line, f"{key}: is empty; add '{example}'")
        return value

    def tool_list(self, key: str) -> tuple[str, ...] | None:
        """``[A, B]``, ``A, B`` or a block list; None when absent or empty text."""
        entry = self.entries.get(key)
        if entry is None:
            return None
        node = entry.node
        if isinstance(node, ScalarNode):
            if not node.value.strip():
                return None
            items = [node.value]
        elif isinstance(node, SequenceNode):
            items = []
            for item in node.value:
                if not isinstance(item, ScalarNode):
                    raise _Skip(entry.line, f"{key}: list items must be tool names")
                items.append(item.value)
        else:
            raise _Skip(entry.line, f"{key}: expected a list of tool names, found a mapping")
        names: list[str] = []
        for item in items:
            for part in item.split(","):
                name = part.strip()
                if name and name not in names:
                    names.append(name)
        self._check_tool_names(key, entry.line, names)
        return tuple(names)

    def _check_tool_names(self, key: str, line: int, names: list[str]) -> None:
        for name in names:
            if name == ALL_TOOLS_WILDCARD or name in ALL_TOOL_NAMES:
                if key == "tools" and name in NEVER_FOR_SUBAGENTS:
                    self.warn(line, f"tools: '{name}' is never given to a subagent; ignored")
                continue
            self.warn(line, f"{key}: unknown tool '{name}' ignored{_did_you_mean(name)}")

    def flag(self, *keys: str) -> bool:
        """True only for a plain YAML boolean true under any of ``keys`` (FM-1)."""
        result = False
        for key in keys:
            entry = self.entries.get(key)
            if entry is None:
                continue
            node = entry.node
            value = scalar_text(node)
            if is_plain(node) and value in YAML_TRUE:
                result = True
            elif not (is_plain(node) and value in YAML_FALSE):
                written = source_text(self.front.yaml_text, node) or "nothing"
                self.warn(
                    entry.line,
                    f"{key}: {written} is not the boolean true, so it counts as false; "
                    f"write '{key}: true' (unquoted) to turn it on",
                )
        return result

    def extra(self) -> dict[str, str]:
        """Unknown keys: scalars as their text, lists and mappings as their YAML source."""
        out: dict[str, str] = {}
        for key, entry in self.entries.items():
            if key in KNOWN_KEYS:
                continue
            value = scalar_text(entry.node)
            out[key] = value if value is not None else source_text(self.front.yaml_text, entry.node)
        return out


def parse_agent_file(
    path: Path, text: str, source: str, plugin: str | None = None
) -> tuple[AgentDefinition | None, list[Problem]]:
    """Read one agent file; ``(None, [error])`` when it cannot be used.

    ``source`` is ``builtin``, ``user``, ``project`` or ``plugin``; a plugin's agents are
    named ``<plugin>:<name>``. Problems carry 1-based file lines.
    """
    where = str(path)
    reader: _Reader | None = None
    try:
        front = split_frontmatter(text)
        entries = {entry.key: entry for entry in read_mapping(front)}
        reader = _Reader(where, front, entries)
        name = reader.required("name", "name: my-agent")
        if not NAME_PATTERN.match(name):
            raise _Skip(
                entries["name"].line,
                f"name: '{name}' is not a valid name; use {NAME_RULE}"
                + (" (the plugin prefix is added for you)" if plugin and ":" in name else ""),
            )
        defn = AgentDefinition(
            name=f"{plugin}:{name}" if plugin else name,
            description=reader.required("description", "description: when to use this agent"),
            system_prompt=front.body,
            tools=_none_if_wildcard(reader.tool_list("tools")),
            disallowed_tools=reader.tool_list("disallowedTools"),
            model=reader.text("model") or "inherit",
            isolation=_isolation(entries),
            omit_agents_md=reader.flag("omitAgentsMd", "omitClaudeMd"),
            source=cast(Source, source),
            path=path,
            extra=MappingProxyType(reader.extra()),
        )
    except (FrontmatterError, _Skip) as error:
        warnings = reader.warnings if reader else []
        return None, [Problem(where, error.line, error.message), *warnings]
    return defn, reader.warnings


def _isolation(entries: dict[str, Entry]) -> str | None:
    # Kept as written; the runtime gives meaning to "worktree" only, others are ignored
    # without error (as in Claude Code), so no problem is reported here.
    entry = entries.get("isolation")
    value = scalar_text(entry.node) if entry else None
    return (value or "").strip() or None


def _none_if_wildcard(names: tuple[str, ...] | None) -> tuple[str, ...] | None:
    return None if names is not None and ALL_TOOLS_WILDCARD in names else names


def _shape(node: Node) -> str:
    return "a mapping" if isinstance(node, MappingNode) else "a list"


def _did_you_mean(name: str) -> str:
    for known in ALL_TOOL_NAMES:
        if known.casefold() == name.casefold():
            return f" (did you mean '{known}'?)"
    close = difflib.get_close_matches(name, ALL_TOOL_NAMES, n=1, cutoff=0.75)
    return f" (did you mean '{close[0]}'?)" if close else ""
