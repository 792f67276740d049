"""Where agents come from, which one wins, plugins, and live reload with a cache."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from wave_ls.agents import AgentRegistry

BUILTINS = ["Explore", "general-purpose", "Plan"]


def write_agent(
    directory: Path, filename: str, name: str, description: str = "d", **keys: str
) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    lines = "".join(f"{key}: {value}\n" for key, value in keys.items())
    path = directory / filename
    path.write_text(
        f"---\nname: {name}\ndescription: {description}\n{lines}---\nPrompt of {name}\n"
    )
    return path


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def user_dir(home: Path) -> Path:
    return home / ".wave" / "agents"


def project_dir(project: Path) -> Path:
    return project / ".wave" / "agents"


def test_fresh_install_has_only_the_builtins(home: Path, project: Path) -> None:  # BI-1
    catalog = AgentRegistry(home=home, env={}).load(project)
    assert catalog.names() == BUILTINS
    assert catalog.problems == ()


def test_project_agent_is_discovered_and_usable(home: Path, project: Path) -> None:  # LOAD-1
    path = write_agent(project_dir(project), "tester.md", "test-runner", "Runs tests")
    defn = AgentRegistry(home=home, env={}).load(project).get("test-runner")
    assert defn is not None
    assert (defn.source, defn.path, defn.description) == ("project", path, "Runs tests")
    assert defn.system_prompt == "Prompt of test-runner"


def test_user_agent_is_available_in_every_project(home: Path, tmp_path: Path) -> None:  # LOAD-2
    write_agent(user_dir(home), "helper.md", "helper")
    registry = AgentRegistry(home=home, env={})
    for name in ("one", "two"):
        (tmp_path / name).mkdir()
        defn = registry.load(tmp_path / name).get("helper")
        assert defn is not None and defn.source == "user"


def test_home_comes_from_the_environment(
    home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:  # LOAD-2
    monkeypatch.setenv("HOME", str(home))
    write_agent(user_dir(home), "helper.md", "helper")
    assert AgentRegistry(env={}).load(project).get("helper") is not None


def test_project_wins_over_user_by_name(home: Path, project: Path) -> None:  # LOAD-3
    write_agent(user_dir(home), "a.md", "reviewer", "user version", model="user-model")
    write_agent(project_dir(project), "b.md", "reviewer", "project version")
    catalog = AgentRegistry(home=home, env={}).load(project)
    defn = catalog.get("reviewer")
    assert defn is not None
    assert (defn.source, defn.description, defn.model) == ("project", "project version", "inherit")
    assert catalog.names().count("reviewer") == 1
    assert catalog.problems == ()  # an override is not a problem


def test_user_plan_overrides_the_builtin_entirely(home: Path, project: Path) -> None:
    # LOAD-3, PLAN-4: the user's whitelist and omitAgentsMd apply, nothing of the built-in.
    write_agent(user_dir(home), "plan.md", "Plan", "My planner", tools="[Read, Grep]")
    defn = AgentRegistry(home=home, env={}).load(project).get("Plan")
    assert defn is not None
    assert defn.source == "user"
    assert (defn.description, defn.tools, defn.disallowed_tools) == (
        "My planner",
        ("Read", "Grep"),
        None,
    )
    assert defn.omit_agents_md is False
    assert defn.system_prompt == "Prompt of Plan"


def test_project_file_overrides_a_builtin_too(home: Path, project: Path) -> None:  # LOAD-3
    write_agent(project_dir(project), "explore.md", "Explore", "Project explorer")
    defn = AgentRegistry(home=home, env={}).load(project).get("Explore")
    assert defn is not None and defn.source == "project" and defn.description == "Project explorer"


def test_catalog_order_is_builtins_user_project_plugin_each_by_name(
    home: Path, project: Path, tmp_path: Path
) -> None:
    write_agent(user_dir(home), "1.md", "zeta")
    write_agent(user_dir(home), "2.md", "Alpha")
    write_agent(project_dir(project), "1.md", "middle")
    write_agent(tmp_path / "acme" / "agents", "x.md", "x")
    registry = AgentRegistry(home=home, env={})
    registry.register_plugin("acme", tmp_path / "acme")
    assert registry.load(project).names() == [*BUILTINS, "Alpha", "zeta", "middle", "acme:x"]


def test_cwd_that_is_home_counts_as_user(home: Path) -> None:
    write_agent(user_dir(home), "a.md", "mine")
    defn = AgentRegistry(home=home, env={}).load(home).get("mine")
    assert defn is not None and defn.source == "user"


def test_only_md_files_of_the_directory_and_its_subdirectories_are_read(
    home: Path, project: Path
) -> None:
    agents = project_dir(project)
    write_agent(agents, "real.md", "real")
    write_agent(agents, "notes.txt", "not-md")
    write_agent(agents, ".hidden.md", "hidden")
    write_agent(agents / "nested", "deep.md", "deep")
    write_agent(agents / ".git", "x.md", "in-a-hidden-dir")
    catalog = AgentRegistry(home=home, env={}).load(project)
    assert catalog.names() == [*BUILTINS, "deep", "real"]
    assert catalog.problems == ()
    # A directory named like an agent file is a subdirectory; a FIFO is reported, not
    # silently skipped (issue 12).
    write_agent(agents / "dir.md", "inner.md", "inner")
    os.mkfifo(agents / "pipe.md")
    catalog = AgentRegistry(home=home, env={}).load(project)
    assert catalog.names() == [*BUILTINS, "deep", "inner", "real"]
    assert [(Path(p.path).name, p.message) for p in catalog.problems] == [
        ("pipe.md", "this is a named pipe (FIFO), not a file; an agent file is a Markdown file")
    ]


# --------------------------------------------------------------------------- plugins


def test_plugin_from_home_plugins_dir(home: Path, project: Path) -> None:
    write_agent(home / ".wave" / "plugins" / "acme" / "agents", "r.md", "reviewer")
    (home / ".wave" / "plugins" / "no-agents").mkdir()  # a plugin without agents: fine
    catalog = AgentRegistry(home=home, env={}).load(project)
    defn = catalog.get("acme:reviewer")
    assert defn is not None and defn.source == "plugin"
    assert catalog.problems == ()


def test_plugins_from_wave_plugin_dirs(home: Path, project: Path, tmp_path: Path) -> None:
    write_agent(tmp_path / "p1" / "agents", "a.md", "Plan")  # no clash with the built-in
    write_agent(tmp_path / "p2" / "agents", "b.md", "b")
    env = {"WAVE_PLUGIN_DIRS": os.pathsep.join([str(tmp_path / "p1"), "", str(tmp_path / "p2")])}
    catalog = AgentRegistry(home=home, env=env).load(project)
    assert catalog.names() == [*BUILTINS, "p1:Plan", "p2:b"]
    plan = catalog.get("Plan")
    assert plan is not None and plan.source == "builtin"


def test_missing_plugin_dir_in_env_is_a_warning(home: Path, project: Path, tmp_path: Path) -> None:
    env = {"WAVE_PLUGIN_DIRS": str(tmp_path / "gone")}
    catalog = AgentRegistry(home=home, env=env).load(project)
    assert catalog.names() == BUILTINS
    assert [(p.path, p.line, p.message, p.severity) for p in catalog.problems] == [
        (
            str(tmp_path / "gone"),
            None,
            "WAVE_PLUGIN_DIRS names a plugin directory that does not exist",
            "warning",
        )
    ]


def test_plugin_directory_with_an_invalid_name(home: Path, project: Path) -> None:
    write_agent(home / ".wave" / "plugins" / "my plugin" / "agents", "a.md", "a")
    catalog = AgentRegistry(home=home, env={}).load(project)
    assert catalog.names() == BUILTINS
    assert catalog.problems[0].message == (
        "plugin name 'my plugin' (the directory name) is not valid; rename the directory to "
        "a letter, then letters, digits, '_' or '-'"
    )


def test_registered_plugin_replaces_a_discovered_one_of_the_same_name(
    home: Path, project: Path, tmp_path: Path
) -> None:
    write_agent(home / ".wave" / "plugins" / "acme" / "agents", "a.md", "old")
    write_agent(tmp_path / "elsewhere" / "agents", "a.md", "new")
    registry = AgentRegistry(home=home, env={})
    registry.register_plugin("acme", tmp_path / "elsewhere")
    assert registry.load(project).names() == [*BUILTINS, "acme:new"]


def test_register_plugin_rejects_invalid_names(home: Path) -> None:
    registry = AgentRegistry(home=home, env={})
    with pytest.raises(ValueError, match="plugin name 'a:b' is not valid"):
        registry.register_plugin("a:b", home)


# --------------------------------------------------------------------------- live reload


def test_edit_add_and_delete_show_up_without_restart(home: Path, project: Path) -> None:
    # MENTION-9: a deleted subagent no longer appears.
    registry = AgentRegistry(home=home, env={})
    path = write_agent(project_dir(project), "a.md", "alpha", "first")
    assert registry.load(project).names() == [*BUILTINS, "alpha"]
    write_agent(project_dir(project), "a.md", "alpha", "second, longer")
    defn = registry.load(project).get("alpha")
    assert defn is not None and defn.description == "second, longer"
    write_agent(project_dir(project), "b.md", "beta")
    assert registry.load(project).names() == [*BUILTINS, "alpha", "beta"]
    path.unlink()
    assert registry.load(project).names() == [*BUILTINS, "beta"]
    shutil.rmtree(project / ".wave")
    assert registry.load(project).names() == BUILTINS


def test_same_size_edit_within_the_same_instant_is_seen(home: Path, project: Path) -> None:
    registry = AgentRegistry(home=home, env={})
    path = write_agent(project_dir(project), "a.md", "alpha", "aaaa")
    stat = path.stat()
    registry.load(project)
    write_agent(project_dir(project), "a.md", "alpha", "bbbb")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same size, same mtime
    defn = registry.load(project).get("alpha")
    assert defn is not None and defn.description == "bbbb"


def test_unloaded_plugin_is_gone(home: Path, project: Path, tmp_path: Path) -> None:
    # MENTION-9: a plugin's subagents disappear when it is unloaded (WAVE_PLUGIN_DIRS no
    # longer names it: the variable is read at each load).
    write_agent(tmp_path / "acme" / "agents", "a.md", "helper")
    env = {"WAVE_PLUGIN_DIRS": str(tmp_path / "acme")}
    registry = AgentRegistry(home=home, env=env)
    assert "acme:helper" in registry.load(project).names()
    env["WAVE_PLUGIN_DIRS"] = ""
    assert "acme:helper" not in registry.load(project).names()


def test_registered_plugins_are_listed(home: Path, tmp_path: Path) -> None:
    registry = AgentRegistry(home=home, env={})
    registry.register_plugin("acme", tmp_path / "acme")
    assert registry.plugins() == {"acme": tmp_path / "acme"}


def test_removed_plugin_directory_is_gone(home: Path, project: Path) -> None:  # MENTION-9
    plugin = home / ".wave" / "plugins" / "acme"
    write_agent(plugin / "agents", "a.md", "helper")
    registry = AgentRegistry(home=home, env={})
    assert "acme:helper" in registry.load(project).names()
    shutil.rmtree(plugin)
    assert "acme:helper" not in registry.load(project).names()


# --------------------------------------------------------------------------- cache


def test_unchanged_tree_is_not_parsed_again(home: Path, project: Path) -> None:
    for i in range(5):
        write_agent(project_dir(project), f"{i}.md", f"agent-{i}")
    write_agent(user_dir(home), "u.md", "user-agent")
    registry = AgentRegistry(home=home, env={})
    first = registry.load(project)
    assert registry.parse_count == 6 + len(BUILTINS)
    again = registry.load(project)
    assert registry.parse_count == 6 + len(BUILTINS)
    assert again is first  # nothing changed: the very same catalog


def test_only_changed_files_are_parsed_again(home: Path, project: Path) -> None:
    for i in range(5):
        write_agent(project_dir(project), f"{i}.md", f"agent-{i}")
    registry = AgentRegistry(home=home, env={})
    registry.load(project)
    before = registry.parse_count
    write_agent(project_dir(project), "3.md", "agent-3", "changed")
    write_agent(project_dir(project), "9.md", "agent-9")
    registry.load(project)
    assert registry.parse_count == before + 2


def test_touch_without_a_content_change_is_not_parsed_again(home: Path, project: Path) -> None:
    path = write_agent(project_dir(project), "a.md", "alpha")
    registry = AgentRegistry(home=home, env={})
    first = registry.load(project)
    before = registry.parse_count
    later = time.time() + 5
    os.utime(path, (later, later))
    assert registry.load(project) is first
    assert registry.parse_count == before


def test_settled_files_are_trusted_by_their_stamp(home: Path, project: Path) -> None:
    path = write_agent(project_dir(project), "a.md", "alpha")
    past = time.time() - 3600
    os.utime(path, (past, past))
    registry = AgentRegistry(home=home, env={})
    first = registry.load(project)
    before = registry.parse_count
    for _ in range(3):
        assert registry.load(project) is first
    assert registry.parse_count == before


def test_one_registry_serves_several_projects(home: Path, tmp_path: Path) -> None:
    write_agent(project_dir(tmp_path / "p1"), "a.md", "one")
    write_agent(project_dir(tmp_path / "p2"), "a.md", "two")
    registry = AgentRegistry(home=home, env={})
    assert registry.load(tmp_path / "p1").names() == [*BUILTINS, "one"]
    assert registry.load(tmp_path / "p2").names() == [*BUILTINS, "two"]
    count = registry.parse_count
    assert registry.load(tmp_path / "p1").names() == [*BUILTINS, "one"]
    assert registry.parse_count == count
