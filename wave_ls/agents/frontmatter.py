"""Split an agent file into YAML frontmatter and body, and read the frontmatter's mapping.

The YAML is read by strictyaml's YAML engine (its bundled ruamel scanner, parser and
composer, with the base resolver, so every scalar stays a string) at node level: nodes
carry their line and scalar style, which gives exact line numbers, tells a quoted
``"true"`` from a plain ``true``, and costs a quarter of ``strictyaml.dirty_load`` (whose
schema validation deep-copies the document; see docs/agents.md, "Why not dirty_load").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from strictyaml.ruamel.error import MarkedYAMLError, YAMLError
from strictyaml.ruamel.loader import BaseLoader
from strictyaml.ruamel.main import compose
from strictyaml.ruamel.nodes import MappingNode, Node, ScalarNode, SequenceNode

from wave_ls.agents.definition import ProblemCode, Span
from wave_ls.runtime.frontmatter import Frontmatter, FrontmatterError
from wave_ls.runtime.frontmatter import split_frontmatter as split

# Keys and short values need little; a bigger frontmatter is a mistake (or an attack on the
# YAML parser's time).
MAX_FRONTMATTER_CHARS = 64 * 1024
MAX_NESTING = 32
_BRACKETS = re.compile(r"[\[\]{}]")
HOW_TO_START = (
    "an agent file starts with a '---' line, then 'name:' and 'description:' lines, "
    "then '---' and the system prompt"
)


@dataclass(frozen=True)
class Entry:
    """One top-level ``key: value`` of the frontmatter; ``line`` is 1-based in the file."""

    key: str
    line: int
    node: Node
    key_node: Node | None = None


def split_frontmatter(text: str) -> Frontmatter:
    """The agent file's frontmatter (``runtime/frontmatter.py``), or ``FrontmatterError``
    saying how an agent file starts."""
    return split(text, HOW_TO_START)


def read_mapping(front: Frontmatter) -> list[Entry]:
    """The top-level entries of the frontmatter, in file order.

    Raises ``FrontmatterError`` for invalid YAML, a frontmatter that is not a mapping, a
    key that is not text, and duplicate keys.
    """
    first = front.first_line  # YAML marks are 0-based in the YAML text
    if len(front.yaml_text) > MAX_FRONTMATTER_CHARS:
        raise FrontmatterError(
            front.open_line,
            f"the frontmatter is {len(front.yaml_text):,} characters long; it may have at "
            f"most {MAX_FRONTMATTER_CHARS:,} (put long text in the body, after the '---')",
        )
    try:
        _check_flow_depth(front.yaml_text)
        root = compose(front.yaml_text, Loader=_NestingCappedLoader)
    except YAMLError as error:
        line, message, code = explain_yaml_error(error, front.yaml_text.split("\n"))
        raise FrontmatterError(None if line is None else line + first, message, code) from None
    except _TooDeep as error:
        raise FrontmatterError(
            error.line + first,
            f"the frontmatter nests lists or mappings more than {MAX_NESTING} levels deep; "
            "agent files need only 'key: value' lines and simple lists",
        ) from None
    if root is None:
        return []
    if not isinstance(root, MappingNode):
        raise FrontmatterError(
            root.start_mark.line + first,
            "the frontmatter must be 'key: value' lines (found "
            f"{'a list' if isinstance(root, SequenceNode) else 'plain text'})",
        )
    entries: list[Entry] = []
    seen: dict[str, int] = {}
    for key_node, value_node in root.value:
        line = key_node.start_mark.line + first
        if not isinstance(key_node, ScalarNode):
            raise FrontmatterError(line, "a key must be plain text, not a list or mapping")
        key = key_node.value
        if key in seen:
            raise FrontmatterError(
                line, f"duplicate key '{key}' (first on line {seen[key]}); keep only one"
            )
        seen[key] = line
        entries.append(Entry(key, line, value_node, key_node))
    return entries


class _TooDeep(Exception):
    def __init__(self, line: int) -> None:
        self.line = line  # 0-based in the YAML text


def _check_flow_depth(text: str) -> None:
    """``_TooDeep`` for brackets nested deeper than ``MAX_NESTING`` (counted everywhere, in
    quotes too: no real frontmatter comes close). The scanner reads a whole flow collection
    before the composer sees its first node, and its cost grows with the square of the
    depth, so this is checked first."""
    depth = 0
    for bracket in _BRACKETS.finditer(text):
        depth += 1 if bracket.group() in "[{" else -1
        if depth > MAX_NESTING:
            raise _TooDeep(text.count("\n", 0, bracket.start()))


class _NestingCappedLoader(BaseLoader):
    """The base loader, refusing nesting deeper than ``MAX_NESTING``: composing recurses
    once per level and its cost grows faster than the depth (1,000 levels: RecursionError
    after 2 s). The parser runs lazily, so nothing past the limit is even scanned."""

    _depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        self._depth += 1
        try:
            if self._depth > MAX_NESTING:
                raise _TooDeep(self.peek_event().start_mark.line)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


_KEY_LINE = re.compile(r"^(\s*)([^\s#:][^:]*?):(\s|$)")


def explain_yaml_error(error: YAMLError, lines: list[str]) -> tuple[int | None, str, str | None]:
    """A 0-based line, a message a person can act on, and a ``ProblemCode`` (or None), for a
    YAML parse error."""
    line, message = _explain(error, lines)
    code = ProblemCode.UNQUOTED_COLON if message.endswith(UNQUOTED_COLON_ADVICE) else None
    return line, message, code


UNQUOTED_COLON_ADVICE = "contains ': '; quote it or use '>-'"


def _explain(error: YAMLError, lines: list[str]) -> tuple[int | None, str]:
    if not isinstance(error, MarkedYAMLError):
        return None, f"invalid YAML: {error}"
    problem = error.problem or ""
    context = error.context or ""
    mark = error.problem_mark or error.context_mark
    line = mark.line if mark is not None else None
    # For these the problem mark points past the mistake; the context mark is where it is.
    if error.context_mark is not None and (
        "simple key" in context or "quoted scalar" in context or "flow" in context
    ):
        line = error.context_mark.line
    text = lines[line] if line is not None and line < len(lines) else ""
    if "\t" in _indentation(text):
        return line, "a tab character is used for indentation; YAML indentation must use spaces"
    if "'\\t'" in problem:
        return line, "a tab character outside quotes; replace it with spaces or quote the value"
    if problem.startswith("mapping values are not allowed"):
        key = _owner_key(lines, line)
        where = f"{key}: unquoted value" if key else "an unquoted value"
        return line, f"{where} {UNQUOTED_COLON_ADVICE}"
    if "simple key" in context and "could not find expected ':'" in problem:
        return line, (
            "expected a 'key: value' line; indent continuation lines under their key "
            "or write the value as a block scalar ('>-')"
        )
    if "quoted scalar" in context:
        return line, "a quoted value is not closed; add the closing quote"
    if "cannot start any token" in problem:
        char = problem.split("'")[1] if problem.count("'") >= 2 else "this character"
        key = _owner_key(lines, line)
        prefix = f"{key}: " if key else ""
        return line, f"{prefix}a value cannot start with '{char}'; quote it"
    if "another document" in problem:
        return line, "a second YAML document inside the frontmatter; remove the '...' line"
    detail = f"{problem} ({context})" if context else problem
    return line, f"invalid YAML: {detail}"


def _indentation(text: str) -> str:
    return text[: len(text) - len(text.lstrip(" \t"))]


def _owner_key(lines: list[str], line: int | None) -> str | None:
    """The key whose value is on ``line``: the key on that line, or the nearest less
    indented ``key:`` line above it."""
    if line is None or line >= len(lines):
        return None
    own = _KEY_LINE.match(lines[line])
    if own and not own.group(1):
        return own.group(2).strip()
    indent = len(_indentation(lines[line]))
    for above in range(line - 1, -1, -1):
        match = _KEY_LINE.match(lines[above])
        if match and len(match.group(1)) < indent:
            return match.group(2).strip()
    return own.group(2).strip() if own else None


def scalar_text(node: Node) -> str | None:
    """The text of a scalar node, or None for a list or mapping."""
    return node.value if isinstance(node, ScalarNode) else None


def is_plain(node: Node) -> bool:
    """True for an unquoted, non-block scalar (the only kind that can be a YAML boolean)."""
    return isinstance(node, ScalarNode) and node.style is None


def source_text(yaml_text: str, node: Node) -> str:
    """The YAML source of a node, as written (used to keep unknown non-scalar values)."""
    return yaml_text[node.start_mark.index : node.end_mark.index].rstrip()


def node_span(front: Frontmatter, node: Node) -> Span:
    """Where a node's source is in the file (its start and end marks)."""
    return Span(
        node.start_mark.line + front.first_line,
        node.start_mark.column,
        node.end_mark.line + front.first_line,
        node.end_mark.column,
    )


def find_in_node(front: Frontmatter, node: Node, word: str, start: int = 0) -> tuple[Span, int]:
    """Where ``word`` is written inside a node's source, as a whole word, at or after the
    YAML text index ``start``; the node's own span when it cannot be found (an escaped
    spelling). Also returns the index just after it, to find the next word from there."""
    text = front.yaml_text
    begin = max(start, node.start_mark.index)
    pattern = re.compile(r"(?<![\w*])" + re.escape(word) + r"(?![\w*])")
    found = pattern.search(text, begin, node.end_mark.index)
    if found is None:
        return node_span(front, node), begin
    line = text.count("\n", 0, found.start())
    column = found.start() - (text.rfind("\n", 0, found.start()) + 1)
    file_line = line + front.first_line
    return Span(file_line, column, file_line, column + len(word)), found.end()
