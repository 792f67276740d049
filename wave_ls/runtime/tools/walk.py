"""Walking a tree the way ripgrep does: .gitignore files, hidden entries, symlinks, globs.

Used by Glob and by Grep's pure-Python search, so that both see the same files as ``rg``:

- ``.gitignore`` files apply only inside a git repository (a ``.git`` dir or file in the
  directory or an ancestor), from the repository root down; a deeper file wins; then
  ``.git/info/exclude``. ``.ignore``/``.rgignore`` and the global git excludes are not read.
- An entry is matched as its own path only (never through an ignored parent), so a search
  rooted inside an ignored directory still sees its files, as with ``rg <dir>``.
- Glob overrides (Grep's ``glob``) come first and can include an ignored or hidden file;
  a file type (Grep's ``type``) can include a hidden file; hidden entries are skipped unless
  something whitelisted them. Symbolic links are not followed (files: optionally).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pathspec

from wave_ls.runtime.git_dirs import common_dir_of

VCS_DIRS = frozenset({".git", ".hg", ".svn", ".bzr", ".jj", ".sl"})


def expand_braces(pattern: str) -> list[str]:
    """``"*.{ts,tsx}"`` -> ``["*.ts", "*.tsx"]`` (nested braces too)."""
    depth = 0
    start = -1
    for index, char in enumerate(pattern):
        if char == "\\":
            continue
        if char == "{":
            if depth == 0:
                start = index
            depth += 1
        elif char == "}" and depth:
            depth -= 1
            if depth == 0:
                options = _split_top_level(pattern[start + 1 : index])
                if len(options) < 2:
                    continue
                prefix, suffix = pattern[:start], pattern[index + 1 :]
                out: list[str] = []
                for option in options:
                    out.extend(expand_braces(prefix + option + suffix))
                return out
    return [pattern]


def _split_top_level(text: str) -> list[str]:
    parts, depth, current = [], 0, ""
    for char in text:
        if char == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        depth += char == "{"
        depth -= char == "}"
        current += char
    parts.append(current)
    return parts


def _matches_itself(regex: re.Pattern[str], rel: str, path: str, is_dir: bool) -> bool:
    """Whether a compiled pathspec pattern matches this path itself, not only a parent.

    pathspec (>= 1.0) ends a pattern with a ``ps_d`` group where a directory match would
    also cover everything below it; a match whose ``ps_d`` ends early is a parent's match.
    Patterns without that group (``src/**``) match what lies below: a directory itself
    only when its path without the slash matches too.
    """
    found = regex.match(path)
    if found is None:
        return False
    if "ps_d" in regex.groupindex:
        return found.group("ps_d") is None or found.end("ps_d") == len(path)
    return not is_dir or regex.match(rel) is not None


class PatternSet:
    """gitignore-style patterns matched against one exact path; the last match wins.

    ``match`` returns True (a positive pattern matched), False (a ``!`` pattern matched) or
    None (no pattern matched). Paths are posix and relative to the patterns' base directory.
    """

    def __init__(self, lines: Iterable[str]) -> None:
        spec = pathspec.GitIgnoreSpec.from_lines(list(lines))
        self._patterns: list[tuple[re.Pattern[str], bool]] = [
            (pattern.regex, bool(pattern.include))
            for pattern in spec.patterns
            if pattern.include is not None and pattern.regex is not None
        ]
        self.has_positive = any(include for _, include in self._patterns)

    def __bool__(self) -> bool:
        return bool(self._patterns)

    def match(self, rel: str, is_dir: bool) -> bool | None:
        path = rel + "/" if is_dir else rel
        for regex, include in reversed(self._patterns):
            if _matches_itself(regex, rel, path, is_dir):
                return include
        return None

    @classmethod
    def from_file(cls, path: Path) -> PatternSet | None:
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError:
            return None
        patterns = cls(text.splitlines())
        return patterns or None


@dataclass
class WalkOptions:
    """What a walk includes; the defaults are ripgrep's."""

    hidden: bool = False  # include hidden entries (VCS directories are still skipped)
    gitignore: bool = True
    follow_file_symlinks: bool = False
    max_depth: int | None = None  # 1 = only the root's own entries
    overrides: PatternSet | None = None  # positive = include (whitelist), "!" = exclude
    types: PatternSet | None = None  # file-name patterns of the selected file type


@dataclass
class _Matcher:
    patterns: PatternSet
    prefix: str  # prepended to a root-relative path (matchers of the root's ancestors)
    strip: int  # characters removed from a root-relative path (matchers below the root)

    def match(self, rel: str, is_dir: bool) -> bool | None:
        return self.patterns.match(self.prefix + rel[self.strip :], is_dir)


@dataclass
class _Dir:
    path: str  # absolute
    rel: str  # relative to the walk's root ("" for the root)
    depth: int
    ignores: list[_Matcher] = field(default_factory=list)  # deepest first
    excludes: list[_Matcher] = field(default_factory=list)
    in_git: bool = False


def _exclude_file(repo: Path) -> PatternSet | None:
    common = common_dir_of(repo)  # a linked worktree reads its main repository's
    return PatternSet.from_file(common / "info" / "exclude") if common else None


def _root_frame(root: Path, options: WalkOptions) -> _Dir:
    """The root's frame, with the ignore files of its ancestors up to the repository root."""
    frame = _Dir(str(root), "", 0)
    if not options.gitignore:
        return frame
    ancestors: list[Path] = []
    for directory in root.parents:
        ancestors.append(directory)
        if (directory / ".git").exists():
            frame.in_git = True
            break
    else:
        ancestors = []
    for directory in ancestors:  # nearest first = highest precedence first
        prefix = root.relative_to(directory).as_posix() + "/"
        patterns = PatternSet.from_file(directory / ".gitignore")
        if patterns:
            frame.ignores.append(_Matcher(patterns, prefix, 0))
    if ancestors:
        excludes = _exclude_file(ancestors[-1])
        if excludes:
            prefix = root.relative_to(ancestors[-1]).as_posix() + "/"
            frame.excludes.append(_Matcher(excludes, prefix, 0))
    return frame


def _enter(frame: _Dir, options: WalkOptions) -> None:
    """Add the directory's own ignore files to its frame (it is already in the frame)."""
    if not options.gitignore:
        return
    strip = len(frame.rel) + 1 if frame.rel else 0
    if os.path.exists(os.path.join(frame.path, ".git")):
        # A repository boundary: ignore files above it stop applying (as in git and rg).
        frame.in_git = True
        frame.ignores = []
        frame.excludes = []
        excludes = _exclude_file(Path(frame.path))
        if excludes:
            frame.excludes.append(_Matcher(excludes, "", strip))
    patterns = PatternSet.from_file(Path(frame.path) / ".gitignore")
    if patterns:
        frame.ignores.insert(0, _Matcher(patterns, "", strip))


def _ignored(frame: _Dir, rel: str, is_dir: bool) -> bool | None:
    if not frame.in_git:
        return None
    for matcher in frame.ignores:
        verdict = matcher.match(rel, is_dir)
        if verdict is not None:
            return verdict
    for matcher in frame.excludes:
        verdict = matcher.match(rel, is_dir)
        if verdict is not None:
            return verdict
    return None


def _included(frame: _Dir, name: str, rel: str, is_dir: bool, options: WalkOptions) -> bool:
    """ripgrep's precedence: overrides, then ignore files, then type, then hidden."""
    if options.overrides:
        verdict = options.overrides.match(rel, is_dir)
        if verdict is not None:
            return verdict
        if options.overrides.has_positive and not is_dir:
            return False
    whitelisted = False
    ignored = _ignored(frame, rel, is_dir)
    if ignored:
        return False
    if ignored is False:
        whitelisted = True
    if options.types and not is_dir:
        if not options.types.match(name, False):
            return False
        whitelisted = True
    if not whitelisted and name.startswith(".") and not options.hidden:
        return False
    return not (is_dir and name in VCS_DIRS)


def walk_files(root: Path, options: WalkOptions | None = None) -> Iterator[str]:
    """Every file under the directory ``root`` that the rules include, as a posix path
    relative to ``root``, in no particular order."""
    options = options or WalkOptions()
    first = _root_frame(root, options)
    _enter(first, options)
    stack = [first]
    while stack:
        frame = stack.pop()
        try:
            entries = list(os.scandir(frame.path))
        except OSError:
            continue
        for entry in entries:
            rel = f"{frame.rel}/{entry.name}" if frame.rel else entry.name
            try:
                if entry.is_symlink():
                    if not options.follow_file_symlinks or not entry.is_file():
                        continue
                    is_dir = False
                else:
                    is_dir = entry.is_dir(follow_symlinks=False)
                    if not is_dir and not entry.is_file(follow_symlinks=False):
                        continue  # sockets, fifos, devices
            except OSError:
                continue
            if not _included(frame, entry.name, rel, is_dir, options):
                continue
            if not is_dir:
                yield rel
                continue
            depth = frame.depth + 1
            if options.max_depth is not None and depth >= options.max_depth:
                continue
            child = _Dir(entry.path, rel, depth, list(frame.ignores), list(frame.excludes))
            child.in_git = frame.in_git
            _enter(child, options)
            stack.append(child)
