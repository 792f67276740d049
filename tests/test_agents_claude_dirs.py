"""Claude Code's folders (issue 24, point 1): ``.claude/agents`` of the project and of the
user, below ``.wave/agents`` of the same scope, and subdirectories of every agents
directory (LOAD-1, LOAD-2, LOAD-3)."""

from __future__ import annotations

import json
from pathlib import Path

from wave_ls.agents import AgentRegistry


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
