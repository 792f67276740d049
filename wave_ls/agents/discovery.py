"""Where agent files live, and how the layers found there merge into one catalog (pure)."""

from __future__ import annotations

import functools
import os
import stat
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from wave_ls.agents.definition import (
    SOURCE_ORDER,
    AgentCatalog,
    AgentDefinition,
    Problem,
    Source,
)
from wave_ls.agents.parse import NAME_PATTERN, NAME_RULE
from wave_ls.runtime.project_settings import load_layers, settings_files

BUILTIN_DIR = Path(__file__).resolve().parent / "builtin"
PLUGIN_DIRS_ENV = "WAVE_PLUGIN_DIRS"
# Subdirectories of an agents directory hold agents too (as in Claude Code): this deep and
# this many at most, hidden ones left out, a link to a directory of the same tree not
# followed (a loop).
MAX_SUBDIR_DEPTH = 6
MAX_SUBDIRS = 500
Identity = tuple[int, int]  # (st_dev, st_ino) of a directory


@dataclass(frozen=True)
class AgentDir:
    """One directory of ``*.md`` agent files and what its agents are."""

    source: Source
    directory: Path
    plugin: str | None = None
    # The agents directory this one is, or is under: one name per tree (duplicates are
    # reported across its subdirectories as within one directory).
    tree: Path | None = None


@dataclass(frozen=True)
class ParsedFile:
    """The outcome of one file: its definition (None when skipped), problems, and the
    line of its ``name:`` key (for duplicate reports)."""

    path: Path
    definition: AgentDefinition | None
    problems: tuple[Problem, ...]
    name_line: int | None = None


def agent_dirs(
    cwd: Path,
    home: Path,
    registered: Mapping[str, Path],
    env: Mapping[str, str],
) -> tuple[list[AgentDir], list[Problem]]:
    """The directories to read, lowest precedence first, and problems with plugin dirs.

    Built-ins, then the user's ``$HOME/.claude/agents`` and ``$HOME/.wave/agents``, then the
    project's ``<cwd>/.claude/agents`` and ``<cwd>/.wave/agents`` (skipped when they are the
    user's), then each plugin's ``agents/`` by plugin name; each with its subdirectories
    right after it. ``{"agents": {"claudeDirs": false}}`` in the project's or the user's
    settings leaves the ``.claude`` directories out. A plugin name comes from
    ``$HOME/.wave/plugins/<name>/``, then ``WAVE_PLUGIN_DIRS`` (directory name), then
    ``AgentRegistry.register_plugin``; a later one of the same name replaces an earlier one.
    Called at every load: a few ``stat`` calls when nothing changed.
    """
    claude = claude_dirs_enabled(cwd, home)
    dirs = [AgentDir("builtin", BUILTIN_DIR)]
    user_tops: set[Path] = set()
    user_ids: set[Identity] = set()
    for top in _tops(home, claude):
        identity, tree = _tree("user", top)
        user_tops.add(top)
        if identity is not None:
            user_ids.add(identity)
        dirs.extend(tree)
    for top in _tops(cwd, claude):
        if top in user_tops:
            continue
        identity, tree = _tree("project", top)
        if identity is None or identity not in user_ids:  # else the user's, by another path
            dirs.extend(tree)
    plugins, problems = plugin_dirs(home, registered, env)
    for name in sorted(plugins):
        dirs.extend(_tree("plugin", plugins[name] / "agents", name)[1])
    return dirs, problems


@functools.lru_cache(maxsize=256)  # paths cost more to build than the stats they are for
def _tops(base: Path, claude: bool) -> tuple[Path, ...]:
    """The agents directories of one scope, lower precedence first."""
    wave = Path(base, ".wave", "agents")
    return (Path(base, ".claude", "agents"), wave) if claude else (wave,)


_settings_files = functools.lru_cache(maxsize=256)(settings_files)


# The answer of ``claude_dirs_enabled`` by (cwd, home), with the settings files' stamps.
_CLAUDE_DIRS: dict[tuple[Path, Path], tuple[tuple[object, ...], bool]] = {}


def claude_dirs_enabled(cwd: Path, home: Path) -> bool:
    """Whether the ``.claude/agents`` directories are read: ``agents.claudeDirs`` (a
    boolean) of the most specific settings file that has it (``load_layers``: the project's,
    then the user's); true when none does. Read again only when a file's stamp moved."""
    stamps = tuple(_file_stamp(path) for path in _settings_files(cwd, home))
    known = _CLAUDE_DIRS.get((cwd, home))
    if known is not None and known[0] == stamps:
        return known[1]
    layers, _warnings = load_layers(cwd, home)  # each feature reports the broken files
    enabled = next(
        (
            agents["claudeDirs"]
            for layer in layers
            if isinstance(agents := layer.data.get("agents"), dict)
            and isinstance(agents.get("claudeDirs"), bool)
        ),
        True,
    )
    recent = time.time_ns() - _RACY_NS
    racy = any(s is not None and s[0] >= recent for s in stamps)
    if not racy:  # an edit within the clock's granularity could hide behind the same stamp
        if len(_CLAUDE_DIRS) > MAX_SUBDIRS:
            _CLAUDE_DIRS.clear()
        _CLAUDE_DIRS[(cwd, home)] = (stamps, enabled)
    return enabled


def _file_stamp(path: Path) -> tuple[int, int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_mtime_ns, st.st_ctime_ns, st.st_size, st.st_ino


def _tree(
    source: Source, top: Path, plugin: str | None = None
) -> tuple[Identity | None, list[AgentDir]]:
    """The identity of ``top`` (None when it does not exist) and ``top`` with its
    subdirectories in path order (a directory before its subdirectories, each sorted), as
    directories of one tree; only ``top`` when it does not exist (its later creation is
    seen by its listing). A symbolic link to a directory is followed, unless that directory
    was reached already in this tree (a loop, or a second link to it)."""
    top_id, below = _listing(top, True)
    seen: set[Identity | None] = {top_id}
    out = [AgentDir(source, top, plugin, top)]
    pending = [(sub, 1) for sub in reversed(below)]
    while pending and len(out) <= MAX_SUBDIRS:
        directory, depth = pending.pop()
        identity, below = _listing(directory, depth < MAX_SUBDIR_DEPTH)
        if identity is None or identity in seen:
            continue  # gone meanwhile, or a link to a directory read already
        seen.add(identity)
        out.append(AgentDir(source, directory, plugin, top))
        pending.extend((sub, depth + 1) for sub in reversed(below))
    return top_id, out


# A directory's subdirectories by its (mtime, inode): every load lists the trees, and an
# agents directory may hold thousands of files (adding a subdirectory changes the mtime).
_SUBDIRS: dict[Path, tuple[tuple[int, int, int], list[Path]]] = {}
_RACY_NS = 2_000_000_000


def _listing(directory: Path, children: bool) -> tuple[Identity | None, list[Path]]:
    """The identity of a directory (following links; None when it is not one) and, when
    ``children``, its subdirectories (sorted; hidden ones and links named ``*.md`` left
    out: such a link is read, and reported, as a file)."""
    try:
        st = os.stat(directory)
    except OSError:
        return None, []
    if not stat.S_ISDIR(st.st_mode):
        return None, []
    identity = (st.st_dev, st.st_ino)
    if not children:
        return identity, []
    stamp = (st.st_mtime_ns, st.st_ino, st.st_dev)
    known = _SUBDIRS.get(directory)
    if known is not None and known[0] == stamp:
        return identity, known[1]
    below = _subdirs(directory, follow_links=True, md_links=False)
    if st.st_mtime_ns >= time.time_ns() - _RACY_NS:
        return identity, below  # a change within the clock's granularity could hide
    if len(_SUBDIRS) > 4 * MAX_SUBDIRS:
        _SUBDIRS.clear()
    _SUBDIRS[directory] = (stamp, below)
    return identity, below


def plugin_dirs(
    home: Path, registered: Mapping[str, Path], env: Mapping[str, str]
) -> tuple[dict[str, Path], list[Problem]]:
    """Plugin name -> plugin directory, from the three places in precedence order."""
    found: dict[str, Path] = {}
    problems: list[Problem] = []
    for directory in _subdirs(home / ".wave" / "plugins"):
        if (directory / "agents").is_dir():
            _add_plugin(found, problems, directory.name, directory)
    for entry in env.get(PLUGIN_DIRS_ENV, "").split(os.pathsep):
        if not entry.strip():
            continue
        directory = Path(entry.strip()).expanduser()
        if not directory.is_dir():
            problems.append(
                Problem(
                    str(directory),
                    None,
                    f"{PLUGIN_DIRS_ENV} names a plugin directory that does not exist",
                    "warning",
                )
            )
            continue
        _add_plugin(found, problems, directory.name, directory)
    for name, directory in registered.items():
        if not directory.is_dir():
            problems.append(
                Problem(
                    str(directory),
                    None,
                    f"plugin '{name}': the registered directory does not exist",
                    "warning",
                )
            )
            continue
        found[name] = directory
    return found, problems


def _add_plugin(found: dict[str, Path], problems: list[Problem], name: str, path: Path) -> None:
    if NAME_PATTERN.match(name):
        found[name] = path
    else:
        problems.append(
            Problem(
                str(path),
                None,
                f"plugin name '{name}' (the directory name) is not valid; rename the "
                f"directory to {NAME_RULE}",
            )
        )


def _subdirs(directory: Path, follow_links: bool = True, md_links: bool = True) -> list[Path]:
    try:
        with os.scandir(directory) as entries:
            return sorted(
                Path(e.path)
                for e in entries
                if e.name[0] != "."
                and e.is_dir(follow_symlinks=follow_links)
                and (md_links or not (e.name.endswith(".md") and e.is_symlink()))
            )
    except OSError:
        return []


def dedupe_directory(files: Sequence[ParsedFile]) -> tuple[list[AgentDefinition], list[Problem]]:
    """The definitions of one directory, first (by sorted file name) winning a duplicate
    name; ``files`` must already be in that order. Every problem, in file order."""
    kept: dict[str, AgentDefinition] = {}
    problems: list[Problem] = []
    for parsed in files:
        problems.extend(parsed.problems)
        defn = parsed.definition
        if defn is None:
            continue
        first = kept.get(defn.name)
        if first is None:
            kept[defn.name] = defn
            continue
        if first.path is not None and first.path.parent != parsed.path.parent:
            where = f"{first.path} in the same agents directory already defines it (the first "
            where += "file by path wins)"
        else:
            first_file = first.path.name if first.path else "another file"
            where = f"{first_file} in the same directory already defines it (the first file "
            where += "by name wins)"
        problems.append(
            Problem(
                str(parsed.path),
                parsed.name_line,
                f"duplicate name '{defn.name}': {where}; this file is ignored",
            )
        )
    return list(kept.values()), problems


def merge_layers(
    layers: Iterable[tuple[Sequence[AgentDefinition], Sequence[Problem]]],
    extra_problems: Sequence[Problem] = (),
) -> AgentCatalog:
    """One catalog from layers given lowest precedence first: a later definition replaces
    an earlier one of the same name entirely (LOAD-3, PLAN-4)."""
    by_name: dict[str, AgentDefinition] = {}
    problems: list[Problem] = list(extra_problems)
    for definitions, layer_problems in layers:
        problems.extend(layer_problems)
        for defn in definitions:
            by_name.pop(defn.name, None)
            by_name[defn.name] = defn
    agents = sorted(
        by_name.values(), key=lambda d: (SOURCE_ORDER.index(d.source), d.name.casefold(), d.name)
    )
    return AgentCatalog(tuple(agents), tuple(problems))
