"""The agent parse cache: a new process (a new registry) recalls settled files from disk
instead of parsing them again, and never recalls a file that changed."""

from __future__ import annotations

import json
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


def test_each_file_keeps_one_entry_however_often_it_is_saved(home: Path, project: Path) -> None:
    # An editor saving an agent file again and again: its entry is replaced each time, so
    # the cache holds one per file (it grew by one per save, and a full one took ~0.5 s
    # to load at every start); a new registry recalls the last outcome.
    folder = project / ".wave" / "agents"
    write(folder, "alpha")
    path = write(folder, "beta")
    for n in range(5):
        path.write_text(AGENT.format(name=f"beta{n}"), encoding="utf-8")
        os.utime(path, (path.stat().st_mtime - 3600,) * 2)
        AgentRegistry(home).load(project)
    saved = json.loads((home / CACHE_FILE).read_text(encoding="utf-8"))["entries"]
    project_files = sorted(key[0] for key, _ in saved if key[0].startswith(str(folder)))
    assert project_files == [str(folder / "alpha.md"), str(path)]

    again = AgentRegistry(home)
    assert again.load(project).get("beta4") is not None
    assert again.parse_count == 0
