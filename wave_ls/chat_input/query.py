"""The `@` query under the chat input's cursor.

The cursor arrives from editor clients (JavaScript, LSP) as a UTF-16 code-unit offset, like
every LSP position; it equals the Python string index unless the text before it holds
characters outside the Basic Multilingual Plane (emoji), which count as two units.
"""

from __future__ import annotations

from dataclasses import dataclass

# A longer `@` word is no query: no path or name is that long, and matching it would cost
# time in proportion to its length (a 300,000-character word once took 36 s).
MAX_QUERY_CHARS = 256


@dataclass(frozen=True)
class AtWord:
    """The `@` word ending at the cursor: `text[start:end]` in UTF-16 units is `@<query>`."""

    start: int
    end: int
    query: str


def utf16_length(text: str) -> int:
    """The length of `text` in UTF-16 code units."""
    return len(text) if text.isascii() else len(_utf16(text)) // 2


def utf16_to_index(text: str, offset: int) -> int:
    """The Python index of a UTF-16 offset into `text`, clamped to the text.

    An offset that falls inside a surrogate pair rounds down to the character's start.
    """
    if text.isascii():  # O(1) in CPython
        return min(max(offset, 0), len(text))
    return _Units(text).index(offset)[0]


def index_to_utf16(text: str, index: int) -> int:
    """The UTF-16 offset of the Python index `index` into `text`."""
    index = min(max(0, index), len(text))
    return index if text.isascii() else len(_utf16(text[:index])) // 2


def _utf16(text: str) -> bytes:
    return text.encode("utf-16-le", "surrogatepass")


# Every byte but the high byte of a high surrogate (0xD8-0xDB in UTF-16-LE), to delete.
_NOT_HIGH_SURROGATE_BYTES = bytes(b for b in range(256) if not 0xD8 <= b <= 0xDB)


class _Units:
    """A text that is not ASCII, encoded once as UTF-16 for offset conversions."""

    def __init__(self, text: str) -> None:
        self.units = _utf16(text)
        self.length = len(self.units) // 2
        self.bmp_only = self.length == len(text)  # then units and indexes are the same

    def index(self, offset: int) -> tuple[int, bool]:
        """The index at ``offset`` (clamped), and whether the offset split a pair."""
        offset = min(max(offset, 0), self.length)
        if self.bmp_only or not offset:
            return offset, False
        # Each pair before the offset is two units and one character: count the high halves
        # (the odd bytes 0xD8-0xDB) at C speed. A pair the offset splits counts too, which
        # moves the index back to that character's start.
        highs = self.units[1 : 2 * offset : 2].translate(None, _NOT_HIGH_SURROGATE_BYTES)
        split = 0xD8 <= self.units[2 * offset - 1] <= 0xDB
        return offset - len(highs), split


class CursorOutsideText(ValueError):
    """The cursor is not an offset into the text."""


def at_word(text: str, cursor: int | None = None, *, strict: bool = False) -> AtWord | None:
    """The `@` word before the cursor, or None when the cursor is not in one.

    The word runs from the last whitespace before the cursor (or the start of the text) to
    the cursor, and must start with `@` and hold at most `MAX_QUERY_CHARS` characters
    after it. `cursor` is in UTF-16 units and defaults to the end of the text
    (`CursorOutsideText` when it is not in it). The word's start and end are returned in
    UTF-16 units too, ready to be the range a completion item replaces. The cost does not
    grow with the length of ASCII text, and grows at C speed for other text.
    """
    units = None if text.isascii() else _Units(text)
    length = len(text) if units is None else units.length
    if cursor is not None and not 0 <= cursor <= length:
        if strict:
            raise CursorOutsideText(f"cursor {cursor} is outside the text (0-{length})")
        cursor = min(max(cursor, 0), length)
    if cursor is None:
        index, end = len(text), length
    elif units is None:
        index = end = cursor
    else:
        index, split = units.index(cursor)
        end = cursor - 1 if split else cursor
    lowest = max(0, index - MAX_QUERY_CHARS - 1)  # where the longest word would start
    start = index
    while start > lowest and not text[start - 1].isspace():
        start -= 1
    if start == lowest and lowest > 0 and not text[start - 1].isspace():
        return None  # a word longer than any query
    if text[start:index][:1] != "@":
        return None
    return AtWord(
        start=end - utf16_length(text[start:index]),
        end=end,
        query=text[start + 1 : index],
    )


def at_query(text: str, cursor: int | None = None, *, strict: bool = False) -> str | None:
    """The text after `@` in the word before the cursor (maybe ""), or None.

    `cursor` is a UTF-16 offset (see the module docstring), the end of the text by default.
    A leading `agent:` or `file:` is kept: `completion.complete` reads it as "only that
    group".
    """
    word = at_word(text, cursor, strict=strict)
    return None if word is None else word.query
