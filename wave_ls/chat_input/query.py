"""The `@` query under the chat input's cursor.

The cursor arrives from editor clients (JavaScript, LSP) as a UTF-16 code-unit offset, like
every LSP position; it equals the Python string index unless the text before it holds
characters outside the Basic Multilingual Plane (emoji), which count as two units.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AtWord:
    """The `@` word ending at the cursor: `text[start:end]` in UTF-16 units is `@<query>`."""

    start: int
    end: int
    query: str


def utf16_to_index(text: str, offset: int) -> int:
    """The Python index of a UTF-16 offset into `text`, clamped to the text.

    An offset that falls inside a surrogate pair rounds down to the character's start.
    """
    if offset <= 0:
        return 0
    if text.isascii() or max(text) <= "\uffff":
        return min(offset, len(text))
    units = 0
    for index, char in enumerate(text):
        units += 2 if ord(char) > 0xFFFF else 1
        if units > offset:
            return index
    return len(text)


def index_to_utf16(text: str, index: int) -> int:
    """The UTF-16 offset of the Python index `index` into `text`."""
    prefix = text[: max(0, index)]
    return len(prefix) + sum(1 for char in prefix if ord(char) > 0xFFFF)


def at_word(text: str, cursor: int | None = None) -> AtWord | None:
    """The `@` word before the cursor, or None when the cursor is not in one.

    The word runs from the last whitespace before the cursor (or the start of the text) to
    the cursor, and must start with `@`. `cursor` is in UTF-16 units and defaults to the end
    of the text. The word's start and end are returned in UTF-16 units too, ready to be the
    range a completion item replaces.
    """
    index = len(text) if cursor is None else utf16_to_index(text, cursor)
    start = index
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    if text[start:index][:1] != "@":
        return None
    return AtWord(
        start=index_to_utf16(text, start),
        end=index_to_utf16(text, index),
        query=text[start + 1 : index],
    )


def at_query(text: str, cursor: int | None = None) -> str | None:
    """The text after `@` in the word before the cursor (maybe ""), or None.

    `cursor` is a UTF-16 offset (see the module docstring), the end of the text by default.
    A leading `agent:` or `file:` is kept: `completion.complete` reads it as "only that
    group".
    """
    word = at_word(text, cursor)
    return None if word is None else word.query
