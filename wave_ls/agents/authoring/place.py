"""Whether a document is an agent file the server loads, and from which directory (pure)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from wave_ls.agents.discovery import AgentDir, agent_dirs


@dataclass(frozen=True)
class AgentPlace:
    """Where an agent file sits: its directory (with source and plugin) and the folder
    whose catalog it belongs to (the project of a ``.wave/agents`` file, else the
    workspace root)."""

    path: Path
    agent_dir: AgentDir
    cwd: Path


def agent_place(
    path: Path,
    root: Path,
    home: Path,
    plugins: Mapping[str, Path],
    env: Mapping[str, str],
) -> AgentPlace | None:
    """The place of ``path`` when it is a ``*.md`` file in an agents directory the server
    reads or one of its subdirectories (``<project>/.wave/agents``,
    ``<project>/.claude/agents``, the same under ``$HOME``, a plugin's ``agents/``, the
    built-ins), else None. Any folder's ``.wave/agents`` (``.claude/agents``) counts: sessions
    may run in folders other than the workspace root. Files are judged in the catalog of
    ``root`` (the workspace), or of their own project when that is another folder."""
    if path.suffix != ".md" or path.name.startswith("."):
        return None
    parent = path.parent
    candidates = [root]
    project = _project_of(parent)
    if project is not None:
        candidates.append(project)  # another folder's project agents
    for cwd in candidates:
        dirs, _ = agent_dirs(cwd, home, plugins, env)
        for agent_dir in reversed(dirs):
            if _same_dir(agent_dir.directory, parent):
                return AgentPlace(path, agent_dir, cwd)
    return None


def _project_of(directory: Path) -> Path | None:
    """The folder ``X`` of a directory inside ``X/.wave/agents`` or ``X/.claude/agents``."""
    parts = directory.parts
    for index in range(len(parts) - 2, 0, -1):
        if parts[index] in (".wave", ".claude") and parts[index + 1] == "agents":
            return Path(*parts[:index])
    return None


def _same_dir(a: Path, b: Path) -> bool:
    if os.path.normcase(os.path.abspath(a)) == os.path.normcase(os.path.abspath(b)):
        return True
    try:
        return a.resolve() == b.resolve()
    except OSError:
        return False
