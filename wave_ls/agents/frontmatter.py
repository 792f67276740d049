"""Read an agent file's frontmatter: its top-level keys, their values, and where each is.

The YAML is read by strictyaml's own loader (its bundled ruamel with strictyaml's scanner
and constructor: flow lists allowed; tags, anchors and duplicate keys refused; every scalar
text), without the schema validation of ``dirty_load``, whose cost is quadratic in the
document (it copies the whole document for every value); what YAML does not say (columns,
whether a scalar was quoted) is read from the source lines, which the entries' line numbers
point into. Reading costs time linear in the text: a simple ``key: value`` line is taken as
it is written, without the YAML scanner (``_read_parts``). Before any parsing the text is
checked for nesting deeper than ``MAX_NESTING``: the YAML scanner and composer cost grows
faster than the depth, and agent files need only ``key: value`` lines and simple lists.
"""

from __future__ import annotations

import bisect
import dataclasses
import functools
import re
import textwrap
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from wave_ls.agents.definition import ProblemCode, Span
from wave_ls.runtime.frontmatter import Frontmatter, FrontmatterError
from wave_ls.runtime.frontmatter import split_frontmatter as split

if TYPE_CHECKING:
    from strictyaml.ruamel.error import YAMLError

# Keys and short values need little; a bigger frontmatter is a mistake (or an attack on the
# YAML parser's time).
MAX_FRONTMATTER_CHARS = 64 * 1024
MAX_NESTING = 32
_BRACKETS = re.compile(r"[\[\]{}]")
# A block line's structure (its indentation and the "- " / "? " indicators that open it)
# wider than ``MAX_NESTING`` levels of two.
_TOO_DEEP_PREFIX = re.compile(rf"^(?:[ \t]|[-?](?=[ \t])){{{2 * MAX_NESTING + 1}}}", re.M)
HOW_TO_START = (
    "an agent file starts with a '---' line, then 'name:' and 'description:' lines, "
    "then '---' and the system prompt"
)


# Node, Entry and _Value are not ``frozen=True`` (treat them as frozen): a frozen dataclass
# costs four times as much to make, and a frontmatter may hold thousands of entries.
@dataclass(slots=True)
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


@dataclass(slots=True)
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
        read = _read_entries(front.yaml_text, first)
    except _NotAMapping:
        raise
    except FrontmatterError as error:
        quoted, quoted_rows = claude_quoted(front.yaml_text)
        if not quoted_rows:
            raise
        try:
            read = _read_entries(quoted, first)
        except _NotAMapping:
            raise
        except FrontmatterError:
            raise error from None
        lenient_rows = quoted_rows
    lines = front.yaml_text.split("\n")
    entries: list[Entry] = []
    for index, (key, row, value) in enumerate(read):  # ``row``: 0-based in the YAML text
        line = row + first
        if isinstance(value, tuple):  # a simple line: what the lines below find, quicker
            text, written, start = value
            if row not in lenient_rows:
                span = Span(line, start, line, start + len(written))
                node = Node("scalar", span, written, text, written[0] not in "'\"")
                entries.append(Entry(key, line, node, Span(line, 0, line, len(key))))
                continue
            value = _Value("scalar", text)
        # The value runs to the line before the next key (strictyaml's end lines of flow
        # values are not reliable), comments and blank lines at its end left out.
        stop = read[index + 1][1] if index + 1 < len(read) else len(lines)
        column = _key_column(lines[row], key)
        key_span = Span(line, column, line, column + len(key))
        start = _value_column(lines[row], column + len(key))
        node = _node(value, lines, row, start, stop, first)
        lenient = row in lenient_rows
        if lenient:  # the whole line is the value: a ' #' in it is no comment
            written = lines[row].rstrip()
            span = Span(line, start, line, len(written))
            node = dataclasses.replace(node, span=span, source=written[start:], plain=False)
        entries.append(Entry(key, line, node, key_span, lenient))
    return entries


@dataclass(slots=True)
class _Value:
    """A value as YAML read it: a scalar's ``text``, a sequence's ``items``, a mapping's
    ``data`` (nested dicts, lists and strings)."""

    kind: Literal["scalar", "sequence", "mapping"]
    text: str = ""
    items: tuple[_Value, ...] = ()
    data: Any = None


# Each top-level key, its 0-based row, its value: read by YAML, or a simple line's
# ``(text, as written, column)`` (``_simple_value``).
_Read = list[tuple[str, int, "_Value | tuple[str, str, int]"]]


def _read_entries(text: str, first: int) -> _Read:
    """The top-level entries of the YAML ``text``, exactly as strictyaml reads the whole
    text, or its ``FrontmatterError``.

    The cost is linear in the text. strictyaml's schema validation, which copied the whole
    document for every value (quadratic: 9,000 keys took 26 s, a list of 5,000 tools 30 s),
    is left out (``_load``); and a simple ``key: value`` line, which YAML reads as its text,
    is taken without the YAML scanner (~0.1 ms a key in pure Python): the text is read in
    parts (``_read_parts``) where that gives the same result, and as a whole where it might
    not (an error, to report it exactly as before; duplicate keys; a part that is not a
    mapping).
    """
    _check(text, first)
    if not text.strip():
        return []
    try:
        return _read_parts(text)
    except _Whole:
        pass
    document = _load(text, first)
    lines = text.split("\n")
    if not isinstance(document, dict):
        where = next((i for i, line in enumerate(lines) if line.strip()), 0)
        raise _NotAMapping(
            where + first,
            "the frontmatter must be 'key: value' lines (found "
            f"{'a list' if isinstance(document, list) else 'plain text'})",
        )
    try:
        return _entries_of(document, lines, 0)
    except _KeyNotText:
        line, message = _unusual(text)
        raise FrontmatterError(None if line is None else line + first, message) from None


class _NotAMapping(FrontmatterError):
    """The YAML is a list or plain text (the quoted second reading does not apply)."""


class _Whole(Exception):
    """The text must be read as a whole to be read exactly as strictyaml reads it."""


class _KeyNotText(Exception):
    """A key written as a list or mapping (strictyaml's schema refuses it)."""


# A top-level key line: where a part of the text may start.
_TOP_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*:(?:[ \t]|$)")
# A top-level ``key: value`` line whose value YAML reads as the text itself: a plain scalar
# of letters, digits, spaces and punctuation that is never YAML syntax (no quotes,
# brackets, '#', '&', '*', '!', '|', '>', '%', '@', '`', tabs or backslashes; ':' only
# inside a word). Such a line is taken without the YAML scanner.
_SIMPLE_LINE = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*): +([\w.()/$~+=^;<][\w .()/$~+=^;<,?:-]*)")
# Or quoted on one line, without the quote character, backslashes or tabs inside.
_QUOTED_LINE = re.compile(r"""([A-Za-z_][A-Za-z0-9_-]*): +("[^"\\\t]*"|'[^'\t]*') *""")
_COMMENT_OR_BLANK = re.compile(r"\s*(?:#.*)?")


def _simple_value(line: str) -> tuple[str, tuple[str, str, int]] | None:
    """``(key, (text, as written, column))`` of a line whose value YAML reads as written
    (plain, or in quotes), else None."""
    match = _SIMPLE_LINE.fullmatch(line)
    if match is not None:
        text = match.group(2).rstrip(" ")
        if ": " in text or text.endswith(":"):
            return None
        return match.group(1), (text, text, match.start(2))
    match = _QUOTED_LINE.fullmatch(line)
    if match is None:
        return None
    written = match.group(2)
    return match.group(1), (written[1:-1], written, match.start(2))


def _read_parts(text: str) -> _Read:
    """``_read_entries`` of ``text`` part by part, cut before top-level key lines: a simple
    ``key: value`` line as it is, each run of other entries read by YAML on its own. A run
    cut where a value goes on (a quoted value or a flow list carried over to a line at
    column 0) does not parse: it is read again with the entries after it, twice as many
    each time. ``_Whole`` when a run does not parse up to the end, is not a mapping, or a
    key is repeated or is not text."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    content = next((line for line in lines if _COMMENT_OR_BLANK.fullmatch(line) is None), "")
    if content[:1] in (" ", "\t"):
        raise _Whole  # the top level is indented: no line at column 0 continues it
    starts: list[int] = []  # the rows where a part may start: 0 and each top-level key
    simple: list[tuple[str, tuple[str, str, int]] | None] = []
    for row, line in enumerate(lines):
        one = _simple_value(line)  # a simple line is a key line too
        if one is not None or not row or _TOP_KEY.match(line):
            starts.append(row)
            simple.append(one)
        elif simple[-1] is not None and not _COMMENT_OR_BLANK.fullmatch(line):
            simple[-1] = None  # the value goes on below (or something else does)
    bounds = [*starts, len(lines)]
    read: _Read = []
    index = 0
    while index < len(starts):
        one = simple[index]
        if one is not None:
            read.append((one[0], starts[index], one[1]))
            index += 1
            continue
        end = index + 1
        while end < len(starts) and simple[end] is None:
            end += 1
        while True:
            part = _read_part(lines, bounds[index], bounds[end])
            if part is not None:
                break
            if end == len(starts):
                raise _Whole
            end = min(len(starts), end + (end - index))
        read += part
        index = end
    keys = [key for key, _row, _value in read]
    if len(set(keys)) != len(keys):
        raise _Whole  # strictyaml's own message for the duplicate
    return read


def _read_part(lines: list[str], begin: int, end: int) -> _Read | None:
    """The entries of ``lines[begin:end]`` read on their own; None when they do not parse;
    ``_Whole`` when they are not a mapping or a key is not text."""
    part = lines[begin:end]
    text = "\n".join(part) + "\n"
    if not text.strip():
        return []
    try:
        document = _parse(text)
    except Exception:  # any error: read the whole, for its exact message
        return None
    if not isinstance(document, dict):
        raise _Whole
    try:
        return _entries_of(document, part, begin)
    except _KeyNotText:
        raise _Whole from None


def _entries_of(document: dict[Any, Any], lines: list[str], offset: int) -> _Read:
    """The ``(key, row, value)`` of a mapping read from ``lines``; rows are 0-based,
    ``offset`` the row of ``lines[0]``. ``_KeyNotText`` for a key that is a list or a
    mapping, at any depth."""
    keys = list(document)
    if not all(isinstance(key, str) for key in keys):
        raise _KeyNotText
    rows = _key_rows(lines, keys, document.lc)  # type: ignore[attr-defined]
    return [
        (key, row + offset, _value_of(document[key])) for key, row in zip(keys, rows, strict=True)
    ]


def _value_of(value: Any) -> _Value:
    if isinstance(value, dict):
        return _Value("mapping", data=_data(value))
    if isinstance(value, list):
        return _Value("sequence", items=tuple(_value_of(item) for item in value))
    return _Value("scalar", str(value))


def _data(value: Any) -> Any:
    """A value as plain dicts, lists and strings."""
    if isinstance(value, dict):
        if not all(isinstance(key, str) for key in value):
            raise _KeyNotText
        return {key: _data(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_data(item) for item in value]
    return str(value)


def _check(text: str, first: int) -> None:
    """``FrontmatterError`` for what is checked before YAML reads ``text``."""
    try:
        _check_depth(text)
        _check_characters(text)
    except _Unreadable as error:
        raise FrontmatterError(error.line + first, error.message) from None
    except _TooDeep as error:
        raise FrontmatterError(
            error.line + first,
            f"the frontmatter nests lists or mappings more than {MAX_NESTING} levels deep; "
            "agent files need only 'key: value' lines and simple lists",
        ) from None


def _load(text: str, first: int) -> Any:
    """The document of ``text`` (``_parse``), or ``FrontmatterError`` saying what is wrong
    and where (``first``: the file line of the text's first line)."""
    from strictyaml.ruamel.error import YAMLError

    try:
        return _parse(text)
    except (AssertionError, AttributeError, TypeError):
        # ruamel fails this way on YAML it does not model (complex keys, ...).
        line, message = _unusual(text)
        raise FrontmatterError(None if line is None else line + first, message) from None
    except YAMLError as error:
        line, message, code = explain_yaml_error(error, text.split("\n"), first)
        raise FrontmatterError(None if line is None else line + first, message, code) from None


def _parse(text: str) -> Any:
    """What strictyaml's ``dirty_load(text, allow_flow_style=True)`` reads, before its
    schema: its own loader (tags, anchors and duplicate keys refused, every scalar text),
    giving ruamel's ``CommentedMap``/``CommentedSeq`` of strings, a string, or None."""
    from strictyaml import ruamel

    return ruamel.load(text, Loader=_loader())


@functools.cache
def _loader() -> type:
    # dirty_load makes this class at every call. strictyaml costs ~20 ms to import: paid by
    # the first file with a line that is not simple, when the parse cache lacks it.
    from strictyaml.parser import StrictYAMLLoader

    return type(
        "DynamicStrictYAMLLoader",
        (StrictYAMLLoader,),
        {"label": "<unicode string>", "allow_flow_style": True},  # dirty_load's defaults
    )


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


def _node(value: _Value, lines: list[str], row: int, column: int, stop: int, first: int) -> Node:
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
    if value.kind == "scalar":
        plain = lines[row][column : column + 1] not in ("'", '"', "|", ">", "[", "{", "!", "&", "*")
        return Node("scalar", span, source, value.text, plain=plain)
    if value.kind == "mapping":
        return Node("mapping", span, source, data=value.data)
    items = tuple(
        Node("scalar", span, source, item.text, plain=True)
        if item.kind == "scalar"
        else Node(item.kind, span, source)
        for item in value.items
    )
    return Node("sequence", span, source, items=items)


def _key_rows(lines: list[str], keys: list[str], marks: Any) -> list[int]:
    """The 0-based line of each top-level key, in order: found in the source (a key line
    starts at column 0), else where YAML read it (``marks``: ruamel's line and column data
    of the mapping), for a key written otherwise (``? key``, escapes in quotes)."""
    rows: list[int] = []
    row = 0
    for key in keys:
        found = next((r for r in range(row, len(lines)) if _is_key_line(lines[r], key)), None)
        row = found if found is not None else marks.key(key)[0]
        rows.append(row)
        row += 1
    return rows


def _is_key_line(line: str, key: str) -> bool:
    """Whether ``line`` starts with ``key`` (bare or quoted) and then ``:``."""
    for quote in ("", '"', "'"):
        written = f"{quote}{key}{quote}"
        if line.startswith(written) and line[len(written) :].lstrip().startswith(":"):
            return True
    return False


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


def _unusual(text: str) -> tuple[int | None, str]:
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
    deep = _TOO_DEEP_PREFIX.search(text)
    if deep is not None:
        raise _TooDeep(text.count("\n", 0, deep.start()))


_KEY_LINE = re.compile(r"^(\s*)([^\s#:][^:]*?):(\s|$)")


def explain_yaml_error(
    error: YAMLError, lines: list[str], first: int = 1
) -> tuple[int | None, str, str | None]:
    """A 0-based line of ``lines``, a message a person can act on, and a ``ProblemCode`` (or
    None), for a YAML parse error; ``first`` is the file line of ``lines[0]``."""
    line, message = _explain(error, lines, first)
    code = ProblemCode.UNQUOTED_COLON if message.endswith(UNQUOTED_COLON_ADVICE) else None
    return line, message, code


UNQUOTED_COLON_ADVICE = "contains ': '; quote it or use '>-'"


def _explain(error: YAMLError, lines: list[str], first: int) -> tuple[int | None, str]:
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
    starts = _line_starts(text)
    begin = max(start, starts[span.line - front.first_line] + span.column)
    end = starts[span.end_line - front.first_line] + span.end_column
    found = begin - 1
    while True:
        found = text.find(word, found + 1, end)
        if found < 0:
            return span, begin
        after = found + len(word)
        # a whole word: no word character or '*' either side (the end of the value counts
        # as a side)
        if (found == 0 or not _word_char(text[found - 1])) and (
            after >= end or not _word_char(text[after])
        ):
            break
    row = bisect.bisect_right(starts, found) - 1
    file_line = row + front.first_line
    column = found - starts[row]
    return Span(file_line, column, file_line, column + len(word)), after


def _word_char(char: str) -> bool:
    return char.isalnum() or char in "_*"


@functools.lru_cache(maxsize=8)
def _line_starts(text: str) -> list[int]:
    """The index of each line's first character in ``text`` (for the values of one
    frontmatter looked at in turn)."""
    return [0, *(match.end() for match in re.finditer("\n", text))]
