"""The `@` query under the chat input's cursor.

The cursor arrives from editor clients as an offset in the position encoding negotiated at
``initialize``, like every LSP position: UTF-16 code units (VS Code, JavaScript; the
default), UTF-8 bytes (Neovim 0.11+) or UTF-32 code points (a Python string index). The
three differ as soon as the text before the cursor is not ASCII.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Encoding = Literal["utf-8", "utf-16", "utf-32"]
ENCODINGS: tuple[Encoding, ...] = ("utf-8", "utf-16", "utf-32")


@dataclass(frozen=True)
class AtWord:
    """The `@` word ending at the cursor: `text[start:end]` (offsets in the encoding the
    cursor was given in) is `@<query>`."""

    start: int
    end: int
    query: str


def _units(char: str, encoding: Encoding) -> int:
    if encoding == "utf-32":
        return 1
    code = ord(char)
    if encoding == "utf-16":
        return 2 if code > 0xFFFF else 1
    return 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4


def offset_to_index(text: str, offset: int, encoding: Encoding = "utf-16") -> int:
    """The Python index of an offset into `text`, clamped to the text; an offset inside a
    character (a surrogate pair, a multi-byte sequence) rounds down to its start."""
    if offset <= 0:
        return 0
    if encoding == "utf-32" or text.isascii():
        return min(offset, len(text))
    units = 0
    for index, char in enumerate(text):
        units += _units(char, encoding)
        if units > offset:
            return index
    return len(text)


def index_to_offset(text: str, index: int, encoding: Encoding = "utf-16") -> int:
    """The offset, in `encoding` units, of the Python index `index` into `text`."""
    prefix = text[: max(0, index)]
    if encoding == "utf-32" or prefix.isascii():
        return len(prefix)
    return sum(_units(char, encoding) for char in prefix)


def length(text: str, encoding: Encoding = "utf-16") -> int:
    """The length of `text` in `encoding` units (the largest valid cursor)."""
    return index_to_offset(text, len(text), encoding)


def at_word(text: str, cursor: int | None = None, encoding: Encoding = "utf-16") -> AtWord | None:
    """The `@` word before the cursor, or None when the cursor is not in one.

    The word runs from the last whitespace before the cursor (or the start of the text) to
    the cursor, and must start with `@`. `cursor` defaults to the end of the text. The word's
    start and end are returned in the cursor's encoding, ready to be the range a completion
    item replaces.
    """
    index = len(text) if cursor is None else offset_to_index(text, cursor, encoding)
    start = index
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    if text[start:index][:1] != "@":
        return None
    return AtWord(
        start=index_to_offset(text, start, encoding),
        end=index_to_offset(text, index, encoding),
        query=text[start + 1 : index],
    )


def at_query(text: str, cursor: int | None = None, encoding: Encoding = "utf-16") -> str | None:
    """The text after `@` in the word before the cursor (maybe ""), or None.

    A leading `agent:` or `file:` is kept: `completion.complete` reads it as "only that
    group".
    """
    word = at_word(text, cursor, encoding)
    return None if word is None else word.query
