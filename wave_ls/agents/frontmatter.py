"""Read an agent file's frontmatter: its top-level keys, their values, and where each is.

The YAML goes through strictyaml's public API (``dirty_load``: flow lists allowed, every
scalar text); what strictyaml does not say (columns, whether a scalar was quoted) is read
from the source lines, which the entries' line numbers point into. Before any parsing the
text is checked for nesting deeper than ``MAX_NESTING``: the YAML scanner and composer cost
grows faster than the depth, and agent files need only ``key: value`` lines and simple lists.
"""

from __future__ import annotations

import dataclasses
import re
import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from wave_ls.agents.definition import ProblemCode, Span
from wave_ls.runtime.frontmatter import Frontmatter, FrontmatterError
from wave_ls.runtime.frontmatter import split_frontmatter as split

if TYPE_CHECKING:
    import strictyaml

# Keys and short values need little; a bigger frontmatter is a mistake (or an attack on the
# YAML parser's time).
MAX_FRONTMATTER_CHARS = 64 * 1024
MAX_NESTING = 32
_BRACKETS = re.compile(r"[\[\]{}]")
# A block line's structure: its indentation and the "- " / "? " indicators that open it.
_BLOCK_PREFIX = re.compile(r"(?:[ \t]|[-?](?=[ \t]))*")
HOW_TO_START = (
    "an agent file starts with a '---' line, then 'name:' and 'description:' lines, "
    "then '---' and the system prompt"
)


@dataclass(frozen=True)
class Node:
    """A value as written: a ``scalar`` (its ``text``; ``plain`` when unquoted and not a
    block scalar, the only kind that can be a YAML boolean), a ``sequence`` of ``items`` or a
    ``mapping``; ``span`` is where it is written in the file, ``source`` its YAML source,
    ``data`` a mapping's value as nested dicts, lists and strings."""

    kind: Literal["scalar", "sequence", "mapping"]
    span: Span
    source: str
    text: str | None = None
    plain: bool = False
    items: tuple[Node, ...] = ()
    data: Any = None


@dataclass(frozen=True)
class Entry:
    """One top-level ``key: value`` of the frontmatter; ``line`` is 1-based in the file;
    ``lenient`` when the value is the whole line because YAML could not read it as written
    (``claude_quoted``)."""

    key: str
    line: int
    node: Node
    key_span: Span
    lenient: bool = False  # its one-line value was read whole, as Claude Code reads it


def split_frontmatter(text: str) -> Frontmatter:
    """The agent file's frontmatter (``runtime/frontmatter.py``), or ``FrontmatterError``
    saying how an agent file starts."""
    return split(text, HOW_TO_START)


def read_mapping(front: Frontmatter) -> list[Entry]:
    """The top-level entries of the frontmatter, in file order.

    YAML that does not parse is read again the way Claude Code reads it: every top-level
    ``key: value`` line whose value would need quotes (``claude_quoted``) is quoted, and
    the text parsed once more; those entries are marked ``lenient``. Raises
    ``FrontmatterError`` (the first reading's error) for invalid YAML, a frontmatter that is
    not a mapping, a key that is not text, and duplicate keys.
    """
    first = front.first_line  # YAML marks are 0-based in the YAML text
    if len(front.yaml_text) > MAX_FRONTMATTER_CHARS:
        raise FrontmatterError(
            front.open_line,
            f"the frontmatter is {len(front.yaml_text):,} characters long; it may have at "
            f"most {MAX_FRONTMATTER_CHARS:,} (put long text in the body, after the '---')",
        )
    lenient_rows: frozenset[int] = frozenset()
    try:
        document = _load(front.yaml_text, first)
    except FrontmatterError as error:
        quoted, quoted_rows = claude_quoted(front.yaml_text)
        if not quoted_rows:
            raise
        try:
            document = _load(quoted, first)
        except FrontmatterError:
            raise error from None
        lenient_rows = quoted_rows
    if not front.yaml_text.strip():
        return []
    lines = front.yaml_text.split("\n")
    if not document.is_mapping():
        where = next((i for i, text in enumerate(lines) if text.strip()), 0)
        raise FrontmatterError(
            where + first,
            "the frontmatter must be 'key: value' lines (found "
            f"{'a list' if document.is_sequence() else 'plain text'})",
        )
    keys = list(document.keys())
    rows = _key_rows(lines, keys)
    entries: list[Entry] = []
    for index, key_yaml in enumerate(keys):
        row = rows[index]  # 0-based in the YAML text
        key = str(key_yaml.data)
        value = document[key_yaml]
        # The value runs to the line before the next key (strictyaml's end lines of flow
        # values are not reliable), comments and blank lines at its end left out.
        stop = rows[index + 1] if index + 1 < len(keys) else len(lines)
        column = _key_column(lines[row], key)
        key_span = Span(row + first, column, row + first, column + len(key))
        start = _value_column(lines[row], column + len(key))
        node = _node(value, lines, row, start, stop, first)
        lenient = row in lenient_rows
        if lenient:  # the whole line is the value: a ' #' in it is no comment
            written = lines[row].rstrip()
            span = Span(row + first, start, row + first, len(written))
            node = dataclasses.replace(node, span=span, source=written[start:], plain=False)
        entries.append(Entry(key, row + first, node, key_span, lenient))
    return entries


def _load(text: str, first: int) -> Any:
    """strictyaml's document of ``text`` (flow style allowed, every scalar text), or
    ``FrontmatterError`` saying what is wrong and where (``first``: the file line of the
    text's first line)."""
    import strictyaml  # ~20 ms to import: paid by the first file the parse cache lacks

    try:
        _check_depth(text)
        _check_characters(text)
        return strictyaml.dirty_load(text, allow_flow_style=True)
    except _Unreadable as error:
        raise FrontmatterError(error.line + first, error.message) from None
    except (AssertionError, AttributeError, TypeError) as error:
        # strictyaml fails this way on YAML it does not model (complex keys, ...).
        line, message = _unusual(text)
        raise FrontmatterError(
            None if line is None else line + first, message or str(error)
        ) from None
    except strictyaml.YAMLError as error:
        line, message, code = explain_yaml_error(error, text.split("\n"), first)
        raise FrontmatterError(None if line is None else line + first, message, code) from None
    except _TooDeep as error:
        raise FrontmatterError(
            error.line + first,
            f"the frontmatter nests lists or mappings more than {MAX_NESTING} levels deep; "
            "agent files need only 'key: value' lines and simple lists",
        ) from None


# Claude Code's second reading: a top-level one-line value that holds ': ' or one of YAML's
# indicator characters is taken whole, as a quoted string. Unlike Claude Code, a value that
# opens a flow list, a block scalar or a quoted string is left as written.
_ONE_LINE_VALUE = re.compile(r"^([A-Za-z_][A-Za-z0-9_-]*):[ \t]+(\S.*?)\s*$")
_NEEDS_QUOTES = re.compile(r"[{}\[\]*&#!|>%@`]|: ")
_STARTS_STRUCTURE = ('"', "'", "[", "{", "|", ">")


def claude_quoted(text: str) -> tuple[str, frozenset[int]]:
    """``text`` with each top-level ``key: value`` line that needs it quoted the way
    Claude Code does, and the 0-based rows it changed; line numbers stay the same."""
    lines = text.split("\n")
    rows: set[int] = set()
    for row, line in enumerate(lines):
        match = _ONE_LINE_VALUE.match(line)
        if match is None:
            continue
        key, value = match.groups()
        if value.startswith(_STARTS_STRUCTURE):
            continue
        if _NEEDS_QUOTES.search(value):
            escaped = value.replace("\\", "\\\\").replace('"', '\\"')
            lines[row] = f'{key}: "{escaped}"'
            rows.add(row)
    return "\n".join(lines), frozenset(rows)


def _node(value: Any, lines: list[str], row: int, column: int, stop: int, first: int) -> Node:
    """The ``Node`` of a strictyaml value written from (``row``, ``column``) of the YAML text
    up to the line ``stop`` (exclusive); a value that starts on a later line (a block list
    or mapping under its key) starts at its first written character."""
    if not _without_comment(lines[row])[column:].strip():
        below = next(
            (
                r
                for r in range(row + 1, min(stop, len(lines)))
                if _without_comment(lines[r]).strip()
            ),
            None,
        )
        if below is not None:
            row, column = below, len(lines[below]) - len(lines[below].lstrip())
    end = _last_line(lines, row, stop)
    last = _without_comment(lines[end])
    written = [_without_comment(lines[row])[column:], *lines[row + 1 : end], last][: end - row + 1]
    source = textwrap.dedent("\n".join([" " * column + written[0], *written[1:]])).strip()
    span = Span(row + first, column, end + first, max(len(last), column if end == row else 0))
    if value.is_scalar():
        plain = lines[row][column : column + 1] not in ("'", '"', "|", ">", "[", "{", "!", "&", "*")
        return Node("scalar", span, source, str(value.data), plain=plain)
    if value.is_mapping():
        return Node("mapping", span, source, data=value.data)
    items = tuple(
        Node("scalar", span, source, str(item.data), plain=True)
        if item.is_scalar()
        else Node("mapping" if item.is_mapping() else "sequence", span, source)
        for item in value
    )
    return Node("sequence", span, source, items=items)


def _key_rows(lines: list[str], keys: list[Any]) -> list[int]:
    """The 0-based line of each top-level key, in order: found in the source (a key line
    starts at column 0), else asked of strictyaml, whose ``start_line`` is correct but
    costly (it re-serialises the document)."""
    rows: list[int] = []
    row = 0
    for key in keys:
        pattern = re.compile(
            rf"""(?:{re.escape(str(key.data))}|(["']){re.escape(str(key.data))}\1)\s*:"""
        )
        found = next((r for r in range(row, len(lines)) if pattern.match(lines[r])), None)
        row = found if found is not None else key.start_line - 1
        rows.append(row)
        row += 1
    return rows


def _key_column(text: str, key: str) -> int:
    found = text.find(key)
    return max(found, 0)


def _value_column(text: str, after_key: int) -> int:
    """Where the value starts on the key's line: after the ``:`` and the spaces."""
    column = text.find(":", after_key)
    column = after_key if column < 0 else column + 1
    while column < len(text) and text[column] in " \t":
        column += 1
    return column


def _last_line(lines: list[str], row: int, stop: int) -> int:
    """The last line from ``row`` before ``stop`` with something other than a comment."""
    for line in range(min(stop, len(lines)) - 1, row, -1):
        if _without_comment(lines[line]).strip():
            return line
    return row


def _without_comment(text: str) -> str:
    """The line without a trailing ``# comment`` (a ``#`` after a space, outside quotes)."""
    quote = ""
    for index, char in enumerate(text):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or text[index - 1] in " \t"):
            return text[:index].rstrip()
    return text.rstrip()


class _Unreadable(Exception):
    def __init__(self, line: int, message: str) -> None:
        self.line = line  # 0-based in the YAML text
        self.message = message


# What YAML does not allow in a document (the C0 and C1 controls but tab, LF, CR and NEL;
# surrogates; U+FFFE/U+FFFF).
_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x84\x86-\x9f\ud800-\udfff\ufffe\uffff]")
_COMPLEX_KEY = re.compile(r"^\s*(?:- +)*(?:\? |[\[{][^\n]*\]?\}?\s*:)")


def _check_characters(text: str) -> None:
    found = _FORBIDDEN.search(text)
    if found is not None:
        row = text.count("\n", 0, found.start())
        raise _Unreadable(
            row,
            f"the frontmatter contains the control character U+{ord(found.group()):04X}"
            "; YAML does not allow it (remove it, or write it escaped in double quotes)",
        )


def _unusual(text: str) -> tuple[int | None, str | None]:
    """Where strictyaml's failure most likely comes from: a key written as a list or mapping."""
    for row, line in enumerate(text.split("\n")):
        if _COMPLEX_KEY.match(line):
            return row, "a key must be plain text, not a list or mapping"
    return None, "the frontmatter could not be read as YAML"


class _TooDeep(Exception):
    def __init__(self, line: int) -> None:
        self.line = line  # 0-based in the YAML text


def _check_depth(text: str) -> None:
    """``_TooDeep`` for lists or mappings nested deeper than ``MAX_NESTING``, counted in the
    text before any parsing (the scanner reads a whole flow collection before the composer
    sees its first node, and both cost more than linear time in the depth): brackets count
    everywhere (in quotes too: no real frontmatter comes close), and a block line counts its
    indentation and its leading ``- `` / ``? `` indicators."""
    depth = 0
    for bracket in _BRACKETS.finditer(text):
        depth += 1 if bracket.group() in "[{" else -1
        if depth > MAX_NESTING:
            raise _TooDeep(text.count("\n", 0, bracket.start()))
    for row, line in enumerate(text.split("\n")):
        indicators = _BLOCK_PREFIX.match(line)
        width = len(indicators.group()) if indicators else 0
        if width > 2 * MAX_NESTING:
            raise _TooDeep(row)


_KEY_LINE = re.compile(r"^(\s*)([^\s#:][^:]*?):(\s|$)")


def explain_yaml_error(
    error: strictyaml.YAMLError, lines: list[str], first: int = 1
) -> tuple[int | None, str, str | None]:
    """A 0-based line of ``lines``, a message a person can act on, and a ``ProblemCode`` (or
    None), for a YAML parse error; ``first`` is the file line of ``lines[0]``."""
    line, message = _explain(error, lines, first)
    code = ProblemCode.UNQUOTED_COLON if message.endswith(UNQUOTED_COLON_ADVICE) else None
    return line, message, code


UNQUOTED_COLON_ADVICE = "contains ': '; quote it or use '>-'"


def _explain(error: strictyaml.YAMLError, lines: list[str], first: int) -> tuple[int | None, str]:
    problem = str(getattr(error, "problem", None) or "")
    context = str(getattr(error, "context", None) or "")
    problem_mark = getattr(error, "problem_mark", None)
    context_mark = getattr(error, "context_mark", None)
    mark = problem_mark or context_mark
    if mark is None:
        return None, f"invalid YAML: {error}"
    line: int | None = mark.line
    # For these the problem mark points past the mistake; the context mark is where it is.
    if context_mark is not None and (
        "simple key" in context or "quoted scalar" in context or "flow" in context
    ):
        line = context_mark.line
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
    if problem.startswith("Duplicate key") and line is not None:
        key = problem.split("'")[1] if problem.count("'") >= 2 else ""
        indent = _indentation(text)
        pattern = re.compile(rf"{re.escape(indent)}{re.escape(key)}\s*:")
        earlier = next((row for row in range(line) if pattern.match(lines[row])), None)
        where = f" (first on line {earlier + first})" if earlier is not None else ""
        return line, f"duplicate key '{key}'{where}; keep only one"
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


def node_span(front: Frontmatter, node: Node) -> Span:
    """Where a value is written in the file."""
    return node.span


def find_in_node(front: Frontmatter, node: Node, word: str, start: int = 0) -> tuple[Span, int]:
    """Where ``word`` is written inside a value, as a whole word, at or after the index
    ``start`` of the YAML text; the value's own span when it cannot be found (an escaped
    spelling). Also returns the index just after it, to find the next word from there."""
    text = front.yaml_text
    span = node.span
    lines = text.split("\n")
    first_row = span.line - front.first_line
    begin_index = sum(len(line) + 1 for line in lines[:first_row]) + span.column
    end_index = sum(len(line) + 1 for line in lines[: span.end_line - front.first_line])
    end_index += span.end_column
    begin = max(start, begin_index)
    pattern = re.compile(r"(?<![\w*])" + re.escape(word) + r"(?![\w*])")
    found = pattern.search(text, begin, end_index)
    if found is None:
        return span, begin
    line = text.count("\n", 0, found.start())
    column = found.start() - (text.rfind("\n", 0, found.start()) + 1)
    file_line = line + front.first_line
    return Span(file_line, column, file_line, column + len(word)), found.end()
