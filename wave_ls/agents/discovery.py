"""Where agent files live, and how the layers found there merge into one catalog (pure)."""

from __future__ import annotations

import os
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
from wave_ls.runtime.project_settings import read_settings_file

BUILTIN_DIR = Path(__file__).resolve().parent / "builtin"
PLUGIN_DIRS_ENV = "WAVE_PLUGIN_DIRS"
# Subdirectories of an agents directory hold agents too (as in Claude Code): this deep and
# this many at most, hidden ones and symbolic links to directories not followed.
MAX_SUBDIR_DEPTH = 6
MAX_SUBDIRS = 500


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
    ``.wave/settings.json`` leaves the ``.claude`` directories out. A plugin name comes from
    ``$HOME/.wave/plugins/<name>/``, then ``WAVE_PLUGIN_DIRS`` (directory name), then
    ``AgentRegistry.register_plugin``; a later one of the same name replaces an earlier one.
    """
    claude = claude_dirs_enabled(cwd, home)
    user_trees = [home / ".claude" / "agents"] if claude else []
    user_trees.append(home / ".wave" / "agents")
    project_trees = [cwd / ".claude" / "agents"] if claude else []
    project_trees.append(cwd / ".wave" / "agents")
    user_resolved = {tree.resolve() for tree in user_trees}
    dirs = [AgentDir("builtin", BUILTIN_DIR)]
    for tree in user_trees:
        dirs.extend(_tree("user", tree))
    for tree in project_trees:
        if tree.resolve() not in user_resolved:
            dirs.extend(_tree("project", tree))
    plugins, problems = plugin_dirs(home, registered, env)
    for name in sorted(plugins):
        dirs.extend(_tree("plugin", plugins[name] / "agents", name))
    return dirs, problems


def claude_dirs_enabled(cwd: Path, home: Path) -> bool:
    """Whether the ``.claude/agents`` directories are read: ``agents.claudeDirs`` of the
    project's ``.wave/settings.json``, else the user's; true when neither says."""
    for settings in (cwd / ".wave" / "settings.json", home / ".wave" / "settings.json"):
        data, _problem = read_settings_file(settings)
        agents = (data or {}).get("agents")
        if isinstance(agents, dict) and isinstance(agents.get("claudeDirs"), bool):
            return bool(agents["claudeDirs"])
    return True


def _tree(source: Source, top: Path, plugin: str | None = None) -> list[AgentDir]:
    """``top`` and its subdirectories (sorted, depth first), as directories of one tree;
    only ``top`` when it does not exist (its later creation is seen by its listing)."""
    out = [AgentDir(source, top, plugin, top)]
    pending = [(top, 0)]
    while pending and len(out) <= MAX_SUBDIRS:
        directory, depth = pending.pop()
        if depth >= MAX_SUBDIR_DEPTH:
            continue
        below = _subdirs_of_tree(directory)
        out.extend(AgentDir(source, sub, plugin, top) for sub in below)
        pending.extend((sub, depth + 1) for sub in reversed(below))
    return _depth_first(out[: MAX_SUBDIRS + 1])


# A directory's subdirectories by its (mtime, inode): every load lists the trees, and an
# agents directory may hold thousands of files (adding a subdirectory changes the mtime).
_SUBDIRS: dict[Path, tuple[tuple[int, int], list[Path]]] = {}
_RACY_NS = 2_000_000_000


def _subdirs_of_tree(directory: Path) -> list[Path]:
    try:
        st = os.stat(directory)
    except OSError:
        return []
    stamp = (st.st_mtime_ns, st.st_ino)
    known = _SUBDIRS.get(directory)
    if known is not None and known[0] == stamp:
        return known[1]
    below = _subdirs(directory, follow_links=False)
    if st.st_mtime_ns >= time.time_ns() - _RACY_NS:
        return below  # a change within the clock's granularity could hide: list it again
    if len(_SUBDIRS) > 4 * MAX_SUBDIRS:
        _SUBDIRS.clear()
    _SUBDIRS[directory] = (stamp, below)
    return below


def _depth_first(dirs: list[AgentDir]) -> list[AgentDir]:
    """The tree's directories in path order (a directory before its subdirectories)."""
    return sorted(dirs, key=lambda d: d.directory.parts)


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


def _subdirs(directory: Path, follow_links: bool = True) -> list[Path]:
    try:
        with os.scandir(directory) as entries:
            return sorted(
                Path(e.path)
                for e in entries
                if e.name[0] != "." and e.is_dir(follow_symlinks=follow_links)
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
