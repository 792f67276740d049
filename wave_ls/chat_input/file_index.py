"""A list of workspace paths prepared for fast case-insensitive search, in little memory.

Paths are kept by folder: each run of consecutive paths in one folder stores the folder
once, and the file names of all runs are joined into one newline-separated string (plus a
lowercased copy when it differs), with their offsets in compact arrays. So 100,000 paths
take about 4 MB instead of 15, and a search scans the names (and the few folders) with
`str.find` / regex scans in C instead of a Python loop; it stops as soon as it has enough.
"""

from __future__ import annotations

import heapq
import re
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterable, Iterator, Sequence
from itertools import accumulate, islice, repeat
from operator import add
from typing import overload

# Ranks of a path match, best first.
BASENAME_PREFIX = 0
SEGMENT_PREFIX = 1
SUBSTRING = 2
SUBSEQUENCE = 3

# A path query with fewer names than this starting like its last segment checks their
# folders; with more, it scans the names of each folder that fits.
_FEW_NAMES = 2_000
# Past the span, a name prefix matching more files than this lists the first by name, and
# a path query whose name part starts that many names looks in this many folders at most.
_PAST_SPAN_MATCHES = 5_000
_PAST_SPAN_RUNS = 2_000


class FileIndex(Sequence[str]):
    """Relative POSIX paths in the caller's order, searchable with `search`.

    `search_span` bounds the stages that scan every name (a name containing the query,
    its letters in order): only the first `search_span` paths get them; the others are
    found when the query names them: their name starts with it, or it is a piece of their
    path holding a `/` (`pkg/mod/fi`, `mod/`). `fuzzy_span` (at most `search_span`) bounds
    the letters-in-order match further. Both default to every path.
    """

    def __init__(
        self, paths: Iterable[str], search_span: int | None = None, fuzzy_span: int | None = None
    ) -> None:
        folders: list[str] = []
        run_starts = array("i")
        names: list[str] = []
        folder = None
        for path in paths:
            if "\n" in path:
                continue
            head, _, name = path.rpartition("/")
            if head != folder:
                folder = head
                folders.append(head)
                run_starts.append(len(names))
            names.append(name)
        run_starts.append(len(names))
        self._count = len(names)
        self._folders = folders
        self._run_starts = run_starts
        self._names, self._name_starts = join_lines(names)
        lowered = self._names.lower()
        if lowered == self._names:  # most trees: one copy serves both
            self._lower_names, self._lower_starts = self._names, self._name_starts
        else:
            self._lower_names, self._lower_starts = join_lines(name.lower() for name in names)
        # Each folder as "<folder>/" (empty for the top level), so a query ending in "/" or
        # running on into the file name can be matched against it.
        self._lower_folders, self._folder_starts = join_lines(
            f"{folder.lower()}/" if folder else "" for folder in folders
        )
        span = self._count if search_span is None else min(search_span, self._count)
        fuzzy = span if fuzzy_span is None else min(fuzzy_span, span)
        self._span_end = self._lower_starts[span] - 1 if span else 0
        self._fuzzy_end = self._lower_starts[fuzzy] - 1 if fuzzy else 0
        self.search_span = span
        # Past the span, names are found by their start: the files there, by name.
        self._by_name = array("i", sorted(range(span, self._count), key=self._lower_name))

    @overload
    def __getitem__(self, index: int) -> str: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...
    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        if isinstance(index, slice):
            return [self._path(i) for i in range(*index.indices(self._count))]
        if index < 0:
            index += self._count
        if not 0 <= index < self._count:
            raise IndexError("file index out of range")
        return self._path(index)

    def __len__(self) -> int:
        return self._count

    def __iter__(self) -> Iterator[str]:
        return (self._path(index) for index in range(self._count))

    def search(self, query: str, limit: int) -> list[tuple[int, str]]:
        """Up to `limit` (rank, path) matches of `query`, best rank first, then index order.

        Ranks: the basename starts with the query; a path segment starts with it (so
        `src/ut` finds `src/utils.py`); the path contains it; the basename holds its
        characters in order (`ldr` finds `models/loader.py`). The last two look at a name
        only within `search_span` (the last within `fuzzy_span`). Case is ignored; ""
        finds nothing.
        """
        needle = query.lower()
        if not needle or "\n" in needle or limit <= 0:
            return []
        seen: dict[int, int] = {}
        stages = [
            (BASENAME_PREFIX, self._name_prefix_hits(needle)),
            (SEGMENT_PREFIX, self._segment_prefix_hits(needle)),
            (SUBSTRING, self._substring_hits(needle)),
            (SUBSEQUENCE, self._subsequence_hits(needle)),
        ]
        for rank, hits in stages:
            for index in hits:
                if index not in seen:
                    seen[index] = rank
                    if len(seen) >= limit:
                        break
            if len(seen) >= limit:
                break
        return [(rank, self._path(index)) for index, rank in seen.items()]

    # ------------------------------------------------------------------ paths

    def _lower_name(self, index: int) -> str:
        return self._lower_names[self._lower_starts[index] : self._lower_starts[index + 1] - 1]

    def _run_of(self, index: int) -> int:
        return bisect_right(self._run_starts, index) - 1

    def _path(self, index: int) -> str:
        start = self._name_starts[index]
        name = self._names[start : self._name_starts[index + 1] - 1]
        folder = self._folders[self._run_of(index)]
        return f"{folder}/{name}" if folder else name

    # ------------------------------------------------------------------ stages
    # Each yields file indexes in increasing order.

    def _name_hits(self, needle: str, start: int = 0, end: int | None = None) -> Iterator[int]:
        """Files whose lowercased name contains `needle` (a leading "\\n": starts with it),
        within the text span `start`..`end` of the joined names (default: `search_span`)."""
        stop = self._span_end if end is None else end
        return find_lines(self._lower_names, self._lower_starts, needle, start, stop)

    def _name_prefix_hits(self, prefix: str) -> Iterator[int]:
        """Files whose name starts with `prefix`: a scan within the span, then a lookup
        past it."""
        yield from self._name_hits("\n" + prefix)
        yield from self._named_past_span(prefix)

    def _named_past_span(self, prefix: str) -> list[int]:
        """Files past the span whose name starts with `prefix`, in index order (at most
        `_PAST_SPAN_MATCHES` of them, the first by name, when more do)."""
        low, high = self._past_span_range(prefix)
        return sorted(self._by_name[low : min(high, low + _PAST_SPAN_MATCHES)])

    def _past_span_range(self, prefix: str) -> tuple[int, int]:
        """Where the names starting with `prefix` are in `_by_name`."""
        if not self._by_name or "/" in prefix:
            return 0, 0
        by_name, name = self._by_name, self._lower_name
        low = bisect_left(by_name, prefix, key=name)
        high = bisect_right(by_name, prefix, lo=low, key=lambda index: name(index)[: len(prefix)])
        return low, high

    def _scan_runs(self, runs: Iterable[int], needle: str, low: int, high: int) -> Iterator[int]:
        """The files of `runs` whose name contains `needle`, within `low`..`high` of the
        joined names."""
        for run in runs:
            first, end = self._run_starts[run], self._run_starts[run + 1]
            start = max(self._lower_starts[first] - 1, low)
            stop = min(self._lower_starts[end] - 1, high)
            if start >= high:
                return
            if start < stop:
                yield from self._name_hits(needle, start, stop)

    def _runs_files(self, runs: Iterable[int]) -> Iterator[int]:
        """Every file of the given runs (in increasing order)."""
        for run in runs:
            yield from range(self._run_starts[run], self._run_starts[run + 1])

    def _folder_runs(self, *needles: str, first: int = 0) -> Iterator[int]:
        """The runs from `first` on whose folder entry (`<folder>/`) contains one of
        `needles`."""
        start = self._folder_starts[first] - 1 if first < len(self._folders) else 0
        joined, starts = self._lower_folders, self._folder_starts
        return _unique(heapq.merge(*(find_lines(joined, starts, n, start) for n in needles)))

    def _folder_entry(self, run: int) -> str:
        start = self._folder_starts[run]
        return self._lower_folders[start : self._folder_starts[run + 1] - 1]

    def _folder_then_name(self, folder: str, name: str, segment: bool) -> Iterator[int]:
        """Files whose folder ends with `folder` (at a segment start when `segment`; "" is
        any folder but the top) and whose name starts with `name`."""
        tail = folder + "/"
        if segment and not folder:
            return
        needles = (f"\n{tail}\n", f"/{tail}\n") if segment else (f"{tail}\n",)

        def fits(index: int) -> bool:
            entry = self._folder_entry(self._run_of(index))
            return entry == tail or entry.endswith(("/" if segment else "") + tail)

        # Few names fit: check their folders; many: scan the names of each fitting folder.
        needle = "\n" + name
        if self._lower_names.count(needle, 0, self._span_end) <= _FEW_NAMES:
            yield from filter(fits, self._name_hits(needle))
        else:
            yield from self._scan_runs(self._folder_runs(*needles), needle, 0, self._span_end)
        low, high = self._past_span_range(name)
        if high - low <= _FEW_NAMES:
            yield from sorted(filter(fits, self._by_name[low:high]))
        elif self.search_span < self._count:
            runs = self._folder_runs(*needles, first=self._run_of(self.search_span))
            end = len(self._lower_names)
            yield from self._scan_runs(islice(runs, _PAST_SPAN_RUNS), needle, self._span_end, end)

    def _segment_prefix_hits(self, needle: str) -> Iterator[int]:
        """Paths with a segment (folder or name) starting with `needle`. A name starting
        with it was found by the first stage; here: folders, whole or running on into the
        name (`src/ut` is `src/` then a name starting `ut`)."""
        sources = [self._runs_files(self._folder_runs("\n" + needle, "/" + needle))]
        folder, slash, name = needle.rpartition("/")
        if slash and name:
            sources.append(self._folder_then_name(folder, name, segment=True))
        return _unique(heapq.merge(*sources))

    def _substring_hits(self, needle: str) -> Iterator[int]:
        """Paths containing `needle`: in the folder, across folder and name, or in the
        name (this last one within `search_span`)."""
        sources = [self._runs_files(self._folder_runs(needle))]
        folder, slash, name = needle.rpartition("/")
        if not slash:
            sources.append(self._name_hits(needle, 0, self._span_end))
        elif name:
            sources.append(self._folder_then_name(folder, name, segment=False))
        return _unique(heapq.merge(*sources))

    def _subsequence_hits(self, needle: str) -> Iterator[int]:
        """Names holding the needle's characters in order, among the first `fuzzy_span`
        files (names only: the regex costs about 1 ms per 10,000 names)."""
        if "/" in needle:
            return
        # Each letter's class excludes that letter, so the scans never backtrack; a search
        # starts at the first letter (found at C speed) and skips to the next line on a hit.
        first, rest = re.escape(needle[0]), needle[1:]
        pattern = re.compile(
            first + "".join(f"[^\\n{re.escape(char)}]*+{re.escape(char)}" for char in rest)
        )
        joined, starts, end = self._lower_names, self._lower_starts, self._fuzzy_end
        match = pattern.search(joined, 0, end)
        while match:
            index = bisect_right(starts, match.start()) - 1
            yield index
            if index + 1 >= len(starts) - 1:
                return
            match = pattern.search(joined, starts[index + 1], end)


def join_lines(entries: Iterable[str]) -> tuple[str, array[int]]:
    """`"\\n" + "\\n".join(entries) + "\\n"` and the offset where each entry starts, plus
    one past the end (so entry `i` is `joined[starts[i] : starts[i + 1] - 1]`)."""
    parts = list(entries)
    # Each entry starts one past the end of the one before it (in C: no loop here).
    starts = array("i", accumulate(map(add, map(len, parts), repeat(1)), initial=1))
    return "\n" + "\n".join(parts) + "\n", starts


def find_lines(
    joined: str, starts: Sequence[int], needle: str, start: int = 0, end: int | None = None
) -> Iterator[int]:
    """Indexes of the entries of `join_lines` output containing `needle`, once each, in
    order, looking only at `joined[start:end]`. A needle starting with "\\n" matches at the
    start of an entry; one ending with "\\n", at its end."""
    stop = len(joined) if end is None else end
    last = len(starts) - 2
    position = joined.find(needle, start, stop)
    while position >= 0:
        # A needle starting with "\n" matches at the separator before its entry.
        index = bisect_right(starts, position + (needle[0] == "\n")) - 1
        yield index
        if index >= last:
            return
        position = joined.find(needle, starts[index + 1] - 1, stop)


def _unique(ordered: Iterable[int]) -> Iterator[int]:
    """An increasing sequence without its repeats."""
    previous = -1
    for value in ordered:
        if value != previous:
            yield value
        previous = value
