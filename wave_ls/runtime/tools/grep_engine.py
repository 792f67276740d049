"""Grep's search, two ways with one answer: ``rg`` when it is on PATH, else pure Python.

Both return the same ``FileHits`` (sorted like ``rg --sort path``) for the same tree; the
Grep tool only formats them. Which files are searched follows ``walk.py`` (ripgrep's rules);
binary files (a NUL byte) are never searched.
"""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from wave_ls.runtime.core import ToolError
from wave_ls.runtime.tools.file_types import FILE_TYPES
from wave_ls.runtime.walk import PatternSet, WalkOptions, expand_braces, walk_files

OutputMode = Literal["files_with_matches", "content", "count"]
BINARY_SNIFF_BYTES = 65536


@dataclass
class GrepQuery:
    pattern: str
    root: Path  # a directory or a single file
    mode: OutputMode = "files_with_matches"
    ignore_case: bool = False
    multiline: bool = False
    before: int = 0
    after: int = 0
    globs: list[str] = field(default_factory=list)  # rg --glob syntax, "!" excludes
    file_type: str | None = None


@dataclass
class FileHits:
    """One file's results. ``path`` is relative to the root directory (for a file root: its
    name). ``lines`` maps a 1-based line number to (is_match, text), content mode only."""

    path: str
    count: int = 0
    lines: dict[int, tuple[bool, str]] = field(default_factory=dict)


def sort_key(hits: FileHits) -> tuple[str, ...]:
    """Depth-first by name, the order of ``rg --sort path``."""
    return tuple(hits.path.split("/"))


def is_binary_file(path: Path) -> bool:
    try:
        with path.open("rb") as handle:
            return b"\0" in handle.read(BINARY_SNIFF_BYTES)
    except OSError:
        return False


def glob_overrides(globs: list[str]) -> PatternSet | None:
    lines: list[str] = []
    for glob in globs:
        negate = glob.startswith("!")
        for expanded in expand_braces(glob[1:] if negate else glob):
            lines.append(("!" if negate else "") + expanded)
    # In rg's glob syntax a plain glob includes and "!" excludes: PatternSet's True/False.
    return PatternSet(lines) if lines else None


def compile_pattern(query: GrepQuery) -> re.Pattern[str]:
    flags = re.MULTILINE | (re.IGNORECASE if query.ignore_case else 0)
    try:
        return re.compile(query.pattern, flags)
    except re.error as error:
        raise ToolError(f"Invalid regular expression {query.pattern!r}: {error}") from error


def _split_lines(text: str) -> list[str]:
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    return lines


def _match_lines(regex: re.Pattern[str], text: str, multiline: bool) -> tuple[list[int], int]:
    """0-based indices of matched lines (sorted) and rg's match count."""
    if not multiline:
        hits = [index for index, line in enumerate(_split_lines(text)) if regex.search(line)]
        return hits, len(hits)
    starts = [0] + [index + 1 for index, char in enumerate(text) if char == "\n"]
    matched: set[int] = set()
    groups = 0
    group_end = -1
    for found in regex.finditer(text):
        if found.start() == len(text) and found.start() == found.end():
            continue  # rg reports no empty match at the very end of a file
        first = bisect.bisect_right(starts, found.start()) - 1
        last = bisect.bisect_right(starts, max(found.start(), found.end() - 1)) - 1
        # rg counts matches that share a line as one.
        if first > group_end:
            groups += 1
        group_end = max(group_end, last)
        matched.update(range(first, last + 1))
    return sorted(matched), groups


def search_file_python(
    regex: re.Pattern[str], path: Path, rel: str, query: GrepQuery
) -> FileHits | None:
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data:
        return None
    text = data.decode("utf-8", errors="replace").removeprefix("\ufeff")
    if regex.search(text) is None:  # the whole-text search can only find more
        return None
    hit_lines, count = _match_lines(regex, text, query.multiline)
    if not hit_lines:
        return None
    hits = FileHits(rel, count)
    if query.mode != "content":
        return hits
    lines = _split_lines(text)
    for index in hit_lines:
        hits.lines[index + 1] = (True, lines[index].rstrip("\r"))
    for index in hit_lines:
        low = max(index - query.before, 0)
        high = min(index + query.after, len(lines) - 1)
        for other in range(low, high + 1):
            hits.lines.setdefault(other + 1, (False, lines[other].rstrip("\r")))
    return hits


def walk_options(query: GrepQuery) -> WalkOptions:
    types = None
    if query.file_type:
        globs = FILE_TYPES.get(query.file_type)
        if globs is None:
            known = ", ".join(sorted(FILE_TYPES))
            raise ToolError(f"Unknown file type {query.file_type!r}. Known types: {known}")
        types = PatternSet(globs)
    return WalkOptions(overrides=glob_overrides(query.globs), types=types)


def search_python(query: GrepQuery) -> list[FileHits]:
    """The pure-Python search (same results as ``search_ripgrep``)."""
    regex = compile_pattern(query)
    if query.root.is_file():
        found = search_file_python(regex, query.root, query.root.name, query)
        return [found] if found else []
    results = []
    for rel in walk_files(query.root, walk_options(query)):
        found = search_file_python(regex, query.root / rel, rel, query)
        if found:
            results.append(found)
    results.sort(key=sort_key)
    return results
