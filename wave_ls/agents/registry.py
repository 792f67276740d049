"""``AgentRegistry``: the subagents of a workspace, re-read from disk on every ``load``.

Nothing is watched: each ``load`` lists the agent directories and stats their files, so an
edit, a new file or a deletion shows up at the next call (MENTION-9). Files whose
``(mtime_ns, size, inode)`` did not change are not read again; a file changed so recently
that a second change could hide inside the file system's timestamp granularity is "racy"
and is compared by content until it settles (the same trick git uses for its index).
"""

from __future__ import annotations

import errno
import hashlib
import os
import re
import stat
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from wave_ls.agents.definition import AgentCatalog, Problem
from wave_ls.agents.discovery import (
    AgentDir,
    ParsedFile,
    agent_dirs,
    dedupe_directory,
    merge_layers,
)
from wave_ls.agents.parse import NAME_PATTERN, NAME_RULE, parse_agent_file
from wave_ls.agents.parse_cache import ParseCache

RACY_WINDOW_NS = 2_000_000_000  # covers the coarsest common mtime granularity (FAT, HFS+)
# Adding, deleting or renaming a file changes its directory's mtime and is seen at once; a
# file edited in place is seen within this window (stat-ing 1,000 files at every completion
# request was most of its latency).
RECHECK_FILES_NS = 1_000_000_000
_NAME_KEY = re.compile(r"^name\s*:", re.MULTILINE)
# An agent file is a prompt: a larger one is a mistake, and is not read at all.
MAX_FILE_BYTES = 1024 * 1024

Stamp = tuple[int, int, int, int]  # (mtime_ns, ctime_ns, size, inode)


@dataclass
class _CachedFile:
    stamp: Stamp
    digest: bytes
    racy: bool
    parsed: ParsedFile


@dataclass
class _CachedDir:
    files: dict[str, _CachedFile]  # by file name, sorted
    generation: int  # changes whenever anything in the directory did
    problem: Problem | None = None  # the directory itself could not be listed
    dir_stamp: tuple[int, int] | None = None  # the directory's (mtime, inode) when scanned
    scanned_ns: int = 0


class AgentRegistry:
    """Loads the catalog of subagents for a working directory, with a per-file cache.

    ``home`` defaults to ``Path.home()`` (which honours ``$HOME``) and ``env`` to
    ``os.environ`` (read at each load, for ``WAVE_PLUGIN_DIRS``). Safe to call from
    several threads.
    """

    def __init__(self, home: Path | None = None, env: Mapping[str, str] | None = None) -> None:
        self.home = home if home is not None else Path.home()
        self._env = env
        self._plugins: dict[str, Path] = {}
        self._dirs: dict[AgentDir, _CachedDir] = {}
        self._catalogs: dict[Path, tuple[tuple[object, ...], AgentCatalog]] = {}
        self._lock = threading.Lock()
        self._generation = 0
        self._disk = ParseCache(self.home)
        self.parse_count = 0
        """How many files were parsed so far (a cache miss each); for tests and benchmarks."""

    def register_plugin(self, name: str, directory: Path) -> None:
        """Add (or replace) plugin ``name`` whose agents are ``directory/agents/*.md``;
        they are named ``<name>:<agent>``. Raises ``ValueError`` for an invalid name."""
        if not NAME_PATTERN.match(name):
            raise ValueError(f"plugin name {name!r} is not valid: use {NAME_RULE}")
        with self._lock:
            self._plugins[name] = Path(directory)

    def unregister_plugin(self, name: str) -> None:
        """Remove a plugin added with ``register_plugin``; its agents are gone from the next
        ``load`` (MENTION-9). Unknown names are ignored."""
        with self._lock:
            self._plugins.pop(name, None)

    def plugins(self) -> dict[str, Path]:
        """The plugins added with ``register_plugin``."""
        with self._lock:
            return dict(self._plugins)

    def load(self, cwd: Path) -> AgentCatalog:
        """The catalog for ``cwd``: the same object as last time when nothing changed."""
        cwd = Path(cwd).resolve()
        env = self._env if self._env is not None else os.environ
        with self._lock:
            dirs, problems = agent_dirs(cwd, self.home, self._plugins, env)
            scanned = [(agent_dir, self._scan(agent_dir)) for agent_dir in dirs]
            self._disk.save()
            key = (tuple(problems), *((d, c.generation) for d, c in scanned))
            previous = self._catalogs.get(cwd)
            if previous is not None and previous[0] == key:
                return previous[1]
            layers = []
            for _, cached in scanned:
                definitions, layer_problems = dedupe_directory(
                    [entry.parsed for entry in cached.files.values()]
                )
                if cached.problem is not None:
                    layer_problems.insert(0, cached.problem)
                layers.append((definitions, layer_problems))
            catalog = merge_layers(layers, problems)
            self._catalogs[cwd] = (key, catalog)
            return catalog

    def directories(self, cwd: Path) -> list[tuple[AgentDir, tuple[ParsedFile, ...]]]:
        """The agent directories ``load(cwd)`` reads, lowest precedence first, each with its
        parsed files in file-name order (from the same cache): what an editor needs to
        judge one file against its neighbours and the other scopes."""
        cwd = Path(cwd).resolve()
        env = self._env if self._env is not None else os.environ
        with self._lock:
            dirs, _ = agent_dirs(cwd, self.home, self._plugins, env)
            return [
                (agent_dir, tuple(entry.parsed for entry in self._scan(agent_dir).files.values()))
                for agent_dir in dirs
            ]

    def _scan(self, agent_dir: AgentDir) -> _CachedDir:
        """Bring the cache of one directory up to date with the disk."""
        now = time.time_ns()
        old = self._dirs.get(agent_dir) or _CachedDir({}, 0)
        dir_stamp = _dir_stamp(agent_dir.directory)
        if (
            dir_stamp is not None
            and dir_stamp == old.dir_stamp
            and now - old.scanned_ns < RECHECK_FILES_NS
            and not any(entry.racy for entry in old.files.values())
        ):
            return old
        listing, problem = _list_md(agent_dir.directory)
        files: dict[str, _CachedFile] = {}
        changed = problem != old.problem or [n for n, _ in listing] != list(old.files)
        for name, path in listing:
            try:
                st = path.stat()
            except OSError as error:
                stamp_or_gone = _link_stamp(path)
                changed = True
                if stamp_or_gone is None:
                    continue  # deleted between listing and stat
                unreadable = Problem(str(path), None, f"cannot read the file: {_reason(error)}")
                files[name] = _CachedFile(stamp_or_gone, b"", False, _failed(path, unreadable))
                continue
            stamp = (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)
            racy = st.st_mtime_ns >= now - RACY_WINDOW_NS
            entry = old.files.get(name)
            if entry is not None and entry.stamp == stamp and not entry.racy:
                files[name] = entry
                continue
            data, read_problem = _read(path, st)
            digest = hashlib.blake2b(data, digest_size=16).digest()
            if entry is not None and entry.digest == digest and read_problem is None:
                files[name] = _CachedFile(stamp, digest, racy, entry.parsed)
                continue
            parsed = (
                _failed(path, read_problem)
                if read_problem is not None
                else self._parse_or_recall(agent_dir, path, data, st, racy)
            )
            files[name] = _CachedFile(stamp, digest, racy, parsed)
            changed = True
        if changed:
            self._generation += 1
            fresh = _CachedDir(files, self._generation, problem, dir_stamp, now)
        else:
            fresh = _CachedDir(files, old.generation, old.problem, dir_stamp, now)
        self._dirs[agent_dir] = fresh
        return fresh

    def _parse_or_recall(
        self, agent_dir: AgentDir, path: Path, data: bytes, st: os.stat_result, racy: bool
    ) -> ParsedFile:
        """The file parsed, or its outcome from the disk cache when it is settled there."""
        if racy:  # its stamp may not tell it from a second change yet
            return self._parse(agent_dir, path, data)
        key = (str(path), st.st_size, st.st_mtime_ns, agent_dir.source, agent_dir.plugin or "")
        parsed = self._disk.get(key)
        if parsed is None:
            parsed = self._parse(agent_dir, path, data)
            self._disk.put(key, parsed)
        return parsed

    def _parse(self, agent_dir: AgentDir, path: Path, data: bytes) -> ParsedFile:
        self.parse_count += 1
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            line = data.count(b"\n", 0, error.start) + 1
            problem = Problem(str(path), line, "the file is not UTF-8 text; save it as UTF-8")
            return ParsedFile(path, None, (problem,))
        defn, problems = parse_agent_file(path, text, agent_dir.source, agent_dir.plugin)
        match = _NAME_KEY.search(text)
        name_line = text.count("\n", 0, match.start()) + 1 if match else None
        return ParsedFile(path, defn, tuple(problems), name_line)


def _dir_stamp(directory: Path) -> tuple[int, int] | None:
    try:
        st = directory.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_ino


def _list_md(directory: Path) -> tuple[list[tuple[str, Path]], Problem | None]:
    """``*.md`` entries of a directory (not hidden ones), sorted by name; none if absent.

    Every such entry is listed, whatever it is: one that is not a readable regular file
    becomes a problem of its own when it is read, never a reason to drop the directory.
    """
    try:
        with os.scandir(directory) as entries:
            found = [
                (e.name, Path(e.path))
                for e in entries
                if e.name.endswith(".md") and not e.name.startswith(".")
            ]
    except (FileNotFoundError, NotADirectoryError):
        return [], None
    except OSError as error:
        reason = error.strerror or str(error)
        return [], Problem(str(directory), None, f"cannot list the agent directory: {reason}")
    return sorted(found), None


def _read(path: Path, st: os.stat_result) -> tuple[bytes, Problem | None]:
    """The bytes of a regular file of at most ``MAX_FILE_BYTES``, or the problem.

    Nothing but a regular file is opened (a FIFO would block, a device never end), and the
    size is checked before reading and again while reading (the file may grow).
    """
    kind = _KINDS.get(stat.S_IFMT(st.st_mode))
    if kind is not None:
        message = f"this is {kind}, not a file; an agent file is a Markdown file"
        return b"", Problem(str(path), None, message)
    if st.st_size > MAX_FILE_BYTES:
        return b"", _too_big(path, st.st_size)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as handle:
            if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):  # replaced meanwhile
                return b"", Problem(str(path), None, "this is not a regular file")
            data = handle.read(MAX_FILE_BYTES + 1)
    except OSError as error:
        return b"", Problem(str(path), None, f"cannot read the file: {_reason(error)}")
    if len(data) > MAX_FILE_BYTES:
        return b"", _too_big(path, len(data))
    return data, None


_KINDS = {
    stat.S_IFDIR: "a directory",
    stat.S_IFIFO: "a named pipe (FIFO)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


def _too_big(path: Path, size: int) -> Problem:
    return Problem(
        str(path),
        None,
        f"the file is {size:,} bytes; an agent file may have at most {MAX_FILE_BYTES:,} "
        "(it was not read)",
    )


def _failed(path: Path, problem: Problem) -> ParsedFile:
    return ParsedFile(path, None, (problem,))


def _link_stamp(path: Path) -> Stamp | None:
    """The stamp of the directory entry itself (a symbolic link that leads nowhere), or
    None when the entry is gone."""
    try:
        st = path.lstat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)


def _reason(error: OSError) -> str:
    if error.errno == errno.ELOOP:
        return "a loop of symbolic links"
    if isinstance(error, FileNotFoundError):
        return "a symbolic link to a file that does not exist"
    return error.strerror or str(error)
