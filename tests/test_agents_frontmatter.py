"""Parsing one agent file: typed known keys, block scalars, list spellings, switches."""

from __future__ import annotations

from pathlib import Path

import pytest
import strictyaml

from wave_ls.agents import AgentDefinition, Problem, parse_agent_file

PATH = Path("/project/.wave/agents/agent.md")


def parse(front: str, body: str = "You are a test agent.") -> tuple[AgentDefinition, list[Problem]]:
    """Parse a file made of ``front`` (YAML lines) and ``body``; it must give a definition."""
    defn, problems = parse_agent_file(PATH, f"---\n{front}---\n{body}\n", "project")
    assert defn is not None, problems
    return defn, problems


def test_minimal_file_gives_definition_with_defaults() -> None:  # LOAD-1
    defn, problems = parse("name: test-runner\ndescription: Runs the tests\n")
    assert problems == []
    assert defn.name == "test-runner"
    assert defn.description == "Runs the tests"
    assert defn.system_prompt == "You are a test agent."
    assert defn.model == "inherit"
    assert defn.tools is None and defn.disallowed_tools is None
    assert defn.isolation is None
    assert defn.omit_agents_md is False
    assert defn.source == "project" and defn.path == PATH
    assert dict(defn.extra) == {}


def test_body_after_closing_delimiter_is_the_stripped_system_prompt() -> None:
    defn, _ = parse(
        "name: a\ndescription: d\n", body="\n\n  First line.\n\n- item: x\n---\nmore\n\n"
    )
    assert defn.system_prompt == "First line.\n\n- item: x\n---\nmore"


def test_crlf_line_endings_and_bom_are_accepted() -> None:
    text = "\ufeff---\r\nname: a\r\ndescription: >-\r\n  one\r\n  two\r\n---\r\nBody\r\n"
    defn, problems = parse_agent_file(PATH, text, "user")
    assert problems == []
    assert defn is not None
    assert (defn.description, defn.system_prompt, defn.source) == ("one two", "Body", "user")


# --------------------------------------------------------------------------- block scalars

BLOCK_SCALARS = {
    # indicator: (YAML value lines, exact value, description as shown = stripped value)
    ">": ("  Line one\n  line two\n\n  Para two\n", "Line one line two\nPara two\n"),
    ">-": ("  Line one\n  line two\n\n  Para two\n", "Line one line two\nPara two"),
    ">+": ("  Line one\n  line two\n\n  Para two\n\n", "Line one line two\nPara two\n\n"),
    "|": ("  Line one\n  line two\n\n  Para two\n", "Line one\nline two\n\nPara two\n"),
    "|-": ("  Line one\n  line two\n\n  Para two\n", "Line one\nline two\n\nPara two"),
    "|+": ("  Line one\n  line two\n\n", "Line one\nline two\n\n"),
    "|2": ("    indented\n  base\n", "  indented\nbase\n"),
    "|2-": ("    indented\n  base\n", "  indented\nbase"),
    ">2-": ("   more\n  next\n  last\n", " more\nnext last"),
    "|-4": ("      deep\n    flat\n", "  deep\nflat"),
}


@pytest.mark.parametrize("indicator", list(BLOCK_SCALARS))
def test_block_scalar_gives_folded_or_kept_text_never_the_indicator(indicator: str) -> None:
    # LOAD-6: the values are the folded/kept text; an unknown key keeps it exactly,
    # known text keys (description) are shown stripped.
    lines, exact = BLOCK_SCALARS[indicator]
    defn, problems = parse(
        f"name: a\ndescription: {indicator}\n{lines}notes: {indicator}\n{lines}model: m\n"
    )
    assert problems == []
    assert defn.description == exact.strip()
    assert defn.extra["notes"] == exact
    assert defn.model == "m"
    assert not defn.description.startswith((">", "|"))


@pytest.mark.parametrize("indicator", list(BLOCK_SCALARS))
def test_block_scalar_values_equal_strictyaml_dirty_load(indicator: str) -> None:
    # LOAD-6: same engine, same text as strictyaml's own loader.
    lines, _ = BLOCK_SCALARS[indicator]
    front = f"name: a\ndescription: {indicator}\n{lines}notes: {indicator}\n{lines}"
    expected = strictyaml.dirty_load(front, allow_flow_style=True).data
    defn, _ = parse(front)
    assert defn.extra["notes"] == expected["notes"]
    assert defn.description == expected["description"].strip()


def test_continuation_lines_of_a_block_scalar_never_become_keys() -> None:  # LOAD-6
    defn, problems = parse(
        "name: a\n"
        "description: >-\n"
        "  Use when: the tests fail.\n"
        "  tools: this is text, not a key\n"
        "  model: neither is this\n"
        "model: real-model\n"
    )
    assert problems == []
    assert defn.description == (
        "Use when: the tests fail. tools: this is text, not a key model: neither is this"
    )
    assert defn.tools is None
    assert defn.model == "real-model"


def test_quoted_and_plain_multiline_values() -> None:
    defn, _ = parse('name: a\ndescription: "Quoted: with colon\\nand escape"\nmodel: gpt-x\n')
    assert defn.description == "Quoted: with colon\nand escape"
    defn, _ = parse("name: a\ndescription: plain text\n  continued here\n")
    assert defn.description == "plain text continued here"


# --------------------------------------------------------------------------- tool lists


@pytest.mark.parametrize(
    "spelling",
    [
        "[Edit, Write]",
        "Edit, Write",
        "\n  - Edit\n  - Write",
        "['Edit', \"Write\"]",
        "Edit,Write,",
        "[Edit, Write, Edit]",
    ],
)
def test_three_list_spellings_give_the_same_tools(spelling: str) -> None:  # FM-2
    defn, problems = parse(f"name: a\ndescription: d\ndisallowedTools: {spelling}\n")
    assert problems == []
    assert defn.disallowed_tools == ("Edit", "Write")
    defn, _ = parse(f"name: a\ndescription: d\ntools: {spelling}\n")
    assert defn.tools == ("Edit", "Write")


def test_tools_star_means_all_and_empty_means_unset() -> None:
    assert parse('name: a\ndescription: d\ntools: "*"\n')[0].tools is None
    assert parse("name: a\ndescription: d\ntools: [Read, '*']\n")[0].tools is None
    assert parse("name: a\ndescription: d\ntools:\n")[0].tools is None
    assert parse("name: a\ndescription: d\ntools: ''\n")[0].tools is None
    # An explicit empty list is a whitelist of nothing.
    assert parse("name: a\ndescription: d\ntools: []\n")[0].tools == ()


def test_unknown_tool_names_are_kept_reported_as_warnings_and_load_goes_on() -> None:  # FM-5
    defn, problems = parse(
        "name: a\ndescription: d\ntools: [Read, Reed]\ndisallowedTools: [Edit, Frobnicate]\n"
    )
    assert defn.tools == ("Read", "Reed")
    assert defn.disallowed_tools == ("Edit", "Frobnicate")
    assert [(p.line, p.severity) for p in problems] == [(4, "warning"), (5, "warning")]
    assert problems[0].message == "tools: unknown tool 'Reed' ignored (did you mean 'Read'?)"
    assert problems[1].message == "disallowedTools: unknown tool 'Frobnicate' ignored"


def test_never_given_tools_in_a_whitelist_are_reported() -> None:  # section 7 "Always"
    defn, problems = parse("name: a\ndescription: d\ntools: Read, Agent(x, y), TaskCreate\n")
    assert defn.tools == ("Read",)
    assert [(p.severity, p.message) for p in problems] == [
        (
            "info",
            "tools: not given to a subagent: Agent(x, y) (subagents cannot delegate), "
            "TaskCreate (a subagent never gets the task list)",
        )
    ]
    # In a blacklist they are simply redundant: no warning.
    assert parse("name: a\ndescription: d\ndisallowedTools: [Agent, TaskList]\n")[1] == []


# --------------------------------------------------------------------------- switches


@pytest.mark.parametrize("value", ["true", "True", "TRUE"])
@pytest.mark.parametrize("key", ["omitAgentsMd", "omitClaudeMd"])
def test_omit_agents_md_is_on_for_the_boolean_true_and_its_alias(key: str, value: str) -> None:
    defn, problems = parse(f"name: a\ndescription: d\n{key}: {value}\n")  # FM-1, EXP-3
    assert defn.omit_agents_md is True
    assert problems == []


@pytest.mark.parametrize("value", ["false", "False", "FALSE"])
def test_omit_agents_md_false_is_off_without_a_warning(value: str) -> None:
    defn, problems = parse(f"name: a\ndescription: d\nomitAgentsMd: {value}\n")
    assert defn.omit_agents_md is False
    assert problems == []


@pytest.mark.parametrize("value", ['"true"', "'true'", "yes", "on", "1", "y", "|\n  true", ""])
def test_omit_agents_md_anything_but_the_boolean_true_is_off_with_a_warning(value: str) -> None:
    # Only the YAML boolean true turns it on (a quoted "true" is a string, "yes" is not
    # a YAML 1.2 boolean); the author is told, since memory then stays loaded.
    defn, problems = parse(f"name: a\ndescription: d\nomitAgentsMd: {value}\n")
    assert defn.omit_agents_md is False
    assert len(problems) == 1
    assert problems[0].severity == "warning" and problems[0].line == 4
    assert "is not the boolean true" in problems[0].message
    assert "omitAgentsMd: true" in problems[0].message


def test_either_alias_being_true_turns_it_on() -> None:
    defn, _ = parse("name: a\ndescription: d\nomitAgentsMd: false\nomitClaudeMd: true\n")
    assert defn.omit_agents_md is True


@pytest.mark.parametrize("value", ["worktree", "none", "container", "'worktree'"])
def test_isolation_is_kept_as_written_without_error(value: str) -> None:
    defn, problems = parse(f"name: a\ndescription: d\nisolation: {value}\n")
    assert defn.isolation == value.strip("'")
    assert defn.worktree_isolated == (defn.isolation == "worktree")
    assert problems == []


def test_model_is_kept_and_defaults_to_inherit() -> None:  # LOAD-5, EXP-1
    assert parse("name: a\ndescription: d\nmodel: qwen3-coder\n")[0].model == "qwen3-coder"
    assert parse("name: a\ndescription: d\nmodel:\n")[0].model == "inherit"
    assert parse("name: a\ndescription: d\n")[0].model == "inherit"


def test_unknown_keys_are_kept_as_text() -> None:
    defn, problems = parse(
        "name: a\ndescription: d\ninitialPrompt: go\nversion: 5\n"
        "tags: [lint, test]\nowner:\n  team: core\n"
    )
    assert problems == []
    assert dict(defn.extra) == {
        "initialPrompt": "go",
        "version": "5",
        "tags": "[lint, test]",
        "owner": "team: core",
    }


def test_plugin_agents_are_named_with_the_plugin_prefix() -> None:
    text = "---\nname: reviewer\ndescription: Reviews\n---\nBody\n"
    defn, problems = parse_agent_file(PATH, text, "plugin", plugin="acme")
    assert problems == []
    assert defn is not None and defn.name == "acme:reviewer" and defn.source == "plugin"


def test_to_json_has_the_protocol_shape() -> None:
    defn, _ = parse(
        "name: a\ndescription: d\ndisallowedTools: [Edit, Write]\nisolation: worktree\nmodel: m1\n"
    )
    assert defn.to_json() == {
        "name": "a",
        "description": "d",
        "source": "project",
        "tools": "All except Edit, Write",
        "model": "m1",
        "isolation": "worktree",
        "path": str(PATH),
    }
    plain, _ = parse("name: b\ndescription: d\n")
    assert set(plain.to_json()) == {"name", "description", "source", "tools", "model", "path"}
