"""The `@` query under the chat input's cursor.

The cursor arrives from editor clients as an offset in the position encoding negotiated at
``initialize``, like every LSP position: UTF-16 code units (VS Code, JavaScript; the
default), UTF-8 bytes (Neovim 0.11+) or UTF-32 code points (a Python string index). The
three differ as soon as the text before the cursor is not ASCII.

Conversions run at C speed (an encode and a byte count), never a Python loop over the
text, and the `@` word is looked for only in the `MAX_QUERY_CHARS` + 1 characters before
the cursor: a completion costs the same for any text.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Encoding = Literal["utf-8", "utf-16", "utf-32"]
ENCODINGS: tuple[Encoding, ...] = ("utf-8", "utf-16", "utf-32")

# A longer `@` word is no query: no path or name is that long, and matching it would cost
# time in proportion to its length (a 300,000-character word once took 36 s).
MAX_QUERY_CHARS = 256

# Bytes to delete so that only the counted ones are left: UTF-8 continuation bytes, and the
# high byte of a UTF-16-LE high surrogate.
_NOT_CONTINUATION = bytes(b for b in range(256) if not 0x80 <= b <= 0xBF)
_NOT_HIGH_SURROGATE = bytes(b for b in range(256) if not 0xD8 <= b <= 0xDB)


@dataclass(frozen=True)
class AtWord:
    """The `@` word ending at the cursor: `text[start:end]` (offsets in the encoding the
    cursor was given in) is `@<query>`."""

    start: int
    end: int
    query: str


class CursorOutsideText(ValueError):
    """The cursor is not an offset into the text."""


class _Offsets:
    """One text's offsets in one encoding (lone surrogates count as the code points they
    are: three UTF-8 bytes, one UTF-16 unit)."""

    def __init__(self, text: str, encoding: Encoding) -> None:
        self.text = text
        self.encoding = encoding
        self.chars = len(text)
        self.same = encoding == "utf-32" or text.isascii()  # isascii is O(1) in CPython
        self.length = len(text) if self.same else _units(text, encoding)
        self.same = self.same or self.length == len(text)  # UTF-16 of BMP-only text

    def index(self, offset: int) -> tuple[int, int]:
        """The index at ``offset`` (clamped to the text) and the offset itself, both moved
        back to the start of a character the offset falls inside."""
        offset = min(max(offset, 0), self.length)
        if self.same or not offset:
            return offset, offset
        # Only the shorter side of the offset is encoded, and its extra units (beyond one
        # per character) counted at C speed: a cursor at the end of a long text costs
        # nothing. A side of n units is at most n characters; one more character gives the
        # unit just before the offset (or the byte at it) to look at.
        text, extra = self.text, self.length - self.chars
        head = offset * 2 <= self.length
        if head:
            data = _encode(text[: offset + 1], self.encoding)
            at = offset  # where the offset falls in ``data``, in units
        else:
            data = _encode(text[max(0, self.chars - (self.length - offset) - 1) :], self.encoding)
            at = _units_in(data, self.encoding) - (self.length - offset)
        if self.encoding == "utf-8":
            while at < len(data) and 0x80 <= data[at] <= 0xBF:  # inside a character
                at -= 1
                offset -= 1
            if head:
                before = len(data[:at].translate(None, _NOT_CONTINUATION))
            else:
                before = extra - len(data[at:].translate(None, _NOT_CONTINUATION))
            return offset - before, offset
        # UTF-16: each pair is two units but one character. A pair the offset splits counts
        # as before it, which moves the index back to that character's start.
        split = 0xD8 <= data[2 * at - 1] <= 0xDB
        if head:
            highs = len(data[1 : 2 * at : 2].translate(None, _NOT_HIGH_SURROGATE))
        else:
            highs = extra - len(data[2 * at + 1 :: 2].translate(None, _NOT_HIGH_SURROGATE))
        return offset - highs, offset - 1 if split else offset


def _encode(text: str, encoding: Encoding) -> bytes:
    # A lone surrogate is one code point: 3 bytes in UTF-8 ("surrogatepass"), one unit in
    # UTF-16, where it must not pair up with a neighbour ("replace" makes it a "?").
    if encoding == "utf-8":
        return text.encode("utf-8", "surrogatepass")
    return text.encode("utf-16-le", "replace")


def _units_in(data: bytes, encoding: Encoding) -> int:
    return len(data) if encoding == "utf-8" else len(data) // 2


# A long text's length is counted a piece at a time: one 20 MB encoding cost 7-19 ms here,
# most of it the kernel handing out fresh pages, while pieces reuse the same memory.
_PIECE_CHARS = 1 << 16


def _units(text: str, encoding: Encoding) -> int:
    # Any cut is safe: each code point is encoded on its own (lone surrogates never pair).
    return sum(
        _units_in(_encode(text[start : start + _PIECE_CHARS], encoding), encoding)
        for start in range(0, len(text), _PIECE_CHARS)
    )


def offset_to_index(text: str, offset: int, encoding: Encoding = "utf-16") -> int:
    """The Python index of an offset into `text`, clamped to the text; an offset inside a
    character (a surrogate pair, a multi-byte sequence) rounds down to its start."""
    return _Offsets(text, encoding).index(offset)[0]


def index_to_offset(text: str, index: int, encoding: Encoding = "utf-16") -> int:
    """The offset, in `encoding` units, of the Python index `index` into `text`."""
    prefix = text[: max(0, index)]
    return length(prefix, encoding)


def length(text: str, encoding: Encoding = "utf-16") -> int:
    """The length of `text` in `encoding` units (the largest valid cursor)."""
    if encoding == "utf-32" or text.isascii():
        return len(text)
    return _units(text, encoding)


def at_word(
    text: str, cursor: int | None = None, encoding: Encoding = "utf-16", *, strict: bool = False
) -> AtWord | None:
    """The `@` word before the cursor, or None when the cursor is not in one.

    The word runs from the last whitespace before the cursor (or the start of the text) to
    the cursor, must start with `@` and hold at most `MAX_QUERY_CHARS` characters after it.
    `cursor` defaults to the end of the text; one outside the text is clamped to it
    (`CursorOutsideText` with `strict`). The word's start and end are returned in the
    cursor's encoding, ready to be the range a completion item replaces.
    """
    offsets = _Offsets(text, encoding)
    if cursor is not None and strict and not 0 <= cursor <= offsets.length:
        raise CursorOutsideText(
            f"cursor {cursor} is outside the text (0-{offsets.length} in {encoding})"
        )
    index, end = (len(text), offsets.length) if cursor is None else offsets.index(cursor)
    lowest = max(0, index - MAX_QUERY_CHARS - 1)  # where the longest word would start
    start = index
    while start > lowest and not text[start - 1].isspace():
        start -= 1
    if start == lowest and lowest > 0 and not text[start - 1].isspace():
        return None  # a word longer than any query
    if text[start:index][:1] != "@":
        return None
    return AtWord(
        start=end - length(text[start:index], encoding),
        end=end,
        query=text[start + 1 : index],
    )


def at_query(
    text: str, cursor: int | None = None, encoding: Encoding = "utf-16", *, strict: bool = False
) -> str | None:
    """The text after `@` in the word before the cursor (maybe ""), or None.

    A leading `agent:` or `file:` is kept: `completion.complete` reads it as "only that
    group".
    """
    word = at_word(text, cursor, encoding, strict=strict)
    return None if word is None else word.query
