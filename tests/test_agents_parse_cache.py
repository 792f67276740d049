"""The agent parse cache: a new process (a new registry) recalls settled files from disk
instead of parsing them again, and never recalls a file that changed."""

from __future__ import annotations

import os
from pathlib import Path

from wave_ls.agents import AgentRegistry
from wave_ls.agents.parse_cache import CACHE_FILE

AGENT = "---\nname: {name}\ndescription: Reviews {name}.\ntools: [Read, Grpe]\n---\nBody.\n"


def write(folder: Path, name: str, *, age_s: float = 3600) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.md"
    path.write_text(AGENT.format(name=name), encoding="utf-8")
    old = path.stat().st_mtime - age_s  # settled: older than the racy window
    os.utime(path, (old, old))
    return path


def test_a_new_registry_recalls_settled_files_from_disk(home: Path, project: Path) -> None:
    folder = project / ".wave" / "agents"
    write(folder, "alpha")
    write(folder, "beta")
    first = AgentRegistry(home)
    catalog = first.load(project)
    assert first.parse_count >= 2 and (home / CACHE_FILE).is_file()

    second = AgentRegistry(home)
    recalled = second.load(project)
    assert second.parse_count == 0
    assert [a.to_json() for a in recalled.agents] == [a.to_json() for a in catalog.agents]
    assert [p.to_json() for p in recalled.problems] == [p.to_json() for p in catalog.problems]
    assert any("did you mean 'Grep'" in p.message for p in recalled.problems)

    # A changed file is parsed again; a just-written one is never recalled.
    path = write(folder, "beta")
    path.write_text(AGENT.format(name="gamma"), encoding="utf-8")
    third = AgentRegistry(home)
    assert third.load(project).get("gamma") is not None
    assert third.parse_count == 1


def test_a_broken_cache_file_is_ignored(home: Path, project: Path) -> None:
    write(project / ".wave" / "agents", "alpha")
    cache = home / CACHE_FILE
    cache.parent.mkdir(parents=True)
    cache.write_text("{not json")
    registry = AgentRegistry(home)
    assert registry.load(project).get("alpha") is not None
    assert registry.parse_count >= 1
