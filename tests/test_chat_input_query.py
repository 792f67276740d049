"""The `@` query under the chat input's cursor (`wave/chatInput/completion`)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wave_ls.chat_input.query import (
    AtWord,
    Encoding,
    at_query,
    at_word,
    index_to_offset,
    length,
    offset_to_index,
)


@pytest.mark.parametrize(
    ("text", "cursor", "query"),
    [
        ("@", None, ""),  # MENTION-1: a lone `@` lists everything
        ("@Exp", None, "Exp"),
        ("hello @Exp", None, "Exp"),
        ("hello\n@Exp", None, "Exp"),
        ("hello @Exp world", 10, "Exp"),
        ("hello @Explore world", 9, "Ex"),  # only the part before the cursor
        ("hello @Exp world", 16, None),  # cursor in "world"
        ("hello @Exp ", None, None),  # after the word's whitespace
        ("mail a@b.com", None, None),  # `@` not at a word start
        ("@agent:test-ru", None, "agent:test-ru"),  # prefix kept for `complete`
        ("[@agent:Explore]", None, None),  # a finished tag is not a query
        ("", None, None),
        ("@Exp", 0, None),
        ("@Exp", 99, "Exp"),  # clamped to the end
    ],
)
def test_at_query(text: str, cursor: int | None, query: str | None) -> None:
    assert at_query(text, cursor) == query


def test_cursor_is_counted_in_utf16_units() -> None:
    # An emoji is one Python character but two UTF-16 units, as JavaScript clients count.
    text = "😀 @Exp more"
    assert at_query(text, 7) == "Exp"  # 2 (emoji) + 1 (space) + 4 ("@Exp")
    assert at_query(text, 5) == "E"


def test_at_word_gives_the_range_to_replace_in_utf16_units() -> None:
    text = "😀 @Exp"
    assert at_word(text) == AtWord(start=3, end=7, query="Exp")


def test_utf16_conversion_round_trips_and_rounds_down_inside_a_pair() -> None:
    text = "a😀b"
    assert [offset_to_index(text, units) for units in range(6)] == [0, 1, 1, 2, 3, 3]
    assert [index_to_offset(text, index) for index in range(4)] == [0, 1, 3, 4]


def test_utf8_offsets_count_bytes_and_round_down_inside_a_character() -> None:
    text = "aé😀b"  # 1 + 2 + 4 + 1 bytes
    assert [offset_to_index(text, n, "utf-8") for n in range(9)] == [0, 1, 1, 2, 2, 2, 2, 3, 4]
    assert [index_to_offset(text, i, "utf-8") for i in range(5)] == [0, 1, 3, 7, 8]


def test_the_query_is_found_in_each_encoding() -> None:
    text = "héllo 😀 @Exp"
    cursors = {"utf-8": len(text.encode()), "utf-16": len(text) + 1, "utf-32": len(text)}
    for encoding, cursor in cursors.items():
        assert at_query(text, cursor, encoding) == "Exp"  # type: ignore[arg-type]
        assert at_query(text, cursor - 1, encoding) == "Ex"  # type: ignore[arg-type]


# Issue 12: the conversions run at C speed; they must agree with counting one character at
# a time, lone surrogates (a client's unpaired escape) included.
_ALPHABET = st.sampled_from(["a", " ", "@", "é", "中", "😀", "\ud83d", "\ude00", "\udcff"])


def _units(char: str, encoding: str) -> int:
    code = ord(char)
    if encoding == "utf-32":
        return 1
    if encoding == "utf-16":
        return 2 if code > 0xFFFF else 1
    return 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4


@settings(max_examples=300, deadline=None, database=None)
@given(
    text=st.lists(_ALPHABET, max_size=16).map("".join),
    encoding=st.sampled_from(["utf-8", "utf-16", "utf-32"]),
    data=st.data(),
)
def test_offsets_agree_with_counting_each_character(
    text: str, encoding: Encoding, data: st.DataObject
) -> None:
    total = sum(_units(char, encoding) for char in text)
    assert length(text, encoding) == total
    offset = data.draw(st.integers(-2, total + 2), label="offset")
    expected, units = len(text), 0
    for index, char in enumerate(text):
        units += _units(char, encoding)
        if units > offset:
            expected = index
            break
    assert offset_to_index(text, offset, encoding) == (expected if offset > 0 else 0)
    index = data.draw(st.integers(0, len(text)), label="index")
    assert index_to_offset(text, index, encoding) == sum(_units(c, encoding) for c in text[:index])


@pytest.mark.parametrize("encoding", ["utf-8", "utf-16", "utf-32"])
def test_a_text_of_many_pieces_is_counted_whole(encoding: Encoding) -> None:
    # A long text's length is counted a piece at a time (no 20 MB encoding at once); every
    # piece counts once, wherever its cuts fall (pairs, lone surrogates, accents).
    text = "😀é\ud83d中 a\ude00" * 40_000 + " @fil"
    units = [_units(char, encoding) for char in text]
    assert length(text, encoding) == sum(units)
    assert at_query(text, sum(units), encoding, strict=True) == "fil"
    for index in (1, 99_999, 150_001, len(text) - 3):
        offset = sum(units[:index])
        assert offset_to_index(text, offset, encoding) == index
        assert index_to_offset(text, index, encoding) == offset
