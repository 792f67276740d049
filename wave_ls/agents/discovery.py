"""Where agent files live, and how the layers found there merge into one catalog (pure)."""

from __future__ import annotations

import os
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

BUILTIN_DIR = Path(__file__).resolve().parent / "builtin"
PLUGIN_DIRS_ENV = "WAVE_PLUGIN_DIRS"


@dataclass(frozen=True)
class AgentDir:
    """One directory of ``*.md`` agent files and what its agents are."""

    source: Source
    directory: Path
    plugin: str | None = None


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

    Built-ins, then ``$HOME/.wave/agents``, then ``<cwd>/.wave/agents`` (skipped when it is
    the user directory), then each plugin's ``agents/`` by plugin name. A plugin name comes
    from ``$HOME/.wave/plugins/<name>/``, then ``WAVE_PLUGIN_DIRS`` (directory name), then
    ``AgentRegistry.register_plugin``; a later one of the same name replaces an earlier one.
    """
    user = home / ".wave" / "agents"
    project = cwd / ".wave" / "agents"
    dirs = [AgentDir("builtin", BUILTIN_DIR), AgentDir("user", user)]
    if project.resolve() != user.resolve():
        dirs.append(AgentDir("project", project))
    plugins, problems = plugin_dirs(home, registered, env)
    dirs.extend(AgentDir("plugin", plugins[name] / "agents", name) for name in sorted(plugins))
    return dirs, problems


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


def _subdirs(directory: Path) -> list[Path]:
    try:
        with os.scandir(directory) as entries:
            return sorted(Path(e.path) for e in entries if e.is_dir() and e.name[0] != ".")
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
        first_file = first.path.name if first.path else "another file"
        problems.append(
            Problem(
                str(parsed.path),
                parsed.name_line,
                f"duplicate name '{defn.name}': {first_file} in the same directory already "
                "defines it (the first file by name wins); this file is ignored",
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
