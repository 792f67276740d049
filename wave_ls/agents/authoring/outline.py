"""The shape of an agent file as an editor sees it while it is being typed (pure).

Read line by line, never failing: the frontmatter's delimiters (an unclosed one runs to the
end), its top-level keys with the lines their values take, and the prompt's Markdown
headings outside fenced code. Completion, hover, symbols, folding and fixes work from this,
so they keep working while the YAML is broken. Lines and columns are 0-based; a column is a
Python index into its line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cached_property

from wave_ls.runtime.frontmatter import find_delimiters, split_lines

# A top-level ``key:`` (plain keys only; quoted keys are rare in agent files).
_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_-]*)[ \t]*:(?=[ \t]|$)")
_HEADING = re.compile(r" {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r" {0,3}(`{3,}|~{3,})")


@dataclass(frozen=True)
class TextRange:
    """A stretch of a document: 0-based lines, Python-index columns, the end exclusive."""

    line: int
    column: int
    end_line: int
    end_column: int

    def contains(self, line: int, column: int) -> bool:
        """Whether the position is inside, both ends included (a cursor at a word's end
        is still on it)."""
        return (self.line, self.column) <= (line, column) <= (self.end_line, self.end_column)


@dataclass(frozen=True)
class KeyLine:
    """A top-level ``key: value`` line; the value may go on to ``last_line``."""

    key: str
    line: int
    key_end: int  # the key starts at column 0
    value_start: int  # the column after ``:`` and the spaces that follow it
    last_line: int

    @property
    def key_range(self) -> TextRange:
        return TextRange(self.line, 0, self.line, self.key_end)


@dataclass(frozen=True)
class Heading:
    """A Markdown heading of the prompt; its section runs to ``last_line``."""

    level: int
    title: str
    line: int
    last_line: int


@dataclass(frozen=True)
class Outline:
    """The frontmatter and headings of one document's text."""

    lines: list[str]
    open_line: int | None  # the opening '---'; None when there is no frontmatter
    close_line: int | None  # the closing '---' (or '...'); None when not closed
    keys: tuple[KeyLine, ...]

    @classmethod
    def of(cls, text: str) -> Outline:
        lines = split_lines(text)
        open_line, close_line = find_delimiters(lines)
        keys: tuple[KeyLine, ...] = ()
        if open_line is not None:
            end = close_line if close_line is not None else len(lines)
            keys = _keys(lines, open_line + 1, end)
        return cls(lines, open_line, close_line, keys)

    @cached_property
    def headings(self) -> tuple[Heading, ...]:
        """The prompt's headings (read on first use: completion never needs them)."""
        if self.open_line is None:
            start = 0
        else:
            start = len(self.lines) if self.close_line is None else self.close_line + 1
        return _headings(self.lines, start)

    @property
    def frontmatter_end(self) -> int:
        """The line after the last frontmatter line (the closing delimiter, or the end)."""
        return self.close_line if self.close_line is not None else len(self.lines)

    def in_frontmatter(self, line: int) -> bool:
        """Whether ``line`` is between the delimiters (an unclosed frontmatter runs on)."""
        return self.open_line is not None and self.open_line < line < self.frontmatter_end

    @cached_property
    def by_key(self) -> dict[str, KeyLine]:
        """The first line of each key."""
        out: dict[str, KeyLine] = {}
        for key in self.keys:
            out.setdefault(key.key, key)
        return out

    def key_at(self, line: int) -> KeyLine | None:
        """The key whose line or value lines include ``line``."""
        for key in self.keys:
            if key.line <= line <= key.last_line:
                return key
        return None

    def value_range(self, key: KeyLine) -> TextRange:
        """The value as written, from after ``key: `` to the end of its last line (trailing
        spaces and a trailing comment on a one-line value left out)."""
        last = key.last_line
        end = len(self.lines[last].rstrip())
        if last == key.line:
            end = max(key.value_start, _without_comment(self.lines[last], key.value_start))
        return TextRange(key.line, key.value_start, last, end)

    def value_text(self, key: KeyLine) -> str:
        span = self.value_range(key)
        if span.line == span.end_line:
            return self.lines[span.line][span.column : span.end_column]
        parts = [self.lines[span.line][span.column :]]
        parts += self.lines[span.line + 1 : span.end_line]
        parts.append(self.lines[span.end_line][: span.end_column])
        return "\n".join(parts)


def outline_of(source: str | Outline) -> Outline:
    """An outline, made from text unless it is one already (callers that hold one per
    document version pass it, and save reading the text again)."""
    return source if isinstance(source, Outline) else Outline.of(source)


def _keys(lines: list[str], start: int, end: int) -> tuple[KeyLine, ...]:
    found: list[tuple[str, int, int, int]] = []
    for number in range(start, end):
        match = _KEY.match(lines[number])
        if match:
            text = lines[number]
            value = match.end()
            while value < len(text) and text[value] in " \t":
                value += 1
            found.append((match.group(1), number, match.end(1), value))
    out = []
    for index, (key, line, key_end, value_start) in enumerate(found):
        stop = found[index + 1][1] if index + 1 < len(found) else end
        last = line
        for number in range(line + 1, stop):
            if lines[number].strip() and not lines[number].lstrip().startswith("#"):
                last = number
        out.append(KeyLine(key, line, key_end, value_start, last))
    return tuple(out)


def _headings(lines: list[str], start: int) -> tuple[Heading, ...]:
    raw: list[tuple[int, str, int]] = []
    fence: str | None = None
    for number in range(start, len(lines)):
        text = lines[number]
        opening = _FENCE.match(text)
        if fence is not None:
            if opening and opening.group(1)[0] == fence[0] and len(opening.group(1)) >= len(fence):
                fence = None
            continue
        if opening:
            fence = opening.group(1)
            continue
        match = _HEADING.match(text)
        if match:
            raw.append((len(match.group(1)), (match.group(2) or "").strip(), number))
    out = []
    for index, (level, title, line) in enumerate(raw):
        stop = next((other for lvl, _, other in raw[index + 1 :] if lvl <= level), len(lines))
        last = stop - 1
        while last > line and not lines[last].strip():
            last -= 1
        out.append(Heading(level, title, line, last))
    return tuple(out)


def _without_comment(text: str, start: int) -> int:
    """The end of a one-line value: before a `` #`` comment outside quotes, spaces
    trimmed."""
    quote: str | None = None
    for index in range(start, len(text)):
        char = text[index]
        if quote:
            if char == quote:
                quote = None
        elif char in "'\"" and index == start:
            quote = char
        elif char == "#" and (index == start or text[index - 1] in " \t"):
            return len(text[:index].rstrip())
    return len(text.rstrip())
