"""`FileIndex`: the compact, folder-grouped path index of `@` completion, against a plain
reference implementation of its ranking."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from wave_ls.chat_input.file_index import FileIndex

SEGMENT = st.text(alphabet="abAB_.-1é", min_size=1, max_size=4)
PATH = st.lists(SEGMENT, min_size=1, max_size=4).map("/".join)
QUERY = st.text(alphabet="abAB_.-1é/", min_size=1, max_size=6)


def is_subsequence(needle: str, text: str) -> bool:
    letters = iter(text)
    return all(char in letters for char in needle)


def reference(
    paths: list[str], query: str, limit: int, span: int | None = None, fuzzy: int | None = None
) -> list[tuple[int, str]]:
    """The ranking as documented, one path at a time."""
    needle = query.lower()
    span = len(paths) if span is None else span
    fuzzy = span if fuzzy is None else min(fuzzy, span)
    ranked = []
    for index, path in enumerate(paths):
        folder, _, name = path.rpartition("/")
        lower, lower_name = path.lower(), name.lower()
        folder_part = f"{folder.lower()}/" if folder else ""
        in_folder = needle in folder_part
        across = "/" in needle and any(
            folder_part.endswith(needle[: i + 1]) and lower_name.startswith(needle[i + 1 :])
            for i, char in enumerate(needle)
            if char == "/" and "/" not in needle[i + 1 :] and needle[i + 1 :]
        )
        if lower_name.startswith(needle):
            rank = 0
        elif lower.startswith(needle) or f"/{needle}" in lower:
            rank = 1
        elif in_folder or across or (index < span and needle in lower_name):
            rank = 2
        elif index < fuzzy and "/" not in needle and is_subsequence(needle, lower_name):
            rank = 3
        else:
            continue
        ranked.append((rank, index))
    ranked.sort()
    return [(rank, paths[index]) for rank, index in ranked[:limit]]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(PATH, max_size=30).map(lambda paths: sorted(set(paths))),
    QUERY,
    st.integers(1, 8),
)
def test_search_ranks_like_the_reference(paths: list[str], query: str, limit: int) -> None:
    assert FileIndex(paths).search(query, limit) == reference(paths, query, limit)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(PATH, max_size=30).map(lambda paths: sorted(set(paths))),
    QUERY,
    st.integers(0, 30),
    st.integers(0, 30),
)
def test_spans_bound_only_the_name_scans(
    paths: list[str], query: str, span: int, fuzzy: int
) -> None:
    index = FileIndex(paths, search_span=span, fuzzy_span=fuzzy)
    assert index.search(query, 50) == reference(paths, query, 50, span, fuzzy)


def test_the_index_is_the_list_it_was_given() -> None:
    paths = ["README.md", "src/a.py", "src/b.py", "docs/x/y.md", "src/c.py", "top.txt"]
    index = FileIndex(paths)
    assert list(index) == paths
    assert len(index) == 6
    assert index[1] == "src/a.py" and index[-1] == "top.txt"
    assert index[2:4] == ["src/b.py", "docs/x/y.md"]
    assert "src/c.py" in index


def test_files_past_the_search_span_are_found_by_name_or_path() -> None:
    paths = [f"src/mod{n // 100}/file{n}.py" for n in range(5_000)]
    index = FileIndex(paths, search_span=1_000)
    last = "src/mod49/file4999.py"
    assert index.search("file4999", 50) == [(0, last)]
    assert index.search("mod49/file4999", 50) == [(1, last)]
    assert index.search("od49/file4999", 50) == [(2, last)]
    assert index.search(last, 50) == [(1, last)]
    # A piece of the name only, or its letters in order: within the span only.
    assert index.search("le4999", 50) == []
    assert index.search("le999", 50) == [(2, "src/mod9/file999.py")]
    assert index.search("f4999", 50) == []
