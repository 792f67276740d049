"""A watched agent registry (what the servers run, MENTION-9): files the client reports are
read at the next load without waiting for a sweep, a sweep prepares a renewed catalog
before any load hands it out, and the parse cache reaches the disk when watching stops."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.waiting import until_blocking
from wave_ls.agents import AgentCatalog, AgentRegistry
from wave_ls.agents.parse_cache import CACHE_FILE

AGENT = "---\nname: {name}\ndescription: {description}\n---\nBody.\n"
NEVER = 3600.0  # a sweep interval no test waits for: sweeps run only when a test calls them


def write(folder: Path, name: str, description: str, *, mtime: float | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.md"
    path.write_text(AGENT.format(name=name, description=description), encoding="utf-8")
    settled = path.stat().st_mtime - 3600 if mtime is None else mtime
    os.utime(path, (settled, settled))
    return path


@pytest.fixture
def registry(home: Path) -> Iterator[AgentRegistry]:
    registry = AgentRegistry(home)
    registry.watch(NEVER)
    yield registry
    registry.stop_watching()


def description(catalog: AgentCatalog, name: str) -> str | None:
    agent = catalog.get(name)
    return agent.description if agent else None


def test_a_reported_file_is_read_at_the_next_load(registry: AgentRegistry, project: Path) -> None:
    path = write(project / ".wave" / "agents", "alpha", "First words")
    assert description(registry.load(project), "alpha") == "First words"

    # Same size, same mtime: no stamp tells the change, only the client's event does.
    stamp = path.stat().st_mtime
    write(path.parent, "alpha", "Other words", mtime=stamp)
    assert description(registry.load(project), "alpha") == "First words"
    registry.files_changed([path])
    assert description(registry.load(project), "alpha") == "Other words"


def test_a_sweep_prepares_a_renewed_catalog_before_load_hands_it_out(
    registry: AgentRegistry, project: Path
) -> None:
    folder = project / ".wave" / "agents"
    write(folder, "alpha", "First words")
    registry.load(project)
    prepared: list[AgentCatalog] = []
    registry.on_change(prepared.append)

    write(folder, "alpha", "Second thoughts, longer")
    registry.sweep()
    catalog = registry.load(project)
    assert description(catalog, "alpha") == "Second thoughts, longer"
    assert prepared and prepared[-1] is catalog


def test_each_renewal_is_told_after_the_new_catalog_is_handed_out(
    registry: AgentRegistry, project: Path
) -> None:
    folder = project / ".wave" / "agents"
    path = write(folder, "alpha", "First words")
    told: list[str | None] = []
    registry.on_renewed(lambda: told.append(description(registry.load(project), "alpha")))
    registry.load(project)
    assert told == []  # a first load renews nothing

    write(folder, "alpha", "Second thoughts, longer")
    registry.sweep()
    assert told == ["Second thoughts, longer"]
    registry.sweep()
    registry.load(project)
    assert told == ["Second thoughts, longer"]  # nothing changed: nothing told

    write(folder, "alpha", "Third", mtime=path.stat().st_mtime)
    registry.files_changed([path])
    # The reported file also woke the watcher: a load renews the catalog, or answers from
    # the one it has while the sweep holds the lock (LOCK_PATIENCE_SECONDS) and the next
    # one shows it; whichever thread renewed the catalog tells.
    until_blocking(
        lambda: description(registry.load(project), "alpha") == "Third", 5, "the edit shown"
    )
    until_blocking(lambda: told[1:] == ["Third"], 5, "the listeners told of it")
    assert told[1:] == ["Third"]


def test_a_sweep_that_pauses_between_slices_of_stats_still_sees_every_edit(
    registry: AgentRegistry, project: Path
) -> None:
    # The sweep lets go of the GIL every STATS_PER_BREATH files; edits before, at and after
    # those points, with the same size and mtime (only ctime and content change), all show.
    from wave_ls.agents.registry import STATS_PER_BREATH

    folder = project / ".wave" / "agents"
    count = STATS_PER_BREATH * 2 + 10
    paths = [write(folder, f"agent-{i:04d}", f"Words {i:04d}") for i in range(count)]
    registry.load(project)
    edited = [0, STATS_PER_BREATH - 1, STATS_PER_BREATH, count - 1]
    for i in edited:
        stamp = paths[i].stat().st_mtime
        write(folder, f"agent-{i:04d}", f"Later {i:04d}", mtime=stamp)
    registry.sweep()
    catalog = registry.load(project)
    assert [description(catalog, f"agent-{i:04d}") for i in edited] == [
        f"Later {i:04d}" for i in edited
    ]
    assert description(catalog, "agent-0001") == "Words 0001"


def test_the_parse_cache_reaches_the_disk_when_watching_stops(
    registry: AgentRegistry, home: Path, project: Path
) -> None:
    folder = project / ".wave" / "agents"
    write(folder, "alpha", "First words")
    registry.load(project)
    registry.sweep()  # the first sweep writes the cache at once
    cache = home / CACHE_FILE
    assert "First words" in cache.read_text(encoding="utf-8")

    write(folder, "beta", "Written later")
    registry.sweep()  # within CACHE_SAVE_SECONDS of the last write: kept in memory
    assert "Written later" not in cache.read_text(encoding="utf-8")
    registry.stop_watching()
    entries = json.loads(cache.read_text(encoding="utf-8"))["entries"]
    assert any("Written later" in json.dumps(entry) for entry in entries)


def test_an_edited_file_renews_the_catalog_in_place_and_a_renamed_agent_merges_it_again(
    registry: AgentRegistry, project: Path
) -> None:
    # An editor saving one agent file of thousands: the catalog is the old one with that
    # definition replaced (the others are the same objects), not merged again from every
    # file; a file that now names another agent is a change of names, merged again.
    folder = project / ".wave" / "agents"
    for i in range(300):
        write(folder, f"agent-{i:03d}", f"Words {i:03d}")
    before = registry.load(project)
    merges = registry.merge_count

    write(folder, "agent-007", "Later words")
    registry.sweep()
    after = registry.load(project)
    assert description(after, "agent-007") == "Later words"
    assert after.names() == before.names()
    assert [a is b for a, b in zip(before.agents, after.agents, strict=True)].count(False) == 1
    assert registry.merge_count == merges

    (folder / "agent-008.md").write_text(AGENT.format(name="renamed", description="New name"))
    registry.sweep()
    renamed = registry.load(project)
    assert description(renamed, "renamed") == "New name"
    assert renamed.get("agent-008") is None
    assert description(renamed, "agent-007") == "Later words"
    assert registry.merge_count == merges + 1


def test_an_edit_in_place_keeps_what_wins_over_the_edited_file(
    registry: AgentRegistry, home: Path, project: Path
) -> None:
    # The user's `alpha` is shadowed by the project's; in one directory the first file by
    # name wins a duplicate name. Editing the file that loses changes neither winner.
    mine = home / ".wave" / "agents"
    ours = project / ".wave" / "agents"
    write(mine, "alpha", "The user's alpha")
    write(ours, "alpha", "The project's alpha")
    (ours / "b-dup.md").write_text(AGENT.format(name="dup", description="First by name"))
    (ours / "c-dup.md").write_text(AGENT.format(name="dup", description="Second by name"))
    catalog = registry.load(project)
    assert (description(catalog, "alpha"), description(catalog, "dup")) == (
        "The project's alpha",
        "First by name",
    )
    duplicate = [p for p in catalog.problems if p.path == str(ours / "c-dup.md")]
    assert duplicate and "duplicate name 'dup'" in duplicate[0].message

    write(mine, "alpha", "The user's alpha, edited")
    (ours / "c-dup.md").write_text(AGENT.format(name="dup", description="Second, edited"))
    registry.sweep()
    catalog = registry.load(project)
    assert (description(catalog, "alpha"), description(catalog, "dup")) == (
        "The project's alpha",
        "First by name",
    )
    assert [p for p in catalog.problems if p.path == str(ours / "c-dup.md")] == duplicate

    write(ours, "alpha", "The project's alpha, edited")
    (ours / "b-dup.md").write_text(AGENT.format(name="dup", description="First, edited"))
    registry.sweep()
    catalog = registry.load(project)
    assert (description(catalog, "alpha"), description(catalog, "dup")) == (
        "The project's alpha, edited",
        "First, edited",
    )


def test_an_edit_that_adds_or_removes_a_warning_shows_in_the_problems(
    registry: AgentRegistry, project: Path
) -> None:
    folder = project / ".wave" / "agents"
    path = write(folder, "alpha", "First words")
    write(folder, "beta", "Other words")
    assert registry.load(project).problems == ()

    path.write_text(
        AGENT.format(name="alpha", description="Words").replace(
            "---\nBody", "maxTurns: lots\n---\nBody"
        )
    )
    registry.sweep()
    catalog = registry.load(project)
    assert description(catalog, "alpha") == "Words"
    assert [(p.path, p.line, p.severity) for p in catalog.problems] == [(str(path), 4, "warning")]

    write(folder, "alpha", "Clean again")
    registry.sweep()
    catalog = registry.load(project)
    assert (description(catalog, "alpha"), catalog.problems) == ("Clean again", ())
