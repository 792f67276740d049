"""Bad agent files: each gives a problem with file, line and an actionable message."""

from __future__ import annotations

from pathlib import Path

import pytest

from wave_ls.agents import AgentDefinition, AgentRegistry, Problem, parse_agent_file

PATH = Path("/project/.wave/agents/bad.md")


def only_problem(text: str) -> Problem:
    """Parse ``text``: it must be skipped with exactly one error."""
    defn, problems = parse_agent_file(PATH, text, "project")
    assert defn is None
    assert len(problems) == 1, problems
    assert problems[0].severity == "error" and problems[0].path == str(PATH)
    return problems[0]


@pytest.mark.parametrize("text", ["", "\n\n", "   \n"])
def test_empty_file(text: str) -> None:
    problem = only_problem(text)
    assert problem.line is None
    assert problem.message.startswith("the file is empty; an agent file starts with a '---' line")


def test_no_frontmatter() -> None:
    problem = only_problem("You are a helpful agent.\nname: x\n")
    assert problem.line == 1
    assert problem.message.startswith("no frontmatter: an agent file starts with a '---' line")


def test_frontmatter_not_closed() -> None:
    problem = only_problem("\n---\nname: a\ndescription: d\nBody text\n")
    assert problem.line == 2
    assert problem.message == "the frontmatter is not closed: add a '---' line after the last key"


def test_missing_name() -> None:
    problem = only_problem("---\ndescription: d\n---\nBody\n")
    assert (problem.line, problem.message) == (
        1,
        "missing required key 'name'; add 'name: my-agent'",
    )


def test_missing_description() -> None:
    problem = only_problem("---\nname: a\n---\nBody\n")
    assert (problem.line, problem.message) == (
        1,
        "missing required key 'description'; add 'description: when to use this agent'",
    )


def test_empty_frontmatter_reports_the_missing_name() -> None:
    assert only_problem("---\n---\nBody\n").message.startswith("missing required key 'name'")


def test_empty_description_value() -> None:
    problem = only_problem("---\nname: a\ndescription:\n---\n")
    assert (problem.line, problem.message) == (
        3,
        "description: is empty; add 'description: when to use this agent'",
    )


def only_warning(text: str) -> tuple[AgentDefinition, Problem]:
    """Parse ``text``: it must load, with exactly one warning."""
    defn, problems = parse_agent_file(PATH, text, "project")
    assert defn is not None
    assert [p.severity for p in problems] == ["warning"], problems
    return defn, problems[0]


def test_unquoted_colon_in_a_value_is_read_as_the_whole_line() -> None:
    # The most common mistake in agent files, and Claude Code reads it (it quotes the line):
    # loaded, with a warning at the line (frontmatter offset added).
    defn, problem = only_warning(
        "---\nname: a\ndescription: Use when: the tests fail # now\nmodel: m\n---\nBody\n"
    )
    assert defn.description == "Use when: the tests fail # now" and defn.model == "m"
    assert problem.line == 3 and problem.code == "lenient-value"
    assert problem.message.startswith("description: the value is not quoted and holds ': '")
    assert problem.span is not None and (problem.span.column, problem.span.end_column) == (13, 43)


def test_a_file_broken_for_claude_code_too_keeps_its_error() -> None:
    # The quoted second reading cannot mend a continuation line: today's error stays.
    problem = only_problem(
        "---\nname: a\ndescription: Use when: x\n<example>\nuser: hi\n</example>\n---\n"
    )
    assert (problem.line, problem.message) == (
        3,
        "description: unquoted value contains ': '; quote it or use '>-'",
    )


def test_a_literal_backslash_n_in_a_description_is_a_line_break() -> None:
    defn, problem = only_warning("---\nname: a\ndescription: One.\\n\\nTwo.\n---\n")
    assert defn.description == "One.\n\nTwo."
    assert "line break" in problem.message and problem.line == 3
    quoted, problems = parse_agent_file(PATH, '---\nname: a\ndescription: "A\\\\nB"\n---\n', "user")
    assert quoted is not None and quoted.description == "A\\nB" and problems == []


def test_a_longer_run_of_dashes_closes_the_frontmatter() -> None:
    defn, problem = only_warning("---\n\nname: a\ndescription: d\n-------------\n# Body\n")
    assert defn.system_prompt == "# Body" and defn.description == "d"
    assert problem.line == 5 and problem.message.startswith(
        "the frontmatter is closed by '-------------'"
    )


def test_colon_in_an_indented_continuation_line_names_the_key() -> None:
    problem = only_problem("---\nname: a\ndescription: first line\n  Examples: more\n---\n")
    assert (problem.line, problem.message) == (
        4,
        "description: unquoted value contains ': '; quote it or use '>-'",
    )


@pytest.mark.parametrize(
    ("front", "line"),
    [("name: a\n\tdescription: d\n", 3), ("name: a\ndescription: |\n\tindented by tab\n", 4)],
)
def test_tabs_in_indentation(front: str, line: int) -> None:
    problem = only_problem(f"---\n{front}---\n")
    assert (problem.line, problem.message) == (
        line,
        "a tab character is used for indentation; YAML indentation must use spaces",
    )


@pytest.mark.parametrize(
    "front", ["description: x\ty\n", "description:\ty\n", "description: y\t\n"]
)
def test_tab_outside_quotes(front: str) -> None:
    # The YAML engine refuses it (as strictyaml does); quoting is the fix, and works.
    problem = only_problem(f"---\nname: a\n{front}---\n")
    assert (problem.line, problem.message) == (
        3,
        "a tab character outside quotes; replace it with spaces or quote the value",
    )
    defn, problems = parse_agent_file(PATH, '---\nname: a\ndescription: "x\ty"\n---\n', "user")
    assert problems == [] and defn is not None and defn.description == "x\ty"


def test_unindented_continuation_line() -> None:
    problem = only_problem("---\nname: a\ndescription: first line\nsecond line\n---\n")
    assert problem.line == 4
    assert problem.message.startswith("expected a 'key: value' line; indent continuation lines")


def test_unclosed_quote() -> None:
    problem = only_problem('---\nname: a\ndescription: "never closed\nmodel: m\n---\n')
    assert (problem.line, problem.message) == (
        3,
        "a quoted value is not closed; add the closing quote",
    )


@pytest.mark.parametrize("char", ["@", "`", "*"])
def test_value_starting_with_a_reserved_character_is_read_whole(char: str) -> None:
    defn, problem = only_warning(f"---\nname: a\ndescription: {char}reviewer does reviews\n---\n")
    assert defn.description == f"{char}reviewer does reviews"
    assert problem.line == 3 and f"holds '{char}'" in problem.message


def test_a_reserved_character_in_a_file_broken_anyway_keeps_its_error() -> None:
    problem = only_problem("---\nname: a\ndescription: @reviewer does reviews\n  more: x\n---\n")
    assert problem.line == 3 and problem.message == (
        "description: a value cannot start with '@'; quote it"
    )


def test_unclosed_flow_list() -> None:
    problem = only_problem("---\nname: a\ndescription: d\ntools: [Read, Grep\n---\n")
    assert problem.line == 4
    assert problem.message.startswith("invalid YAML: expected ',' or ']'")


def test_duplicate_keys() -> None:
    problem = only_problem("---\nname: a\ndescription: d\nname: b\n---\n")
    assert (problem.line, problem.message) == (
        4,
        "duplicate key 'name' (first on line 2); keep only one",
    )


@pytest.mark.parametrize(
    ("front", "found"), [("- a\n- b\n", "a list"), ("just some words\n", "plain text")]
)
def test_frontmatter_that_is_not_a_mapping(front: str, found: str) -> None:
    problem = only_problem(f"---\n{front}---\n")
    assert problem.line == 2
    assert problem.message == f"the frontmatter must be 'key: value' lines (found {found})"


@pytest.mark.parametrize(
    ("name", "form"),
    [
        ("9lives", "agent-9lives"),
        ("-x", "x"),
        ("Python Security Expert", "Python-Security-Expert"),
        ("naïve", "na-ve"),
        ("powershell-5.1-expert", "powershell-5-1-expert"),
        ("_x", "agent-_x"),
        ("Python DevOps/CI-CD Expert", "Python-DevOps-CI-CD-Expert"),
    ],
)
def test_names_claude_code_allows_load_with_a_warning(name: str, form: str) -> None:
    defn, problem = only_warning(f"---\ndescription: d\nname: '{name}'\n---\n")
    assert defn.name == name and problem.line == 3
    assert problem.message.startswith(f"name: '{name}' holds characters an @agent: mention cannot")
    assert f"mention it as @agent:{form} " in problem.message


@pytest.mark.parametrize(("written", "name"), [("a\\tb", "a\tb"), ("a\\nb", "a\nb")])
def test_bad_names(written: str, name: str) -> None:
    # Not one line of printable text: Claude Code could not use it either.
    problem = only_problem(f'---\ndescription: d\nname: "{written}"\n---\n')
    assert problem.line == 3
    assert problem.message.startswith(f"name: '{name}' is not a valid name; use a letter")


@pytest.mark.parametrize("name", ["a", "Explore", "test-runner", "A_b-9"])
def test_good_names(name: str) -> None:
    defn, problems = parse_agent_file(PATH, f"---\nname: {name}\ndescription: d\n---\n", "user")
    assert problems == [] and defn is not None and defn.name == name


def test_plugin_agent_written_with_a_prefix_is_told_the_prefix_is_automatic() -> None:
    defn, problems = parse_agent_file(
        PATH, "---\nname: acme:rev\ndescription: d\n---\n", "plugin", plugin="acme"
    )
    assert defn is None
    assert problems[0].message.endswith("(the plugin prefix is added for you)")


@pytest.mark.parametrize(
    ("front", "message"),
    [
        ("name: [a, b]\ndescription: d\n", "name: expected text, found a list"),
        ("name: a\ndescription:\n  k: v\n", "description: expected text, found a mapping"),
        ("name: a\ndescription: d\ntools:\n  a: b\n", "tools: expected a list of tool names"),
        ("name: a\ndescription: d\ntools: [[Read]]\n", "tools: list items must be tool names"),
        ("name: a\ndescription: d\n[x]: y\n", "a key must be plain text, not a list or mapping"),
    ],
)
def test_wrong_shapes(front: str, message: str) -> None:
    assert only_problem(f"---\n{front}---\n").message.startswith(message)


def test_bad_files_never_stop_the_others_from_loading(tmp_path: Path) -> None:
    # LOAD-1 edge cases: each bad file is skipped with a diagnostic, the rest load.
    agents = tmp_path / "proj" / ".wave" / "agents"
    agents.mkdir(parents=True)
    files = {
        "a-empty.md": "",
        "b-yaml.md": "---\nname: b\ndescription: Use when: x\n  Examples: y\n---\n",
        "c-good.md": "---\nname: good\ndescription: Works\n---\nBody\n",
        "d-noname.md": "---\ndescription: d\n---\n",
        "e-latin1.md": "---\nname: e\ndescription: caf\xe9\n---\n",
        "f-tabs.md": "---\nname: f\n\tdescription: d\n---\n",
        "g-good.md": "---\nname: also-good\ndescription: Works too\n---\n",
    }
    for name, text in files.items():
        encoding = "latin-1" if "latin1" in name else "utf-8"
        (agents / name).write_bytes(text.encode(encoding))
    catalog = AgentRegistry(home=tmp_path / "home", env={}).load(tmp_path / "proj")
    assert {"good", "also-good"} <= set(catalog.names())
    assert [(Path(p.path).name, p.line) for p in catalog.problems] == [
        ("a-empty.md", None),
        ("b-yaml.md", 3),
        ("d-noname.md", 1),
        ("e-latin1.md", 3),
        ("f-tabs.md", 3),
    ]
    assert catalog.problems[3].message == "the file is not UTF-8 text; save it as UTF-8"
    assert str(catalog.problems[1]) == (
        f"{agents / 'b-yaml.md'}:3: description: unquoted value contains ': '; quote it or use '>-'"
    )


def test_duplicate_names_in_one_directory_first_file_by_name_wins(tmp_path: Path) -> None:
    agents = tmp_path / "proj" / ".wave" / "agents"
    agents.mkdir(parents=True)
    # Written in reverse order: the winner is decided by file name, not by creation order.
    (agents / "z.md").write_text("---\ndescription: from z\nname: dup\n---\n")
    (agents / "m.md").write_text("---\nname: dup\ndescription: from m\n---\n")
    (agents / "a.md").write_text("---\nname: dup\ndescription: from a\n---\n")
    catalog = AgentRegistry(home=tmp_path / "home", env={}).load(tmp_path / "proj")
    defn = catalog.get("dup")
    assert defn is not None and defn.description == "from a"
    assert [(Path(p.path).name, p.line, p.message) for p in catalog.problems] == [
        (
            "m.md",
            2,
            "duplicate name 'dup': a.md in the same directory already defines it "
            "(the first file by name wins); this file is ignored",
        ),
        (
            "z.md",
            3,
            "duplicate name 'dup': a.md in the same directory already defines it "
            "(the first file by name wins); this file is ignored",
        ),
    ]


def test_problem_to_json_has_the_protocol_shape() -> None:
    assert Problem("/a.md", 3, "msg").to_json() == {
        "path": "/a.md",
        "line": 3,
        "message": "msg",
        "severity": "error",
    }
    assert Problem("/a.md", None, "msg", "warning").to_json() == {
        "path": "/a.md",
        "message": "msg",
        "severity": "warning",
    }
