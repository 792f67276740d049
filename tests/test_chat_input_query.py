"""The `@` query under the chat input's cursor (`wave/chatInput/completion`)."""

from __future__ import annotations

import pytest

from wave_ls.chat_input.query import AtWord, at_query, at_word, index_to_offset, offset_to_index


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
