"""``AgentRegistry``: the subagents of a workspace, kept in step with the disk.

Unwatched (the CLI, a one-shot run): each ``load`` lists the agent directories and stats
their files, so an edit, a new file or a deletion shows up at the next call (MENTION-9);
while a directory's mtime is unchanged its files are stat-ed at most once a second.

Watched (``watch()``, what the servers do): a background thread sweeps the directories of
every catalog in use every ``SWEEP_SECONDS`` (stats each file, reads the changed ones) and
``files_changed`` takes the client's file events; ``load`` itself only stats the
directories (adding, deleting or renaming a file changes its directory's mtime), re-reads
the files written in the last two seconds and those named by events, and otherwise hands
back the catalog it has: a request never pays for a sweep.

Files whose ``(mtime_ns, ctime_ns, size, inode)`` did not change are not read again; a file
changed so recently that a second change could hide inside the file system's timestamp
granularity is "racy" and is compared by content until it settles (the trick git uses for
its index).
"""

from __future__ import annotations

import dataclasses
import errno
import hashlib
import itertools
import logging
import os
import re
import stat
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from operator import attrgetter
from pathlib import Path
from typing import Literal

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

log = logging.getLogger(__name__)

RACY_WINDOW_NS = 2_000_000_000  # covers the coarsest common mtime granularity (FAT, HFS+)
# Unwatched: adding, deleting or renaming a file changes its directory's mtime and is seen at
# once; a file edited in place is seen within this window (stat-ing 1,000 files at every
# completion request was most of its latency).
RECHECK_FILES_NS = 1_000_000_000
# Watched: how often every file is stat-ed (an in-place edit nobody reported shows within
# this, plus the sweep), and how long the catalog of a folder nobody asks for is still swept.
SWEEP_SECONDS = 0.5
# The pause after a sweep is this many times the CPU it took (2 % of a core: 5,000 files
# take about 15 ms), but never more than MAX_SWEEP_PAUSE (a change shows within a second).
SWEEP_DUTY = 50
# A sweep's stats come in slices of ~0.7 ms with a pause between them (see ``_restamped``).
STATS_PER_BREATH = 250
BREATH_SECONDS = 0.002
MAX_SWEEP_PAUSE = 0.7
# Watched: the parse cache is written at most this often (and when watching stops). Encoding
# 5,000 entries holds the GIL for ~60 ms in one C call, which no request could interrupt;
# entries lost with the process are only parsed again.
CACHE_SAVE_SECONDS = 30.0
# Watched: a request waits this long for a sweep that holds the lock (renewing a catalog of
# thousands of agents takes tens of milliseconds), then answers from the catalog it has.
LOCK_PATIENCE_SECONDS = 0.003
IDLE_NS = 600_000_000_000
_NAME_KEY = re.compile(r"^name\s*:", re.MULTILINE)
# An agent file is a prompt: a larger one is a mistake, and is not read at all.
MAX_FILE_BYTES = 1024 * 1024

_IS_RACY = attrgetter("racy")

Stamp = tuple[int, int, int, int]  # (mtime_ns, ctime_ns, size, inode)
# "load" (unwatched): list the directory and stat every file, at most once a second while
# the directory is unchanged. "quick" (watched): list the directory only when its stamp
# changed or something was reported; stat only new, racy and reported files.
Mode = Literal["load", "quick"]
EVERY_FILE = "*"  # reported for a directory: list it, check each of its files
RELIST = ""  # list the directory again (a sweep's request when its mtime is racy)


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
    racy: bool = False  # a file changed so recently that its stamp cannot be trusted yet
    racy_dir: bool = False  # the same for the directory's own mtime (its listing)
    # What changed since generation ``base`` when only files' contents did (the listing is
    # the same): each such file's outcome before and after. None when files came or went.
    edits: tuple[tuple[ParsedFile, ParsedFile], ...] | None = None
    base: int = -1


@dataclass
class _Loaded:
    """The catalog of one working directory and what it was built from."""

    key: tuple[object, ...]
    catalog: AgentCatalog
    dirs: tuple[AgentDir, ...]
    problems: tuple[Problem, ...]
    generations: tuple[int, ...]
    used_ns: int  # monotonic time of the last ``load``
    positions: dict[str, int] | None = None  # each agent's index in the catalog, once asked

    def position(self, name: str) -> int | None:
        """Where the agent called ``name`` is in the catalog, or None."""
        if self.positions is None:
            self.positions = {agent.name: at for at, agent in enumerate(self.catalog.agents)}
        return self.positions.get(name)


class AgentRegistry:
    """Loads the catalog of subagents for a working directory, with a per-file cache.

    ``home`` defaults to ``Path.home()`` (which honours ``$HOME``) and ``env`` to
    ``os.environ`` (read at each load, for ``WAVE_PLUGIN_DIRS``). Safe to call from
    several threads.
    """

    def __init__(self, home: Path | None = None, env: Mapping[str, str] | None = None) -> None:
        self.home = home if home is not None else Path.home()
        self._env = env
        self._plugins: dict[str, Path] = {}  # replaced, never changed: read without the lock
        self._dirs: dict[AgentDir, _CachedDir] = {}
        self._catalogs: dict[Path, _Loaded] = {}
        self._reported: dict[AgentDir, set[str]] = {}  # changed on disk, not yet read
        self._lock = threading.Lock()
        self._generation = 0
        self._disk = ParseCache(self.home)
        self._watcher: threading.Thread | None = None
        self._cache_saved_at = -CACHE_SAVE_SECONDS
        self._stop = threading.Event()
        self._wake = threading.Event()
        self.parse_count = 0
        """How many files were parsed so far (a cache miss each); for tests and benchmarks."""
        self.sweep_count = 0
        """How many background sweeps ran; for tests and benchmarks."""
        self.merge_count = 0
        """How many catalogs were merged from all their files (a catalog whose files were
        only edited is renewed in place instead); for tests and benchmarks."""
        self._listeners: list[Callable[[AgentCatalog], object]] = []
        self._renewal_listeners: list[Callable[[], object]] = []
        self._renewals = 0  # catalogs replaced by newer ones (counted under the lock)
        self._renewals_told = 0

    def register_plugin(self, name: str, directory: Path) -> None:
        """Add (or replace) plugin ``name`` whose agents are ``directory/agents/*.md``;
        they are named ``<name>:<agent>``. Raises ``ValueError`` for an invalid name."""
        if not NAME_PATTERN.match(name):
            raise ValueError(f"plugin name {name!r} is not valid: use {NAME_RULE}")
        with self._lock:
            self._plugins = {**self._plugins, name: Path(directory)}

    def plugins(self) -> dict[str, Path]:
        """The plugins added with ``register_plugin``."""
        return dict(self._plugins)

    # ---------------------------------------------------------------- loading

    def load(self, cwd: Path) -> AgentCatalog:
        """The catalog for ``cwd``: the same object as last time when nothing changed."""
        return self._loaded(Path(cwd).resolve()).catalog

    def directories(self, cwd: Path) -> list[tuple[AgentDir, tuple[ParsedFile, ...]]]:
        """The agent directories ``load(cwd)`` reads, lowest precedence first, each with its
        parsed files in file-name order (from the same cache): what an editor needs to
        judge one file against its neighbours and the other scopes."""
        loaded = self._loaded(Path(cwd).resolve())
        return [
            (agent_dir, tuple(entry.parsed for entry in self._dirs[agent_dir].files.values()))
            for agent_dir in loaded.dirs
        ]

    def _loaded(self, cwd: Path) -> _Loaded:
        try:
            return self._up_to_date(cwd)
        finally:
            self._tell_renewals()

    def _up_to_date(self, cwd: Path) -> _Loaded:
        env = self._env if self._env is not None else os.environ
        if self._watcher is not None:
            current = self._current(cwd, env)
            if current is not None:
                return current
            previous = self._catalogs.get(cwd)
            if previous is not None:
                if not self._lock.acquire(timeout=LOCK_PATIENCE_SECONDS):
                    return previous  # a sweep is renewing it right now
                try:
                    return self._load(cwd, env, "quick")
                finally:
                    self._lock.release()
        with self._lock:
            if self._watcher is not None:  # the sweep saves the parse cache
                return self._load(cwd, env, "quick")
            loaded = self._load(cwd, env, "load")
            self._disk.save()
            return loaded

    def _current(self, cwd: Path, env: Mapping[str, str]) -> _Loaded | None:
        """The catalog of ``cwd`` when nothing that shows without reading files changed (a
        few ``stat`` calls, no lock), else None. For watched registries."""
        loaded = self._catalogs.get(cwd)
        now = time.monotonic_ns()
        if loaded is None or now - loaded.used_ns > IDLE_NS:  # no longer swept
            return None
        dirs, problems = agent_dirs(cwd, self.home, self._plugins, env)
        if tuple(dirs) != loaded.dirs or tuple(problems) != loaded.problems:
            return None
        for agent_dir, generation in zip(dirs, loaded.generations, strict=True):
            cached = self._dirs.get(agent_dir)
            if (
                cached is None
                or cached.generation != generation
                or agent_dir in self._reported
                or _dir_stamp(agent_dir.directory) != cached.dir_stamp
            ):
                return None
        loaded.used_ns = now
        return loaded

    def _load(
        self, cwd: Path, env: Mapping[str, str], mode: Mode, *, sweeping: bool = False
    ) -> _Loaded:
        """Bring the directories of ``cwd`` up to date and its catalog with them (with the
        lock held). A sweep does not count as a use of the catalog."""
        dirs, problems = agent_dirs(cwd, self.home, self._plugins, env)
        scanned = [(agent_dir, self._scan(agent_dir, mode)) for agent_dir in dirs]
        key = (tuple(problems), *((d, c.generation) for d, c in scanned))
        previous = self._catalogs.get(cwd)
        used = previous.used_ns if sweeping and previous else time.monotonic_ns()
        if previous is not None and previous.key == key:
            previous.used_ns = used
            return previous
        edited = _edited(previous, key, dirs, problems, scanned) if previous else None
        loaded = edited or self._merged(key, dirs, problems, scanned)
        loaded.used_ns = used
        if sweeping:  # what requests will need of it is made before they can see it
            self._tell(self._listeners, loaded.catalog)
        if previous is not None:
            self._renewals += 1
        self._catalogs[cwd] = loaded
        return loaded

    def _merged(
        self,
        key: tuple[object, ...],
        dirs: list[AgentDir],
        problems: list[Problem],
        scanned: list[tuple[AgentDir, _CachedDir]],
    ) -> _Loaded:
        """The catalog made from every directory's files."""
        self.merge_count += 1
        layers = []
        # One layer per agents directory with its subdirectories: one name per tree.
        for _tree, group in itertools.groupby(scanned, key=lambda pair: pair[0].tree):
            cached_dirs = [cached for _, cached in group]
            definitions, layer_problems = dedupe_directory(
                [entry.parsed for cached in cached_dirs for entry in cached.files.values()]
            )
            listing = [cached.problem for cached in cached_dirs if cached.problem is not None]
            layers.append((definitions, [*listing, *layer_problems]))
        return _Loaded(
            key,
            merge_layers(layers, problems),
            tuple(dirs),
            tuple(problems),
            tuple(cached.generation for _, cached in scanned),
            0,
        )

    def _scan(self, agent_dir: AgentDir, mode: Mode) -> _CachedDir:
        """Bring the cache of one directory up to date with the disk (see ``Mode``)."""
        now = time.time_ns()
        old = self._dirs.get(agent_dir) or _CachedDir({}, 0)
        reported = self._reported.pop(agent_dir, None)
        dir_stamp = _dir_stamp(agent_dir.directory)
        same_dir = old.scanned_ns > 0 and dir_stamp == old.dir_stamp and reported is None
        if same_dir and mode == "quick":
            return old
        if same_dir and not old.racy and now - old.scanned_ns < RECHECK_FILES_NS:
            return old
        named = reported or set()
        every = mode == "load" or EVERY_FILE in named
        if every or RELIST in named or dir_stamp != old.dir_stamp or old.scanned_ns == 0:
            listing, problem = _list_md(agent_dir.directory)
        else:
            listing, problem = list(old.files), old.problem
            new = [name for name in named if name not in old.files and _is_agent_file(name)]
            if new:  # reported, but the directory's mtime did not move (a coarse clock)
                listing = sorted([*listing, *new])
        listed_again = problem != old.problem or listing != list(old.files)
        racy_too = mode == "load"  # watched, the sweep re-reads racy files
        files: dict[str, _CachedFile] = {}
        to_check = listing
        if not (listed_again or every or racy_too):  # only the named files can have changed
            files = dict(old.files)
            to_check = sorted(named.intersection(files))
        edits: list[tuple[ParsedFile, ParsedFile]] | None = None if listed_again else []
        for name in to_check:
            entry = old.files.get(name)
            if entry is not None and not (every or name in named or (racy_too and entry.racy)):
                files[name] = entry
                continue
            fresh = self._check_file(agent_dir, agent_dir.directory / name, entry, now)
            if fresh is None:
                files.pop(name, None)
            else:
                files[name] = fresh
            if fresh is not None and entry is not None:
                if fresh.parsed is not entry.parsed and edits is not None:
                    edits.append((entry.parsed, fresh.parsed))
            else:
                edits = None  # a file came or went
        if listed_again or edits is None or edits:
            self._generation += 1
            generation = self._generation
        else:
            generation, problem = old.generation, old.problem
        racy_dir = dir_stamp is not None and dir_stamp[0] >= now - RACY_WINDOW_NS
        racy = any(map(_IS_RACY, files.values()))
        fresh_dir = _CachedDir(files, generation, problem, dir_stamp, now, racy, racy_dir)
        if generation != old.generation and edits is not None:
            fresh_dir.edits, fresh_dir.base = tuple(edits), old.generation
        self._dirs[agent_dir] = fresh_dir
        return fresh_dir

    def _check_file(
        self, agent_dir: AgentDir, path: Path, entry: _CachedFile | None, now: int
    ) -> _CachedFile | None:
        """The cache entry of one listed file: ``entry`` while it still holds, a new one
        when the file changed (sharing ``entry.parsed`` when its bytes did not), None when
        the file is gone."""
        try:
            st = os.stat(path)
        except OSError as error:
            stamp_or_gone = _link_stamp(path)
            if stamp_or_gone is None:
                return None  # deleted between listing and stat
            unreadable = Problem(str(path), None, f"cannot read the file: {_reason(error)}")
            known = entry is not None and entry.stamp == stamp_or_gone
            if known and entry is not None and entry.parsed.problems == (unreadable,):
                return entry
            return _CachedFile(stamp_or_gone, b"", False, _failed(path, unreadable))
        stamp = (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)
        racy = st.st_mtime_ns >= now - RACY_WINDOW_NS
        if entry is not None and entry.stamp == stamp and not entry.racy:
            return entry
        data, read_problem = _read(path, st)
        digest = hashlib.blake2b(data, digest_size=16).digest()
        if entry is not None and entry.digest == digest and read_problem is None:
            if entry.stamp == stamp and entry.racy == racy:
                return entry
            return _CachedFile(stamp, digest, racy, entry.parsed)
        parsed = (
            _failed(path, read_problem)
            if read_problem is not None
            else self._parse_or_recall(agent_dir, path, data, digest)
        )
        return _CachedFile(stamp, digest, racy, parsed)

    def _parse_or_recall(
        self, agent_dir: AgentDir, path: Path, data: bytes, digest: bytes
    ) -> ParsedFile:
        """The file parsed, or its outcome from the disk cache for the same bytes."""
        key = (str(path), digest.hex(), agent_dir.source, agent_dir.plugin or "")
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

    # ---------------------------------------------------------------- watching

    @property
    def watching(self) -> bool:
        """Whether a background thread keeps the catalogs fresh (``watch``)."""
        return self._watcher is not None

    def watch(self, interval: float = SWEEP_SECONDS) -> None:
        """Keep every catalog in use fresh from a background thread that stats its files
        every ``interval`` seconds (longer when a sweep is slow, see ``SWEEP_DUTY``);
        ``load`` then no longer stats files itself (see the module). Idempotent."""
        with self._lock:
            if self._watcher is not None:
                return
            self._stop.clear()
            self._watcher = threading.Thread(
                target=self._sweep_forever, args=(interval,), name="wave-agent-files", daemon=True
            )
            self._watcher.start()

    def stop_watching(self) -> None:
        """Stop the background thread; ``load`` stats the files itself again."""
        watcher = self._watcher
        if watcher is None:
            return
        self._stop.set()
        self._wake.set()
        watcher.join()
        with self._lock:
            self._watcher = None
            self._disk.save()

    def on_change(self, listener: Callable[[AgentCatalog], object]) -> None:
        """Call ``listener`` with each catalog a sweep renews (in the sweep's thread, before
        ``load`` hands it out), to prepare what the next request will need of it."""
        self._listeners.append(listener)

    def on_renewed(self, listener: Callable[[], object]) -> None:
        """Call ``listener`` after a catalog was replaced by a newer one, by a sweep or by
        a ``load`` (in that thread, once the new catalog is handed out and no lock is
        held): what was judged by the old catalog can be judged again."""
        self._renewal_listeners.append(listener)

    def _tell_renewals(self) -> None:
        # Told at least once after each renewal: a thread that renewed reads the count
        # after its own increment, so a race can only tell twice, never lose one.
        renewals = self._renewals
        if renewals != self._renewals_told:
            self._renewals_told = renewals
            self._tell(self._renewal_listeners)

    def files_changed(self, paths: Iterable[Path | str]) -> None:
        """Files reported created, changed or deleted (the client's
        ``workspace/didChangeWatchedFiles``): the next ``load`` that reads their directory
        (or the watcher, woken now, whichever comes first) lists it again and reads them,
        whatever their stamps say. A reported agent directory, or a folder above one, has
        each of its files checked. Other paths are ignored."""
        with self._lock:
            known = {os.fspath(agent_dir.directory): agent_dir for agent_dir in self._dirs}
            for path in paths:
                text = os.path.normpath(os.fspath(path))
                agent_dir = known.get(os.path.dirname(text))
                if agent_dir is not None:
                    self._reported.setdefault(agent_dir, set()).add(os.path.basename(text))
                    continue
                inside = text.rstrip(os.sep) + os.sep
                for directory, agent_dir in known.items():
                    if directory == text or directory.startswith(inside):
                        self._reported.setdefault(agent_dir, set()).add(EVERY_FILE)
        if self._reported:
            self._wake.set()

    def sweep(self) -> None:
        """Stat every file of every catalog used in the last ``IDLE_NS`` (what the watcher
        does each interval) and bring up to date what changed. The stats are made without
        the lock: a ``load`` can wait only while changed files are read."""
        env = self._env if self._env is not None else os.environ
        now = time.monotonic_ns()
        changed: dict[AgentDir, set[str]] = {}
        checked: set[AgentDir] = set()
        stale: list[Path] = []
        for cwd, loaded in list(self._catalogs.items()):
            if now - loaded.used_ns > IDLE_NS:
                continue
            dirs, problems = agent_dirs(cwd, self.home, self._plugins, env)
            for agent_dir in dirs:
                if agent_dir not in checked:
                    checked.add(agent_dir)
                    names = self._changed_names(agent_dir)
                    if names is not None:
                        changed[agent_dir] = names
            generations = tuple(
                cached.generation if (cached := self._dirs.get(d)) else -1 for d in dirs
            )
            if (
                tuple(dirs) != loaded.dirs
                or tuple(problems) != loaded.problems
                or generations != loaded.generations
                or any(agent_dir in changed or agent_dir in self._reported for agent_dir in dirs)
            ):
                stale.append(cwd)
        if stale:
            with self._lock:
                for agent_dir, names in changed.items():
                    self._reported.setdefault(agent_dir, set()).update(names)
                for cwd in stale:
                    self._load(cwd, env, "quick", sweeping=True)
            self._tell_renewals()
        if time.monotonic() - self._cache_saved_at >= CACHE_SAVE_SECONDS:
            with self._lock:
                if self._disk.save():
                    self._cache_saved_at = time.monotonic()
        self.sweep_count += 1

    @staticmethod
    def _tell(listeners: list[Callable[..., object]], *args: object) -> None:
        for listener in listeners:
            try:
                listener(*args)
            except Exception:
                log.exception("a listener of agent changes failed")

    def _changed_names(self, agent_dir: AgentDir) -> set[str] | None:
        """What a sweep should read again in one directory (``RELIST``: list it again), or
        None when nothing changed. No lock: it only reads the cache."""
        cached = self._dirs.get(agent_dir)
        if cached is None:
            return {RELIST}
        names = {name for name, entry in cached.files.items() if entry.racy}
        names.update(_restamped(agent_dir.directory, cached.files))
        if cached.racy_dir or _dir_stamp(agent_dir.directory) != cached.dir_stamp:
            names.add(RELIST)
        return names or None

    def _sweep_forever(self, interval: float) -> None:
        pause = interval
        while not self._stop.is_set():
            self._wake.wait(pause)
            self._wake.clear()
            if self._stop.is_set():
                return
            started = time.thread_time()  # the sweep's own CPU, not its waits for the GIL
            try:
                self.sweep()
            except Exception:  # a bug must not end the watching for good
                log.exception("sweeping the agent files failed")
            busy = (time.thread_time() - started) * SWEEP_DUTY
            pause = min(max(interval, busy), max(interval, MAX_SWEEP_PAUSE))


def _edited(
    previous: _Loaded,
    key: tuple[object, ...],
    dirs: list[AgentDir],
    problems: list[Problem],
    scanned: list[tuple[AgentDir, _CachedDir]],
) -> _Loaded | None:
    """``previous`` with the definitions of the files edited since put in place, when that
    is all that changed: the same directories and files, and each edited file still
    defining the agent of the same name (the one in the catalog) with the same problems.
    Else None: merge the layers again. An editor saving one file of 5,000 then costs a copy
    of the catalog's tuple instead of a merge and a sort that `@` completion requests
    waited behind (they share the GIL with the sweep; issue 30)."""
    if previous.dirs != tuple(dirs) or previous.problems != tuple(problems):
        return None
    agents = list(previous.catalog.agents)
    for (_, cached), generation in zip(scanned, previous.generations, strict=True):
        if cached.generation == generation:
            continue
        if cached.edits is None or cached.base != generation:
            return None
        for before, after in cached.edits:
            old, new = before.definition, after.definition
            if (
                old is None
                or new is None
                or old.name != new.name
                or before.problems != after.problems
                or before.name_line != after.name_line
            ):
                return None
            at = previous.position(old.name)
            if at is None or agents[at] is not old:
                return None  # another scope's or another file's definition wins
            agents[at] = new
    return dataclasses.replace(
        previous,
        key=key,
        catalog=AgentCatalog(tuple(agents), previous.catalog.problems),
        generations=tuple(cached.generation for _, cached in scanned),
    )


def _restamped(directory: Path, files: Mapping[str, _CachedFile]) -> list[str]:
    """The names among ``files`` whose inode or ctime (any write, rename or chmod changes
    it) is no longer the cached one. About 3 µs a file: ``stat`` relative to the
    directory where the system allows it, no paths built. Every ``STATS_PER_BREATH`` files
    the sweep lets go of the GIL for a moment (``BREATH_SECONDS``), so a request that
    arrives meanwhile runs at once instead of sharing the GIL with 15 ms of stats."""
    by_fd = os.stat in os.supports_dir_fd
    try:
        fd = os.open(directory, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0)) if by_fd else -1
    except OSError:
        return list(files)
    changed = []
    try:
        for index, (name, entry) in enumerate(files.items()):
            if index and not index % STATS_PER_BREATH:
                time.sleep(BREATH_SECONDS)
            try:
                st = os.stat(name, dir_fd=fd) if by_fd else os.stat(os.path.join(directory, name))
            except OSError:
                if _link_stamp(os.path.join(directory, name)) != entry.stamp:
                    changed.append(name)
                continue
            if st.st_ctime_ns != entry.stamp[1] or st.st_ino != entry.stamp[3]:
                changed.append(name)
    finally:
        if by_fd:
            os.close(fd)
    return changed


def _dir_stamp(directory: Path) -> tuple[int, int] | None:
    try:
        st = directory.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_ino


def _list_md(directory: Path) -> tuple[list[str], Problem | None]:
    """``*.md`` entries of a directory (not hidden ones), sorted by name; none if absent.

    Every such entry is listed, whatever it is (but a directory, which is read as a
    subdirectory): one that is not a readable regular file becomes a problem of its own
    when it is read, never a reason to drop the directory.
    """
    try:
        with os.scandir(directory) as entries:
            found = [
                entry.name
                for entry in entries
                if _is_agent_file(entry.name) and not entry.is_dir(follow_symlinks=False)
            ]
    except (FileNotFoundError, NotADirectoryError):
        return [], None
    except OSError as error:
        reason = error.strerror or str(error)
        return [], Problem(str(directory), None, f"cannot list the agent directory: {reason}")
    return sorted(found), None


def _is_agent_file(name: str) -> bool:
    return name.endswith(".md") and not name.startswith(".")


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


def _link_stamp(path: Path | str) -> Stamp | None:
    """The stamp of the directory entry itself (a symbolic link that leads nowhere), or
    None when the entry is gone."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino)


def _reason(error: OSError) -> str:
    if error.errno == errno.ELOOP:
        return "a loop of symbolic links"
    if isinstance(error, FileNotFoundError):
        return "a symbolic link to a file that does not exist"
    return error.strerror or str(error)
