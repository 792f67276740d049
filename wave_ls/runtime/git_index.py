"""Which files git tracks, read from the index without running git or anything of the repo's.

A cloned repository controls its files and its ``.git`` contents (config, hooks), so running
``git`` to ask "is this tracked?" could run the repository's code (``core.fsmonitor``). The
index is read here with dulwich's reader instead, cached by the index file's stat. Every file
opened is checked to be a regular file first and opened without blocking: a FIFO or device
planted as ``.git``, ``.git/index`` or the ``gitdir:`` file never hangs the caller.
"""

from __future__ import annotations

import bisect
import functools
import io
import os
import stat
import threading
from dataclasses import dataclass
from pathlib import Path

from wave_ls.runtime.regular_files import read_if_regular

MAX_GITDIR_FILE = 4096  # a ``.git`` file is one ``gitdir: <path>`` line
MAX_INDEX_BYTES = 512 * 1024 * 1024  # bigger than any index a real repository has
MAX_CACHED = 64


@dataclass(frozen=True)
class Repository:
    """A work tree: its top folder, and the index file (absent before the first ``git add``)."""

    root: Path
    index: Path


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except (OSError, ValueError):
        return None


def _git_dir_of(dot_git: Path) -> Path | None:
    """The git dir a ``.git`` entry names: the folder itself, or a ``gitdir:`` file's target."""
    info = _lstat(dot_git)
    if info is None:
        return None
    if stat.S_ISDIR(info.st_mode):
        return dot_git
    if not stat.S_ISREG(info.st_mode):
        return None  # a FIFO, a device, a socket, a symlink: not a repository we read
    data = read_if_regular(dot_git, MAX_GITDIR_FILE)
    if data is None:
        return None
    text = data.decode("utf-8", "replace").strip()
    if not text.startswith("gitdir:"):
        return None
    target = Path(text.removeprefix("gitdir:").strip())
    return target if target.is_absolute() else dot_git.parent / target


def find_repository(path: Path) -> Repository | None:
    """The nearest work tree holding ``path``: the first folder upwards with a ``.git``."""
    try:
        start = Path(os.path.abspath(path))
    except (OSError, ValueError):
        return None
    for folder in (start, *start.parents):
        git_dir = _git_dir_of(folder / ".git")
        if git_dir is not None:
            return Repository(folder, git_dir / "index")
    return None


# The tracked paths of an index file, by its path, with the stat they were read at.
_CACHE: dict[Path, tuple[tuple[int, int, int, int], frozenset[bytes] | None]] = {}
_LOCK = threading.Lock()


def tracked_paths(index: Path) -> frozenset[bytes] | None:
    """The paths (relative, ``/``-separated bytes) an index file lists; empty when there is
    no index yet; None when it exists but cannot be read (callers then assume tracked)."""
    info = _lstat(index)
    if info is None:
        return frozenset()
    if not stat.S_ISREG(info.st_mode):
        return None
    key = (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
    with _LOCK:
        known = _CACHE.get(index)
    if known is not None and known[0] == key:
        return known[1]
    data = read_if_regular(index, MAX_INDEX_BYTES)
    paths: frozenset[bytes] | None = None
    if data is not None:
        try:
            from dulwich.index import read_index_dict  # ~15 ms of imports: off the start

            paths = frozenset(read_index_dict(io.BytesIO(data)))
        except Exception:  # any malformed index: cannot tell
            paths = None
    with _LOCK:
        if len(_CACHE) >= MAX_CACHED:
            _CACHE.clear()
        _CACHE[index] = (key, paths)
    return paths


def _relative(path: Path, root: Path) -> bytes | None:
    absolute = Path(os.path.abspath(path))
    try:
        parts = absolute.relative_to(root).parts
    except ValueError:
        return None
    return "/".join(parts).encode("utf-8", "surrogateescape") if parts else None


def from_repository(path: Path) -> bool:
    """Whether the repository holding ``path`` tracks it (it arrived with a clone, pull or
    checkout). Also true when a folder on the way is tracked (a committed symlink or
    submodule standing for ``.wave``), and when the index cannot be read. False outside any
    repository."""
    repository = find_repository(path.parent)
    if repository is None:
        return False
    relative = _relative(path, repository.root)
    if relative is None:
        return False
    paths = tracked_paths(repository.index)
    if paths is None:
        return True
    if relative in paths:
        return True
    parts = relative.split(b"/")
    return any(b"/".join(parts[:end]) in paths for end in range(1, len(parts)))


def tracked_under(folder: Path, prefix: str) -> list[Path]:
    """The tracked files under ``folder / prefix`` (for instance the committed agent files
    of ``.wave/agents``), as paths in the work tree."""
    repository = find_repository(folder)
    if repository is None:
        return []
    base = _relative(folder / prefix, repository.root)
    paths = tracked_paths(repository.index)
    if base is None or not paths:
        return []
    ordered = _sorted(paths)
    start = base + b"/"
    found = []
    for index in range(bisect.bisect_left(ordered, start), len(ordered)):
        if not ordered[index].startswith(start):
            break
        found.append(repository.root / os.fsdecode(ordered[index]))
    return found


@functools.lru_cache(maxsize=8)
def _sorted(paths: frozenset[bytes]) -> tuple[bytes, ...]:
    """The index's paths in order, once per index read (a prefix is then a range)."""
    return tuple(sorted(paths))
