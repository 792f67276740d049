"""Claude Code's folders (issue 24, point 1): ``.claude/agents`` of the project and of the
user, below ``.wave/agents`` of the same scope, and subdirectories of every agents
directory (LOAD-1, LOAD-2, LOAD-3)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from wave_ls.agents import AgentRegistry
from wave_ls.agents.discovery import MAX_SUBDIR_DEPTH


def agent(folder: Path, file: str, name: str, description: str = "d") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / file
    path.write_text(f"---\nname: {name}\ndescription: {description}\n---\nbody\n")
    return path


def test_claude_folders_load_below_wave_folders_of_the_same_scope(
    home: Path, project: Path
) -> None:
    user_claude = agent(home / ".claude" / "agents", "u.md", "from-user-claude")
    agent(home / ".claude" / "agents", "shared.md", "shared", "user claude")
    agent(home / ".wave" / "agents", "shared.md", "shared", "user wave")
    agent(project / ".claude" / "agents", "p.md", "reviewer", "project claude")
    agent(project / ".claude" / "agents", "w.md", "writer", "project claude")
    agent(project / ".wave" / "agents", "w.md", "writer", "project wave")
    catalog = AgentRegistry(home=home, env={}).load(project)
    mine = catalog.get("from-user-claude")
    assert mine is not None and mine.source == "user" and mine.path == user_claude
    shared, reviewer, writer = (catalog.get(n) for n in ("shared", "reviewer", "writer"))
    assert shared is not None and shared.description == "user wave"  # .wave wins in a scope
    assert reviewer is not None and reviewer.source == "project"
    assert writer is not None and writer.description == "project wave"
    assert catalog.problems == ()
    listed = {item["name"]: item for item in catalog.to_json()["agents"]}
    assert listed["from-user-claude"]["path"] == str(user_claude)
    assert listed["reviewer"]["source"] == "project"


def test_a_project_claude_file_overrides_a_user_wave_file(home: Path, project: Path) -> None:
    agent(home / ".wave" / "agents", "x.md", "x", "user wave")
    agent(project / ".claude" / "agents", "x.md", "x", "project claude")
    defn = AgentRegistry(home=home, env={}).load(project).get("x")
    assert defn is not None and defn.description == "project claude"  # project over user


def test_files_in_subdirectories_load_named_by_their_frontmatter(home: Path, project: Path) -> None:
    deep = agent(project / ".claude" / "agents" / "sub" / "deeper", "file.md", "deep-one")
    agent(project / ".wave" / "agents" / "team", "a.md", "team-a")
    agent(home / ".wave" / "agents" / "mine", "b.md", "mine-b")
    registry = AgentRegistry(home=home, env={})
    catalog = registry.load(project)
    found = catalog.get("deep-one")
    assert found is not None and found.path == deep and found.source == "project"
    assert catalog.get("team-a") is not None and catalog.get("mine-b") is not None
    # A new subdirectory made later is seen at the next load.
    agent(project / ".wave" / "agents" / "later", "c.md", "later-c")
    assert registry.load(project).get("later-c") is not None


def test_a_duplicate_across_subdirectories_is_reported(home: Path, project: Path) -> None:
    root = project / ".wave" / "agents"
    first = agent(root / "a", "x.md", "same", "first")
    agent(root / "b", "x.md", "same", "second")
    catalog = AgentRegistry(home=home, env={}).load(project)
    defn = catalog.get("same")
    assert defn is not None and defn.description == "first"
    [problem] = catalog.problems
    assert problem.path.endswith("b/x.md")
    assert f"duplicate name 'same': {first} in the same agents directory" in problem.message


def test_claude_dirs_false_turns_the_claude_folders_off(home: Path, project: Path) -> None:
    agent(project / ".claude" / "agents", "p.md", "project-claude")
    agent(home / ".claude" / "agents", "u.md", "user-claude")
    registry = AgentRegistry(home=home, env={})
    assert {"project-claude", "user-claude"} <= set(registry.load(project).names())
    settings = home / ".wave" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text(json.dumps({"agents": {"claudeDirs": False}}))
    names = set(AgentRegistry(home=home, env={}).load(project).names())
    assert not {"project-claude", "user-claude"} & names
    # The project's setting is read before the user's.
    (project / ".wave").mkdir(exist_ok=True)
    (project / ".wave" / "settings.json").write_text(json.dumps({"agents": {"claudeDirs": True}}))
    names = set(AgentRegistry(home=home, env={}).load(project).names())
    assert {"project-claude", "user-claude"} <= names


def test_the_editor_places_files_of_claude_folders_and_subdirectories(
    home: Path, project: Path
) -> None:
    from wave_ls.agents.authoring.place import agent_place

    nested = agent(project / ".claude" / "agents" / "sub", "x.md", "x")
    user = agent(home / ".claude" / "agents", "u.md", "u")
    outside = agent(project / "docs", "y.md", "y")
    elsewhere = agent(project.parent / "other" / ".wave" / "agents" / "team", "z.md", "z")
    place = agent_place(nested, project, home, {}, {})
    assert place is not None and place.agent_dir.source == "project" and place.cwd == project
    user_place = agent_place(user, project, home, {}, {})
    assert user_place is not None and user_place.agent_dir.source == "user"
    assert agent_place(outside, project, home, {}, {}) is None
    other = agent_place(elsewhere, project, home, {}, {})
    assert other is not None and other.cwd == project.parent / "other"


def settle(root: Path) -> None:
    """Age every file and folder under ``root`` by an hour: the steady state, past the
    racy windows of the registry's caches."""
    past = time.time() - 3600
    for path in [root, *root.rglob("*")]:
        os.utime(path, (past, past), follow_symlinks=False)


def test_a_linked_subdirectory_loads_and_a_link_back_into_the_tree_is_no_loop(
    home: Path, project: Path, tmp_path: Path
) -> None:
    # A collection cloned elsewhere and linked in, as some collections suggest.
    collection = tmp_path / "collection"
    linked = agent(collection / "inner", "l.md", "linked-one")
    root = project / ".claude" / "agents"
    agent(root, "top.md", "top-one")
    (root / "awesome").symlink_to(collection)
    (root / "loop").symlink_to(root)  # would read the tree again and again
    (collection / "back").symlink_to(collection)
    catalog = AgentRegistry(home=home, env={}).load(project)
    found = catalog.get("linked-one")
    assert found is not None and found.path == root / "awesome" / "inner" / linked.name
    assert catalog.get("top-one") is not None
    assert catalog.problems == ()  # each file read once: no duplicate names


def test_a_link_named_like_an_agent_file_is_a_problem_not_a_folder(
    home: Path, project: Path, tmp_path: Path
) -> None:
    agent(tmp_path / "elsewhere", "e.md", "elsewhere-one")
    root = project / ".wave" / "agents"
    root.mkdir(parents=True)
    (root / "team.md").symlink_to(tmp_path / "elsewhere")
    catalog = AgentRegistry(home=home, env={}).load(project)
    assert catalog.get("elsewhere-one") is None
    [problem] = catalog.problems
    assert problem.path == str(root / "team.md") and "a directory" in problem.message


def test_the_depth_and_hidden_folders_are_limits(home: Path, project: Path) -> None:
    root = project / ".claude" / "agents"
    deepest = root.joinpath(*(f"d{i}" for i in range(MAX_SUBDIR_DEPTH)))
    agent(deepest, "ok.md", "deep-enough")
    agent(deepest / "more", "no.md", "too-deep")
    agent(root / ".archive", "old.md", "archived")
    names = AgentRegistry(home=home, env={}).load(project).names()
    assert "deep-enough" in names
    assert "too-deep" not in names and "archived" not in names


def test_files_load_in_path_order_whatever_order_they_are_made_in(
    home: Path, project: Path
) -> None:
    # Deterministic: a folder's own files first (by name), then its subfolders' (by path).
    root = project / ".wave" / "agents"
    for folder, file, description in [
        (root / "b", "x.md", "b/x"),
        (root / "a" / "z", "x.md", "a/z/x"),
        (root, "zz.md", "zz"),
        (root / "a", "y.md", "a/y"),
    ]:
        agent(folder, file, "same", description)
    catalog = AgentRegistry(home=home, env={}).load(project)
    defn = catalog.get("same")
    assert defn is not None and defn.description == "zz"
    ignored = [Path(p.path).relative_to(root).as_posix() for p in catalog.problems]
    assert ignored == ["a/y.md", "a/z/x.md", "b/x.md"]


def test_a_claude_folder_that_is_the_wave_folder_by_a_link_reads_each_file_once(
    home: Path, project: Path
) -> None:
    wave = project / ".wave" / "agents"
    path = agent(wave, "w.md", "writer")
    (project / ".claude").mkdir()
    (project / ".claude" / "agents").symlink_to(wave)
    catalog = AgentRegistry(home=home, env={}).load(project)
    defn = catalog.get("writer")
    assert defn is not None and defn.path == path  # the .wave one wins
    assert catalog.problems == ()


def test_the_setting_is_read_from_the_settings_layers_most_specific_first(
    home: Path, project: Path
) -> None:
    agent(project / ".claude" / "agents", "p.md", "project-claude")
    wave = project / ".wave"
    wave.mkdir()

    def loads() -> bool:
        return "project-claude" in AgentRegistry(home=home, env={}).load(project).names()

    (home / ".wave").mkdir()
    (home / ".wave" / "settings.json").write_text('{"agents": {"claudeDirs": false}}')
    assert not loads()
    # Not a boolean: that file says nothing about it, the user's still counts.
    (wave / "settings.json").write_text('{"agents": {"claudeDirs": "no"}}')
    assert not loads()
    (wave / "settings.json").write_text('{"agents": {"claudeDirs": true}}')
    assert loads()
    (wave / "settings.local.json").write_text('{"agents": {"claudeDirs": false}}')
    assert not loads()
    # A broken file is skipped (its feature reports it), never a reason to fail the load.
    (wave / "settings.local.json").write_text("{ not json")
    assert loads()


def test_a_watched_registry_follows_the_setting_and_new_subfolders(
    home: Path, project: Path
) -> None:
    agent(project / ".claude" / "agents" / "team", "a.md", "team-a")
    (project / ".wave").mkdir()
    settle(project)
    registry = AgentRegistry(home=home, env={})
    registry.watch(3600.0)  # sweeps only when the test calls one
    try:
        assert "team-a" in registry.load(project).names()
        settings = project / ".wave" / "settings.json"
        settings.write_text(json.dumps({"agents": {"claudeDirs": False}}))
        assert "team-a" not in registry.load(project).names()
        settings.write_text(json.dumps({"agents": {"claudeDirs": True}}))
        assert "team-a" in registry.load(project).names()
        agent(project / ".claude" / "agents" / "team" / "new", "b.md", "team-b")
        registry.sweep()
        assert "team-b" in registry.load(project).names()
    finally:
        registry.stop_watching()


def test_the_editor_judges_a_file_against_its_whole_tree(home: Path, project: Path) -> None:
    from wave_ls.agents.authoring import check_agent_text
    from wave_ls.agents.authoring.place import agent_place

    root = project / ".claude" / "agents"
    first = agent(root / "a", "x.md", "same", "first")
    second = agent(root / "b", "x.md", "same", "second")
    registry = AgentRegistry(home=home, env={})
    layers = registry.directories(project)
    loader = {p.path: p.message for p in registry.load(project).problems}

    def problems(path: Path) -> list[tuple[str, str]]:
        place = agent_place(path, project, home, {}, {})
        assert place is not None
        found = check_agent_text(path.read_text(), path, place.agent_dir, layers).problems
        return [(p.severity, p.message) for p in found]

    # The second is what wave/agents/list says of it; the first is told it wins.
    assert problems(second) == [("error", loader[str(second)])]
    assert problems(first) == [
        (
            "info",
            f"{second} in the same agents directory also defines 'same' and is ignored "
            "(this file comes first by path)",
        )
    ]
