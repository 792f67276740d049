"""The built-in subagents: Explore, Plan, general-purpose (SPEC section 10)."""

from __future__ import annotations

from pathlib import Path

import pytest

from wave_ls.agents import (
    ALL_TOOL_NAMES,
    AgentDefinition,
    AgentRegistry,
    parse_agent_file,
    resolve_tools,
    tool_summary,
)
from wave_ls.agents.discovery import BUILTIN_DIR

READ_ONLY_BLACKLIST = {
    "Agent",
    "Artifact",
    "ExitPlanMode",
    "Edit",
    "Write",
    "TaskCreate",
    "TaskGet",
    "TaskUpdate",
    "TaskList",
}


@pytest.fixture(scope="module")
def builtins(tmp_path_factory: pytest.TempPathFactory) -> dict[str, AgentDefinition]:
    empty = tmp_path_factory.mktemp("empty")
    catalog = AgentRegistry(home=empty, env={}).load(empty)
    assert catalog.problems == ()
    return {agent.name: agent for agent in catalog.agents}


def test_builtins_are_markdown_files_read_by_the_same_parser() -> None:  # BI-3
    files = sorted(path.name for path in BUILTIN_DIR.glob("*.md"))
    assert files == ["Explore.md", "Plan.md", "general-purpose.md"]
    for path in BUILTIN_DIR.glob("*.md"):
        defn, problems = parse_agent_file(path, path.read_text(encoding="utf-8"), "builtin")
        assert problems == [] and defn is not None and defn.name == path.stem


def test_fresh_install_lists_the_three_builtins(builtins: dict[str, AgentDefinition]) -> None:
    # BI-1, EXP-2: nothing else (no fast model) is needed.
    assert sorted(builtins) == ["Explore", "Plan", "general-purpose"]
    assert all(agent.source == "builtin" for agent in builtins.values())


@pytest.mark.parametrize("name", ["Explore", "Plan"])
def test_explore_and_plan_inherit_the_model_and_omit_memory(
    builtins: dict[str, AgentDefinition], name: str
) -> None:  # EXP-1, EXP-3
    agent = builtins[name]
    assert agent.model == "inherit"
    assert agent.omit_agents_md is True


@pytest.mark.parametrize("name", ["Explore", "Plan"])
def test_explore_and_plan_get_every_tool_but_the_editing_ones(
    builtins: dict[str, AgentDefinition], name: str
) -> None:  # EXP-4, EXP-5, PLAN-RO-1, PLAN-RO-2
    agent = builtins[name]
    assert agent.tools is None
    assert set(agent.disallowed_tools or ()) == READ_ONLY_BLACKLIST
    granted = resolve_tools(ALL_TOOL_NAMES, agent.tools, agent.disallowed_tools)
    assert {"WebFetch", "WebSearch", "Skill", "LSP", "Bash", "Read", "Grep", "Glob"} <= set(granted)
    assert not set(granted) & READ_ONLY_BLACKLIST
    summary = tool_summary(agent)
    assert summary.startswith("All except ") and "*" not in summary  # FM-4
    assert {"Edit", "Write", "Artifact", "ExitPlanMode"} == set(
        summary.removeprefix("All except ").split(", ")
    )


def test_explore_description_is_a_read_only_locator(builtins: dict[str, AgentDefinition]) -> None:
    # EXP-6
    description = builtins["Explore"].description.lower()
    assert "read-only search agent for locating code" in description
    for not_for in (
        "code review",
        "design-doc audits",
        "cross-file consistency checks",
        "open-ended analysis",
    ):
        assert not_for in description
    assert "do not use it for" in description


def test_explore_and_plan_prompts_demand_read_only_work(
    builtins: dict[str, AgentDefinition],
) -> None:
    # PLAN-RO-3: the prompt tells them Bash is for read-only commands only.
    for name in ("Explore", "Plan"):
        prompt = builtins[name].system_prompt
        assert "READ-ONLY" in prompt
        for command in ("mkdir", "touch", "rm", "`>`"):
            assert command in prompt


def test_plan_ends_with_critical_files(builtins: dict[str, AgentDefinition]) -> None:  # PLAN-5
    prompt = builtins["Plan"].system_prompt
    assert "3 to 5 files" in prompt
    assert prompt.splitlines()[-4] == "### Critical Files for Implementation"
    assert all(line.startswith("- path/to/") and " - " in line for line in prompt.splitlines()[-3:])


def test_plan_supports_perspectives(builtins: dict[str, AgentDefinition]) -> None:  # PLAN-3
    assert "perspective" in builtins["Plan"].description
    assert "perspective" in builtins["Plan"].system_prompt


def test_general_purpose_has_all_tools(builtins: dict[str, AgentDefinition]) -> None:
    agent = builtins["general-purpose"]
    assert (agent.tools, agent.disallowed_tools, agent.model) == (None, None, "inherit")
    assert agent.omit_agents_md is False
    assert tool_summary(agent) == "All tools"


def test_builtins_json_has_no_path(builtins: dict[str, AgentDefinition]) -> None:
    assert "path" not in builtins["Explore"].to_json()
    assert isinstance(builtins["Explore"].path, Path)
