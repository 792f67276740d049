"""Walking a tree with git's ignore rules: the one ignore-aware file walker.

``walk_entries`` visits a tree and says of each entry whether the ignore rules ignore it;
the caller decides which directories to enter. Built on it:

- ``walk_files``: the files ripgrep would search (Glob, and Grep without ``rg``): hidden
  entries and ignored directories skipped, overrides (Grep's ``glob``) and file types first;
- the file list of ``@`` completion outside git (``chat_input/workspace_files.py``);
- what dulwich's status sees as untracked, and the ignored files ``.worktreeinclude`` may
  copy (``worktrees/``).

The rules: ``.gitignore`` files apply inside a git repository (a ``.git`` dir or file in the
directory or an ancestor; everywhere with ``require_git=False``), from the repository root
down, a deeper file winning; then ``info/exclude``; then the caller's ``excludes`` (git's
global excludes file). A directory holding its own ``.git`` is a repository boundary. An
entry is matched as its own path, never through an ignored parent, so a walk rooted inside
an ignored directory still sees its files (as with ``rg <dir>``).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from wave_ls.runtime.git_dirs import common_dir_of

if TYPE_CHECKING:
    import pathspec

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


def _matches_itself(pattern: pathspec.RegexPattern, path: str) -> bool:
    """Whether ``pattern`` matches ``path`` itself rather than one of its parent directories.

    pathspec (public API: ``match_file`` and its ``re.Match``) matches a path when the
    pattern matches it or a parent; a match that stops right after a ``/`` is the parent's.
    A trailing ``/**`` is the contents of a directory: everything below it, never itself.
    """
    result = pattern.match_file(path)
    if not result:
        return False
    end = result.match.end()
    if str(pattern.pattern).rstrip().endswith("/**"):
        return end < len(path)
    return end == len(path) or not path[:end].endswith("/")


class PatternSet:
    """gitignore-style patterns matched against one exact path; the last match wins.

    ``match`` returns True (a positive pattern matched), False (a ``!`` pattern matched) or
    None (no pattern matched). Paths are posix and relative to the patterns' base directory.
    A pattern matches a path itself, not through its parent directory (``build/`` matches
    the directory ``build``, not ``build/x``: the walk decides about ``build`` first).
    """

    def __init__(self, lines: Iterable[str]) -> None:
        import pathspec  # ~10 ms to import: deferred past a one-shot run's first request

        spec = pathspec.GitIgnoreSpec.from_lines(list(lines))
        self._patterns = [
            p
            for p in spec.patterns
            if isinstance(p, pathspec.RegexPattern) and p.include is not None
        ]
        self.has_positive = any(p.include for p in self._patterns)

    def __bool__(self) -> bool:
        return bool(self._patterns)

    def match(self, rel: str, is_dir: bool) -> bool | None:
        path = rel + "/" if is_dir else rel
        for pattern in reversed(self._patterns):
            if _matches_itself(pattern, path):
                return bool(pattern.include)
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
    require_git: bool = True  # False: .gitignore files apply outside git repositories too
    excludes: PatternSet | None = None  # lowest precedence, e.g. git's global excludes
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
    frame = _Dir(str(root), "", 0, in_git=not options.require_git)
    if not options.gitignore:
        return frame
    if options.excludes:
        frame.excludes.append(_Matcher(options.excludes, "", 0))
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
            frame.excludes.insert(0, _Matcher(excludes, prefix, 0))
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
        if options.excludes:
            frame.excludes.append(_Matcher(options.excludes, "", strip))
    patterns = PatternSet.from_file(Path(frame.path) / ".gitignore")
    if patterns:
        frame.ignores.insert(0, _Matcher(patterns, "", strip))


def _ignored(frame: _Dir, rel: str, is_dir: bool) -> bool | None:
    if not frame.in_git:
        return None  # .gitignore files count inside repositories (unless require_git=False)
    for matcher in frame.ignores:
        verdict = matcher.match(rel, is_dir)
        if verdict is not None:
            return verdict
    for matcher in frame.excludes:
        verdict = matcher.match(rel, is_dir)
        if verdict is not None:
            return verdict
    return None


@dataclass(frozen=True)
class Entry:
    """One entry of a walk. ``ignored`` is the ignore rules' verdict on the path itself:
    True (ignored), False (re-included by a ``!`` pattern) or None (no rule, or not in a
    repository); ``repository``: a directory holding its own ``.git``."""

    rel: str  # posix, relative to the walk's root
    name: str
    depth: int  # 1 for the root's own entries
    is_dir: bool  # a directory, never a symbolic link to one
    is_file: bool  # a regular file, or a symbolic link to one
    is_link: bool
    ignored: bool | None
    repository: bool = False


def walk_entries(
    root: Path, enter: Callable[[Entry], bool], options: WalkOptions | None = None
) -> Iterator[Entry]:
    """Every entry under the directory ``root`` (sockets, FIFOs and devices left out), each
    directory entered when ``enter(entry)`` says so; depth first, in no particular order."""
    options = options or WalkOptions()
    first = _root_frame(root, options)
    _enter(first, options)
    stack = [first]
    while stack:
        frame = stack.pop()
        try:
            items = list(os.scandir(frame.path))
        except OSError:
            continue
        for item in items:
            rel = f"{frame.rel}/{item.name}" if frame.rel else item.name
            try:
                is_link = item.is_symlink()
                is_dir = not is_link and item.is_dir(follow_symlinks=False)
                is_file = item.is_file() if is_link else item.is_file(follow_symlinks=False)
                repository = is_dir and os.path.lexists(os.path.join(item.path, ".git"))
            except OSError:
                continue
            if not (is_dir or is_file or is_link):
                continue  # sockets, fifos, devices
            entry = Entry(
                rel,
                item.name,
                frame.depth + 1,
                is_dir,
                is_file,
                is_link,
                _ignored(frame, rel, is_dir),
                repository,
            )
            yield entry
            if is_dir and enter(entry):
                child = _Dir(item.path, rel, entry.depth, list(frame.ignores), list(frame.excludes))
                child.in_git = frame.in_git
                _enter(child, options)
                stack.append(child)


def _included(entry: Entry, options: WalkOptions) -> bool:
    """ripgrep's precedence: overrides, then ignore files, then type, then hidden."""
    if options.overrides:
        verdict = options.overrides.match(entry.rel, entry.is_dir)
        if verdict is not None:
            return verdict
        if options.overrides.has_positive and not entry.is_dir:
            return False
    if entry.ignored:
        return False
    whitelisted = entry.ignored is False
    if options.types and not entry.is_dir:
        if not options.types.match(entry.name, False):
            return False
        whitelisted = True
    if not whitelisted and entry.name.startswith(".") and not options.hidden:
        return False
    return not (entry.is_dir and entry.name in VCS_DIRS)


def walk_files(root: Path, options: WalkOptions | None = None) -> Iterator[str]:
    """Every file under the directory ``root`` that the rules include (the files ripgrep
    would search), as a posix path relative to ``root``, in no particular order."""
    options = options or WalkOptions()
    depth = options.max_depth

    def enter(entry: Entry) -> bool:
        return _included(entry, options) and (depth is None or entry.depth < depth)

    for entry in walk_entries(root, enter, options):
        if entry.is_dir or not entry.is_file:
            continue
        if entry.is_link and not options.follow_file_symlinks:
            continue
        if _included(entry, options):
            yield entry.rel
