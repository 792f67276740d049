"""A list of workspace paths prepared for fast case-insensitive search.

The lowercased paths (and basenames) are joined into one newline-separated string once, so
each search is a few `str.find` / regex scans in C instead of a Python loop over 20,000
paths; a search stops as soon as it has enough results.
"""

from __future__ import annotations

import heapq
import re
from bisect import bisect_right
from collections.abc import Iterable, Iterator, Sequence
from typing import overload

# Ranks of a path match, best first.
BASENAME_PREFIX = 0
SEGMENT_PREFIX = 1
SUBSTRING = 2
SUBSEQUENCE = 3


class FileIndex(Sequence[str]):
    """Relative POSIX paths in the caller's order, searchable with `search`."""

    def __init__(self, paths: Iterable[str]) -> None:
        self._paths = tuple(path for path in paths if "\n" not in path)
        lower = [path.lower() for path in self._paths]
        self._joined, self._starts = _join(lower)
        self._joined_base, self._base_starts = _join(path.rsplit("/", 1)[-1] for path in lower)

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...
    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        return self._paths[index]

    def __len__(self) -> int:
        return len(self._paths)

    def __iter__(self) -> Iterator[str]:
        return iter(self._paths)

    def search(self, query: str, limit: int) -> list[tuple[int, str]]:
        """Up to `limit` (rank, path) matches of `query`, best rank first, then index order.

        Ranks: the basename starts with the query; a path segment starts with it (so
        `src/ut` finds `src/utils.py`); the path contains it; the basename holds its
        characters in order (`ldr` finds `models/loader.py`). Case is ignored; "" finds nothing.
        """
        needle = query.lower()
        if not needle or "\n" in needle or limit <= 0:
            return []
        seen: dict[int, int] = {}
        stages: list[tuple[int, Iterator[int]]] = []
        # Every prefix or substring hit contains the needle: one scan rules them all out.
        if needle in self._joined:
            stages += [
                (
                    BASENAME_PREFIX,
                    self._find_all(self._joined_base, self._base_starts, "\n" + needle),
                ),
                (SEGMENT_PREFIX, self._find_segment_prefix(needle)),
                (SUBSTRING, self._find_all(self._joined, self._starts, needle)),
            ]
        stages.append((SUBSEQUENCE, self._find_subsequence(needle)))
        for rank, hits in stages:
            for index in hits:
                if index not in seen:
                    seen[index] = rank
                    if len(seen) >= limit:
                        break
            if len(seen) >= limit:
                break
        return [(rank, self._paths[index]) for index, rank in seen.items()]

    def _find_all(self, joined: str, starts: list[int], needle: str) -> Iterator[int]:
        """Indexes of the entries of `joined` containing `needle`, once each, in order."""
        position = joined.find(needle)
        while position >= 0:
            # A needle starting with "\n" matches at the separator before its entry.
            index = bisect_right(starts, position + (needle[0] == "\n")) - 1
            yield index
            if index + 1 >= len(starts):
                return
            position = joined.find(needle, starts[index + 1] - 1)

    def _find_segment_prefix(self, needle: str) -> Iterator[int]:
        at_start = self._find_all(self._joined, self._starts, "\n" + needle)
        after_slash = self._find_all(self._joined, self._starts, "/" + needle)
        previous = -1
        for index in heapq.merge(at_start, after_slash):
            if index != previous:
                yield index
            previous = index

    def _find_subsequence(self, needle: str) -> Iterator[int]:
        """Basenames holding the needle's characters in order (basenames only: scanning the
        whole paths costs several ms on 20,000 files)."""
        # Each letter's class excludes that letter, so the scans never backtrack; a search
        # starts at the first letter (found at C speed) and skips to the next line on a hit.
        first, rest = re.escape(needle[0]), needle[1:]
        pattern = re.compile(
            first + "".join(f"[^\\n{re.escape(char)}]*+{re.escape(char)}" for char in rest)
        )
        joined, starts = self._joined_base, self._base_starts
        match = pattern.search(joined)
        while match:
            index = bisect_right(starts, match.start()) - 1
            yield index
            if index + 1 >= len(starts):
                return
            match = pattern.search(joined, starts[index + 1])


def _join(entries: Iterable[str]) -> tuple[str, list[int]]:
    """`"\\n" + "\\n".join(entries) + "\\n"` and the offset where each entry starts."""
    starts = []
    position = 1
    parts = []
    for entry in entries:
        starts.append(position)
        parts.append(entry)
        position += len(entry) + 1
    return "\n" + "\n".join(parts) + "\n", starts
