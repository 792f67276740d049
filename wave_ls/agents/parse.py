"""Parse one agent file into an ``AgentDefinition`` plus the problems found (pure)."""

from __future__ import annotations

import difflib
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any, cast

from wave_ls.agents.definition import (
    EFFORTS,
    HOOK_EVENTS,
    MEMORY_SCOPES,
    PERMISSION_MODES,
    AgentDefinition,
    Problem,
    ProblemCode,
    Source,
    Span,
)
from wave_ls.agents.frontmatter import (
    Entry,
    Frontmatter,
    FrontmatterError,
    Node,
    find_in_node,
    read_mapping,
    split_frontmatter,
)
from wave_ls.agents.toolset import (
    ALL_TOOL_NAMES,
    ALL_TOOLS_WILDCARD,
    ToolName,
    read_tool_name,
)
from wave_ls.runtime.mention_names import mention_form

NAME_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9_-]*$")
NAME_RULE = "a letter, then letters, digits, '_' or '-'"
# What Claude Code accepts as a name, and so do we: one line of printable text.
_LOADABLE_NAME = re.compile(r"[^\x00-\x1f\x7f]{1,200}")
# A name of a tools list: split on commas and spaces, a `Tool(rule)` kept whole.
_NEEDS_QUOTES_REASON = re.compile(r": |[{}\[\]*&#!|>%@`]")
_TOOL_WORD = re.compile(r"[^\s,()]+(?:\([^)]*\)?)?")
# YAML 1.2 core schema spellings of the boolean true (strictyaml's own Bool() is laxer).
YAML_TRUE = frozenset({"true", "True", "TRUE"})
YAML_FALSE = frozenset({"false", "False", "FALSE"})
# "did you mean" is looked for the first unknown names of a file only (difflib costs ~0.1 ms
# a name; a file may list thousands): the others are still reported, without a guess.
MAX_HINTS = 50
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
        "permissionMode",
        "maxTurns",
        "background",
        "color",
        "effort",
        "skills",
        "memory",
        "hooks",
    }
)


class _Skip(Exception):
    """The file cannot give a definition; carries the problem."""

    def __init__(self, problem: Problem) -> None:
        super().__init__(problem.message)
        self.problem = problem


@dataclass(frozen=True)
class ParsedAgent:
    """Everything read from one agent file: the definition (None when the file cannot be
    used), the problems, and the frontmatter with its entries (None / empty when the
    frontmatter could not be read), for editor features that look closer."""

    definition: AgentDefinition | None
    problems: tuple[Problem, ...]
    front: Frontmatter | None = None
    entries: Mapping[str, Entry] = field(default_factory=lambda: MappingProxyType({}))


@dataclass
class _Reader:
    """Types the known keys of one frontmatter, collecting problems on the way.

    An error ends the reading (``_Skip``) unless ``keep_going``: then it is collected and
    the other keys are still checked (the editor shows every problem at once).
    """

    path: str
    front: Frontmatter
    entries: dict[str, Entry]
    keep_going: bool = False
    errors: list[Problem] = field(default_factory=list)
    warnings: list[Problem] = field(default_factory=list)
    mcp_tools: tuple[str, ...] = ()
    hints_left: int = MAX_HINTS

    def fail(
        self, line: int | None, message: str, span: Span | None = None, code: str | None = None
    ) -> None:
        problem = Problem(self.path, line, message, "error", span, code)
        if not self.keep_going:
            raise _Skip(problem)
        self.errors.append(problem)

    def warn(
        self,
        line: int,
        message: str,
        span: Span | None = None,
        code: str | None = None,
        suggestion: str | None = None,
    ) -> None:
        self.warnings.append(Problem(self.path, line, message, "warning", span, code, suggestion))

    def text(self, key: str) -> str | None:
        """A scalar value, stripped; None when absent (or not text: an error)."""
        entry = self.entries.get(key)
        if entry is None:
            return None
        value = entry.node.text
        if value is None:
            span = entry.node.span
            self.fail(entry.line, f"{key}: expected text, found {_shape(entry.node)}", span)
            return None
        return value.strip()

    def required(self, key: str, example: str, code: str) -> str | None:
        entry = self.entries.get(key)
        value = self.text(key)
        if entry is None:
            self.fail(
                self.front.open_line, f"missing required key '{key}'; add '{example}'", code=code
            )
        elif value == "":
            self.fail(entry.line, f"{key}: is empty; add '{example}'", code=code)
        return value or None

    def tool_list(self, key: str) -> tuple[str, ...] | None:
        """``[A, B]``, ``A, B`` or a block list; None when absent or empty text."""
        entry = self.entries.get(key)
        if entry is None:
            return None
        node = entry.node
        if node.kind == "scalar":
            if not (node.text or "").strip():
                return None
            items = [node]
        elif node.kind == "sequence":
            items = []
            for item in node.items:
                if item.kind != "scalar":
                    self.fail(entry.line, f"{key}: list items must be tool names", item.span)
                    return None
                items.append(item)
        else:
            span = node.span
            self.fail(entry.line, f"{key}: expected a list of tool names, found a mapping", span)
            return None
        names: dict[str, None] = {}  # in written order, each once
        read: dict[str, tuple[ToolName, Span]] = {}
        after = 0
        for item in items:
            for match in _TOOL_WORD.finditer(item.text or ""):
                tool = read_tool_name(key, match.group())
                # Reported where the name is written (a block list's item line).
                span, after = find_in_node(self.front, item, tool.written, after)
                # Unknown and MCP names stay as written (resolving ignores them).
                kept = tool.written if tool.kind in ("unknown", "mcp") else tool.granted
                if kept is not None:
                    names.setdefault(kept)
                read.setdefault(tool.written, (tool, span))
        readings = list(read.values())
        if key == "tools":
            self.mcp_tools = tuple(tool.written for tool, _ in readings if tool.kind == "mcp")
        granted = any(tool.granted for tool, _ in readings)
        self._report_tool_names(key, readings, only_mcp=not granted and bool(self.mcp_tools))
        return tuple(names)

    def _report_tool_names(
        self, key: str, read: list[tuple[ToolName, Span]], only_mcp: bool = False
    ) -> None:
        """One problem per kind and line (the editor: per name, each where it is written)."""
        groups: dict[tuple[str, int], list[tuple[ToolName, Span]]] = {}
        for tool, span in read:
            if tool.kind != "tool":
                groups.setdefault((tool.kind, span.line), []).append((tool, span))
        for (kind, line), group in groups.items():
            parts = [group] if not self.keep_going else [[one] for one in group]
            for names in parts:
                self._tool_problem(key, kind, line, names, only_mcp)

    def _tool_problem(
        self, key: str, kind: str, line: int, names: list[tuple[ToolName, Span]], only_mcp: bool
    ) -> None:
        span = names[0][1] if len(names) == 1 else None
        if kind == "unknown":
            hints = [(tool.written, self.hint(tool.written)) for tool, _ in names]
            if len(hints) == 1:
                name, close = hints[0]
                hint = f" (did you mean '{close}'?)" if close else ""
                message = f"{key}: unknown tool '{name}' ignored{hint}"
                self.warn(line, message, span, ProblemCode.UNKNOWN_TOOL, close)
                return
            listed = ", ".join(
                f"'{name}'" + (f" (did you mean '{close}'?)" if close else "")
                for name, close in hints
            )
            self.warn(
                line, f"{key}: unknown tools ignored: {listed}", None, ProblemCode.UNKNOWN_TOOL
            )
        elif kind == "mapped":
            listed = ", ".join(f"{tool.written} -> {tool.granted}" for tool, _ in names)
            self.note(line, f"{key}: Claude Code's tool names read as wave-ls's: {listed}", span)
        elif kind == "dropped":
            listed = ", ".join(f"{tool.written} ({tool.why})" for tool, _ in names)
            self.note(line, f"{key}: not given to a subagent: {listed}", span)
        elif kind == "rule":
            listed = ", ".join(tool.written for tool, _ in names)
            self.warn(
                line,
                f"{key}: the rules in parentheses are not applied, the whole tool is given: "
                f"{listed}",
                span,
                ProblemCode.TOOL_MAPPED,
            )
        else:
            listed = ", ".join(tool.written for tool, _ in names)
            alone = "; it lists only MCP tools: without them it has no tools" if only_mcp else ""
            message = (
                f"{key}: MCP tools, given when a configured MCP server offers them "
                f"(docs/mcp.md): {listed}{alone}"
            )
            self.warnings.append(
                Problem(self.path, line, message, "info", span, ProblemCode.MCP_TOOL)
            )

    def hint(self, name: str) -> str | None:
        """The tool name ``name`` most likely meant, for the first ``MAX_HINTS`` names."""
        if self.hints_left <= 0:
            return None
        self.hints_left -= 1
        return closest_tool_name(name)

    def note(self, line: int, message: str, span: Span | None = None) -> None:
        self.warnings.append(
            Problem(self.path, line, message, "info", span, ProblemCode.TOOL_MAPPED)
        )

    def flag(self, *keys: str) -> bool:
        """True only for a plain YAML boolean true under any of ``keys`` (FM-1)."""
        result = False
        for key in keys:
            entry = self.entries.get(key)
            if entry is None:
                continue
            node = entry.node
            plain = node.kind == "scalar" and node.plain
            if plain and node.text in YAML_TRUE:
                result = True
            elif not (plain and node.text in YAML_FALSE):
                written = node.source or "nothing"
                self.warn(
                    entry.line,
                    f"{key}: {written} is not the boolean true, so it counts as false; "
                    f"write '{key}: true' (unquoted) to turn it on",
                    node.span if written != "nothing" else None,
                    ProblemCode.NOT_BOOLEAN,
                )
        return result

    def choice(self, key: str, values: tuple[str, ...]) -> str | None:
        """One of ``values`` (matched without regard to case); anything else is a warning
        and counts as absent."""
        entry = self.entries.get(key)
        written = self.text(key) if entry is not None else None
        if entry is None or not written:
            return None
        for value in values:
            if value.casefold() == written.casefold():
                return value
        self.warn(
            entry.line,
            f"{key}: '{written}' is not one of {', '.join(values)}; ignored",
            entry.node.span,
            ProblemCode.BAD_VALUE,
        )
        return None

    def count(self, key: str) -> int | None:
        """A whole number above 0; anything else is a warning and counts as absent."""
        entry = self.entries.get(key)
        written = self.text(key) if entry is not None else None
        if entry is None or not written:
            return None
        if written.isdigit() and int(written) > 0:
            return int(written)
        self.warn(
            entry.line,
            f"{key}: '{written}' is not a whole number above 0; ignored",
            entry.node.span,
            ProblemCode.BAD_VALUE,
        )
        return None

    def names(self, key: str) -> tuple[str, ...]:
        """A list of names in any of the three list spellings (no checking of the names)."""
        entry = self.entries.get(key)
        if entry is None:
            return ()
        node = entry.node
        items = [node] if node.kind == "scalar" else list(node.items)
        out: dict[str, None] = {}  # in written order, each once
        for item in items:
            for part in re.split(r"[,\s]+", item.text or ""):
                if part:
                    out.setdefault(part)
        return tuple(out)

    def hooks(self) -> dict[str, Any]:
        """The agent's own hooks, shaped like the settings files' ``hooks``."""
        entry = self.entries.get("hooks")
        if entry is None:
            return {}
        data = entry.node.data
        if entry.node.kind != "mapping" or not isinstance(data, dict):
            if (entry.node.text or "").strip():
                self.warn(entry.line, "hooks: expected a mapping of events; ignored", None)
            return {}
        out: dict[str, Any] = {}
        for event, matchers in data.items():
            if event not in HOOK_EVENTS:
                self.warn(
                    entry.line,
                    f"hooks: '{event}' is not an event a subagent runs "
                    f"({', '.join(HOOK_EVENTS)}); ignored",
                    None,
                    ProblemCode.BAD_VALUE,
                )
                continue
            out[event] = _plain(matchers)
        return out

    def extra(self) -> dict[str, str]:
        """Unknown keys: scalars as their text, lists and mappings as their YAML source."""
        out: dict[str, str] = {}
        for key, entry in self.entries.items():
            if key in KNOWN_KEYS:
                continue
            value = entry.node.text
            out[key] = value if value is not None else entry.node.source
        return out


def parse_agent_file(
    path: Path, text: str, source: str, plugin: str | None = None
) -> tuple[AgentDefinition | None, list[Problem]]:
    """Read one agent file; ``(None, [error, ...warnings])`` when it cannot be used.

    ``source`` is ``builtin``, ``user``, ``project`` or ``plugin``; a plugin's agents are
    named ``<plugin>:<name>``. Problems carry 1-based file lines. Reading stops at the first
    error; ``read_agent_text(..., keep_going=True)`` reports every one.
    """
    parsed = read_agent_text(path, text, source, plugin)
    return parsed.definition, list(parsed.problems)


def read_agent_text(
    path: Path, text: str, source: str, plugin: str | None = None, *, keep_going: bool = False
) -> ParsedAgent:
    """``parse_agent_file`` with the frontmatter kept, and with ``keep_going`` every error
    of the frontmatter's keys (the first one is the one ``parse_agent_file`` reports)."""
    where = str(path)
    try:
        front = split_frontmatter(text)
        entries = {entry.key: entry for entry in read_mapping(front)}
    except FrontmatterError as error:
        return ParsedAgent(None, (Problem(where, error.line, error.message, code=error.code),))
    reader = _Reader(where, front, entries, keep_going)
    if front.closer not in ("---", "..."):
        line = front.first_line + front.yaml_text.count("\n")
        reader.warn(
            line,
            f"the frontmatter is closed by '{front.closer}'; Claude Code reads it so, other "
            "tools need exactly '---'",
            Span(line, 0, line, len(front.closer)),
        )
    frozen = MappingProxyType(entries)
    try:
        defn = _definition(reader, path, source, plugin)
    except _Skip as skip:
        return ParsedAgent(None, (skip.problem, *reader.warnings), front, frozen)
    if reader.errors:
        return ParsedAgent(None, (*reader.errors, *reader.warnings), front, frozen)
    return ParsedAgent(defn, tuple(reader.warnings), front, frozen)


def _definition(
    reader: _Reader, path: Path, source: str, plugin: str | None
) -> AgentDefinition | None:
    entries = reader.entries
    name = reader.required("name", "name: my-agent", ProblemCode.MISSING_NAME)
    if name is not None and not NAME_PATTERN.match(name):
        _odd_name(reader, name, plugin)
    description = reader.required(
        "description", "description: when to use this agent", ProblemCode.MISSING_DESCRIPTION
    )
    if description is not None:
        description = _claude_description(reader, description)
    _lenient_values(reader)
    tools = reader.tool_list("tools")
    disallowed = reader.tool_list("disallowedTools")
    model = reader.text("model") or "inherit"
    isolation = _isolation(entries)
    omit = reader.flag("omitAgentsMd", "omitClaudeMd")
    permission_mode = reader.choice("permissionMode", PERMISSION_MODES)
    max_turns = reader.count("maxTurns")
    background = reader.flag("background")
    color = reader.text("color") or None
    effort = reader.choice("effort", EFFORTS)
    skills = reader.names("skills")
    memory = reader.choice("memory", MEMORY_SCOPES)
    hooks = reader.hooks()
    if reader.errors or name is None or description is None:
        return None
    return AgentDefinition(
        name=f"{plugin}:{name}" if plugin else name,
        description=description,
        system_prompt=reader.front.body,
        tools=_none_if_wildcard(tools),
        disallowed_tools=disallowed,
        model=model,
        isolation=isolation,
        omit_agents_md=omit,
        source=cast(Source, source),
        path=path,
        extra=MappingProxyType(reader.extra()),
        permission_mode=permission_mode,
        max_turns=max_turns,
        background=background,
        color=color,
        effort=effort,
        skills=skills,
        memory=memory,
        hooks=hooks,
        mcp_tools=reader.mcp_tools,
    )


def _odd_name(reader: _Reader, name: str, plugin: str | None) -> None:
    """A name outside ``NAME_RULE``: loaded when Claude Code would load it (a warning: a
    mention cannot hold it), else an error."""
    entry = reader.entries["name"]
    if plugin and ":" in name:
        reader.fail(
            entry.line,
            f"name: '{name}' is not a valid name; use {NAME_RULE} (the plugin prefix is "
            "added for you)",
            entry.node.span,
        )
    elif not _LOADABLE_NAME.fullmatch(name):
        reader.fail(
            entry.line,
            f"name: '{name[:60]}' is not a valid name; use {NAME_RULE}",
            entry.node.span,
        )
    else:
        reader.warn(
            entry.line,
            f"name: '{name}' holds characters an @agent: mention cannot ({NAME_RULE}); the "
            f"agent loads and takes subagent_type '{name}'; mention it as "
            f"@agent:{mention_form(name)} (the chat input's completion inserts that)",
            entry.node.span,
        )


def _claude_description(reader: _Reader, description: str) -> str:
    """A literal ``\\n`` in a description not written in double quotes is a line break,
    as Claude Code reads it (in double quotes YAML already made it one)."""
    entry = reader.entries["description"]
    if "\\n" not in description or entry.node.source.startswith('"'):
        return description
    if entry.lenient:  # its one warning says both
        return description.replace("\\n", "\n")
    one_line = entry.node.span.line == entry.node.span.end_line
    reader.warn(
        entry.line,
        "description: each '\\n' is read as a line break, as Claude Code reads it; write the "
        'value in double quotes ("...\\n...") to say so',
        entry.node.span if one_line else None,
        ProblemCode.LENIENT_VALUE if one_line else None,
    )
    return description.replace("\\n", "\n")


def _lenient_values(reader: _Reader) -> None:
    """A warning for each value read whole because YAML could not read it as written."""
    for key, entry in reader.entries.items():
        if not entry.lenient:
            continue
        value = entry.node.source
        found = _NEEDS_QUOTES_REASON.search(value)
        why = (
            "holds ': '" if found is None or found.group() == ": " else (f"holds '{found.group()}'")
        )
        breaks = "; each '\\n' is a line break" if key == "description" and "\\n" in value else ""
        reader.warn(
            entry.line,
            f"{key}: the value is not quoted and {why}, which YAML does not allow there; it "
            f"is read as the whole line{breaks}, as Claude Code reads it; quote it to say so",
            entry.node.span,
            ProblemCode.LENIENT_VALUE,
        )


def _isolation(entries: dict[str, Entry]) -> str | None:
    # Kept as written; the runtime gives meaning to "worktree" only, others are ignored
    # without error (as in Claude Code), so no problem is reported here.
    entry = entries.get("isolation")
    value = entry.node.text if entry else None
    return (value or "").strip() or None


def _none_if_wildcard(names: tuple[str, ...] | None) -> tuple[str, ...] | None:
    return None if names is not None and ALL_TOOLS_WILDCARD in names else names


def _plain(value: Any) -> Any:
    """strictyaml's data as plain JSON values (its mappings are ordered dicts)."""
    if isinstance(value, dict):
        return {str(key): _plain(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_plain(item) for item in value]
    return value


def _shape(node: Node) -> str:
    return "a mapping" if node.kind == "mapping" else "a list"


def closest_tool_name(name: str) -> str | None:
    """The real tool name someone who wrote ``name`` most likely meant, or None."""
    return closest_name(name, ALL_TOOL_NAMES)


@functools.lru_cache(maxsize=4096)
def closest_name(word: str, choices: tuple[str, ...]) -> str | None:
    """The one of ``choices`` someone who wrote ``word`` most likely meant: the same name in
    another case, else the closest by difflib (ratio 0.75 at least), else None."""
    for choice in choices:
        if choice.casefold() == word.casefold():
            return choice
    close = difflib.get_close_matches(word, choices, n=1, cutoff=0.75)
    return close[0] if close else None
