"""The authoring library behind the editor features (pure functions, no server)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from wave_ls.agents import Problem, parse_agent_file
from wave_ls.agents.authoring import (
    AgentPlace,
    CompletionFacts,
    Suggestion,
    TextEdit,
    TextRange,
    agent_place,
    check_agent_text,
    complete,
    document_symbols,
    folding_ranges,
    hover,
    problem_range,
    quick_fixes,
    split_lines,
    write_new_subagent,
)
from wave_ls.agents.authoring.fixes import agent_name_from_file
from wave_ls.agents.authoring.keys import KEY_DOCS
from wave_ls.agents.authoring.outline import Outline
from wave_ls.agents.authoring.template import TemplateError, new_subagent_text
from wave_ls.agents.discovery import AgentDir, ParsedFile
from wave_ls.agents.parse import KNOWN_KEYS, read_agent_text

FOLDER = Path("/p/.wave/agents")
PROJECT = AgentDir("project", FOLDER)
FACTS = CompletionFacts(tool_docs={"Read": "Reads a file. More."}, models=None)


def check(
    text: str,
    name: str = "a.md",
    layers: Sequence[tuple[AgentDir, Sequence[ParsedFile]]] = (),
    models: Sequence[str] | None = None,
) -> tuple[Problem, ...]:
    return check_agent_text(text, FOLDER / name, PROJECT, layers, models).problems


def labels(text: str, line: int, column: int, facts: CompletionFacts = FACTS) -> list[str]:
    return [s.label for s in complete(text, line, column, FOLDER / "a.md", facts)]


def apply(text: str, fix_edits: Sequence[TextEdit | Suggestion]) -> str:
    """``text`` with the edits of a fix (or a completion) applied."""
    edits = [e if isinstance(e, TextEdit) else TextEdit(e.replace, e.new_text) for e in fix_edits]
    lines = split_lines(text)

    def offset(line: int, column: int) -> int:
        return sum(len(x) + 1 for x in lines[:line]) + column

    for edit in sorted(edits, key=lambda e: (e.range.line, e.range.column), reverse=True):
        r = edit.range
        text = (
            text[: offset(r.line, r.column)]
            + edit.new_text
            + text[offset(r.end_line, r.end_column) :]
        )
    return text


def test_key_docs_cover_every_known_key() -> None:
    assert set(KEY_DOCS) == KNOWN_KEYS


def test_keep_going_reports_every_error_and_the_loader_only_the_first() -> None:
    text = "---\ntools: [Reed]\nmodel: [a]\n---\nbody\n"
    parsed = read_agent_text(FOLDER / "a.md", text, "project", keep_going=True)
    assert [p.message.split(";")[0] for p in parsed.problems] == [
        "missing required key 'name'",
        "missing required key 'description'",
        "model: expected text, found a list",
        "tools: unknown tool 'Reed' ignored (did you mean 'Read'?)",
    ]
    defn, problems = parse_agent_file(FOLDER / "a.md", text, "project")
    assert defn is None and [p.message for p in problems] == [parsed.problems[0].message]


def test_a_tool_in_a_block_list_is_reported_on_its_own_line() -> None:
    text = "---\nname: a\ndescription: d\ntools:\n  - Read\n  - Reed, Grp\n---\n"
    # The editor's reading: one problem per name, where it is written (its own quick fix).
    problems = read_agent_text(FOLDER / "a.md", text, "project", keep_going=True).problems
    assert [(p.line, p.span and p.span.column, p.suggestion) for p in problems] == [
        (6, 4, "Read"),
        (6, 10, "Grep"),
    ]
    # The loader's: one for the line, naming both.
    _, [line] = parse_agent_file(FOLDER / "a.md", text, "project")
    assert line.line == 6 and "'Reed'" in line.message and "'Grp'" in line.message


def test_problem_ranges_use_the_span_only_on_the_problem_line() -> None:
    text = "---\nname:\n  - a\ndescription: d\n---\n"
    [problem] = check(text)
    assert problem.message == "name: expected text, found a list"
    # The span (the list) starts on the next line; the range stays on the key's line.
    assert problem_range(problem, split_lines(text)) == TextRange(1, 0, 1, 5)
    [empty] = check("")
    assert problem_range(empty, [""]) == TextRange(0, 0, 0, 0)


def test_editor_lints_unknown_keys_isolation_and_models() -> None:
    text = (
        "---\nname: a\ndescription: d\nmodle: x\ncolor: red\nisolation: none\nmodel: llama\n---\n"
    )
    problems = check(text, models=["gpt-4", "gpt-5"])
    assert [(p.line, p.code, p.suggestion) for p in problems] == [
        (4, "unknown-key", "model"),
        (6, "isolation-ignored", None),
        (7, "unknown-model", None),
    ]
    assert "or one of: gpt-4, gpt-5" in problems[2].message
    assert check(text.replace("model: llama", "model: gpt-5"), models=["gpt-5"])[-1].line == 6
    assert not [p for p in check(text, models=None) if p.code == "unknown-model"]


def test_duplicates_and_overrides_against_the_files_on_disk() -> None:
    def on_disk(directory: AgentDir, file: str, name: str) -> ParsedFile:
        text = f"---\nname: {name}\ndescription: d\n---\n"
        path = directory.directory / file
        defn, _ = parse_agent_file(path, text, directory.source)
        return ParsedFile(path, defn, (), 2)

    user = AgentDir("user", Path("/h/.wave/agents"))
    layers = [
        (user, [on_disk(user, "x.md", "helper")]),
        (PROJECT, [on_disk(PROJECT, "a.md", "old"), on_disk(PROJECT, "b.md", "helper")]),
    ]
    text = "---\nname: helper\ndescription: d\n---\n"
    # As a.md (first by name): it wins b.md and overrides the user's.
    first = check(text, "a.md", layers=layers)
    assert [p.message for p in first] == [
        "overrides the user-level agent 'helper' (/h/.wave/agents/x.md)",
        "b.md in the same directory also defines 'helper' and is ignored "
        "(this file comes first by name)",
    ]
    # As c.md: the loader's duplicate report, worded as wave-ls agents words it.
    [duplicate, override] = sorted(check(text, "c.md", layers=layers), key=lambda p: p.severity)
    assert duplicate.severity == "error" and duplicate.message.startswith(
        "duplicate name 'helper': b.md in the same directory already defines it"
    )
    assert override.severity == "info"


def test_outline_reads_broken_yaml_and_skips_fenced_headings() -> None:
    text = (
        "\n---\nname: a\ndescription: x: y\n  more\ntools:\n  - Read\n\n---\n"
        "# A\n```\n# no\n```\n## B\n"
    )
    outline = Outline.of(text)
    assert (outline.open_line, outline.close_line) == (1, 8)
    assert [(k.key, k.line, k.last_line) for k in outline.keys] == [
        ("name", 2, 2),
        ("description", 3, 4),
        ("tools", 5, 6),
    ]
    assert [(h.level, h.title, h.line, h.last_line) for h in outline.headings] == [
        (1, "A", 9, 13),
        (2, "B", 13, 13),
    ]
    unclosed = Outline.of("---\nname: a\nto")
    assert unclosed.close_line is None and unclosed.in_frontmatter(2)


@pytest.mark.parametrize(
    ("line", "column", "expected"),
    [
        ("tools: ", 7, "Read"),
        ("tools: Read, ", 13, "Write"),
        ("tools: [Read, ]", 14, "Write"),
        ("tools: [Read, Wr]", 16, "Write"),
        ("tools:", 6, "Read"),
        ("disallowedTools: Read,", 22, "Write"),
    ],
)
def test_tool_completion_in_each_spelling(line: str, column: int, expected: str) -> None:
    text = f"---\nname: a\ndescription: d\n{line}\n---\n"
    found = complete(text, 3, column, FOLDER / "a.md", FACTS)
    names = [s.label for s in found]
    assert expected in names and ("Agent" in names) == line.startswith("disallowedTools")
    if expected != "Read":  # a listed name comes last
        assert names[-1] == "Read"
    chosen = next(s for s in found if s.label == expected)
    fixed = apply(text, (chosen,))
    assert parse_agent_file(FOLDER / "a.md", fixed, "project")[1] == [], fixed


def test_tool_completion_in_a_block_list_and_documentation() -> None:
    text = "---\nname: a\ndescription: d\ntools:\n  - Read\n  - \n---\n"
    found = complete(text, 5, 4, FOLDER / "a.md", FACTS)
    assert [s.label for s in found][-1] == "Read"
    text = text.replace("  - Read\n", "")
    read = complete(text, 4, 4, FOLDER / "a.md", FACTS)[0]
    assert (read.label, read.detail, read.documentation) == (
        "Read",
        "Reads a file.",
        "Reads a file. More.",
    )


def test_key_value_and_template_completion() -> None:
    text = "---\nname: a\nde\nmodel: \nisolation: w\n---\nbody\n"
    assert labels(text, 2, 2)[:2] == ["description", "tools"]  # "name", "model" are there
    assert labels(text, 2, 2)[-3:] == ["name", "model", "isolation"]  # offered last
    models = CompletionFacts({}, models=["m2", "m1"], session_model="m1")
    assert labels(text, 3, 7, models) == ["inherit", "haiku", "sonnet", "opus", "m1", "m2"]
    assert labels(text, 4, 12) == ["worktree"]
    [worktree] = complete(text, 4, 12, FOLDER / "a.md", FACTS)
    assert worktree.replace == TextRange(4, 11, 4, 12)
    assert labels(text, 6, 2) == []
    assert labels("", 0, 0) == ["subagent"]
    assert labels("--", 0, 2) == ["subagent"]
    assert labels("hello", 0, 5) == []


def test_hover_texts() -> None:
    text = "---\nname: a\nmcpServers: x\ntools: Read, Reed\nmodel: big\n---\n"
    assert hover(text, 1, 1, FACTS).markdown.startswith("**name** (required)")  # type: ignore[union-attr]
    foreign = hover(text, 2, 1, FACTS).markdown  # type: ignore[union-attr]
    assert "Claude Code key" in foreign and "started for it and stopped when it ends" in foreign
    assert "Reads a file. More." in hover(text, 3, 8, FACTS).markdown  # type: ignore[union-attr]
    assert "Did you mean `Read`?" in hover(text, 3, 14, FACTS).markdown  # type: ignore[union-attr]
    known = CompletionFacts({}, models=["big"])
    assert "The endpoint offers it." in hover(text, 4, 8, known).markdown  # type: ignore[union-attr]
    assert hover(text, 6, 0, FACTS) is None


@pytest.mark.parametrize(
    "text",
    [
        "---\nname: a\ndescription: Use when: x # note\n---\n",
        '---\nname: a\ndescription: He said "go": now\n---\n',
        "---\nname: a\ndescription: one\n  two: three\n\n  four\n---\n",
        "---\ndescription: d\n---\n",
        "---\nname:\ndescription: d\n---\n",
        "---\nname: a\n---\n",
        "---\nname: a\ndescription: d\nomitClaudeMd: 'true'\n---\n",
    ],
)
def test_every_fix_gives_a_file_that_loads(text: str) -> None:
    for _ in range(3):  # a fix may reveal the next problem (name, then description)
        problems = list(check(text, "code reviewer.md"))
        if not problems:
            break
        fixes = quick_fixes(text, FOLDER / "code reviewer.md", problems)
        assert fixes, problems
        for fix in fixes:
            fixed = apply(text, fix.edits)
            after = check(fixed, "code reviewer.md")
            assert not [
                p for p in after if p.line == fix.problem.line and p.code == fix.problem.code
            ]
        text = apply(text, fixes[0].edits)
    defn, problems = parse_agent_file(FOLDER / "x.md", text, "project")
    assert defn is not None and problems == [], text


def test_quoting_keeps_the_text() -> None:
    text = 'description: He said "go": now\n'
    full = f"---\nname: a\n{text}---\n"
    [fix, _] = quick_fixes(full, FOLDER / "a.md", list(check(full)))
    defn, _ = parse_agent_file(FOLDER / "a.md", apply(full, fix.edits), "project")
    assert defn is not None and defn.description == 'He said "go": now'


def test_symbols_and_folds() -> None:
    text = "---\nname: a\ndescription: >-\n  x\n---\n# One\ntext\n## Two\nmore\n# Three\n"
    [front, one, three] = document_symbols(text)
    assert (front.name, front.detail, [c.name for c in front.children]) == (
        "frontmatter",
        "a",
        ["name", "description"],
    )
    assert [c.name for c in one.children] == ["Two"] and three.name == "Three"
    assert {(f.line, f.end_line, f.kind) for f in folding_ranges(text)} == {
        (0, 4, "region"),
        (2, 3, "value"),
        (5, 8, "section"),
        (7, 8, "section"),
    }


def test_file_names_make_valid_agent_names() -> None:
    assert agent_name_from_file(Path("code reviewer.md")) == "code-reviewer"
    assert agent_name_from_file(Path("2nd.md")) == "agent-2nd"
    assert agent_name_from_file(Path("_x.md")) == "agent-_x"
    assert agent_name_from_file(Path("...md")) == "my-agent"


def test_template_loads_and_is_never_overwritten(tmp_path: Path) -> None:
    path = write_new_subagent(tmp_path, "helper", "Use it: for everything")
    assert path == tmp_path / ".wave" / "agents" / "helper.md"
    defn, problems = parse_agent_file(path, path.read_text(), "project")
    assert problems == [] and defn is not None and defn.description == "Use it: for everything"
    with pytest.raises(TemplateError, match="already exists"):
        write_new_subagent(tmp_path, "helper")
    with pytest.raises(TemplateError, match="not a valid subagent name"):
        write_new_subagent(tmp_path, "../x")
    assert write_new_subagent(path.parent, "other").parent == path.parent
    assert parse_agent_file(path, new_subagent_text("x"), "project")[1] == []


def test_places(tmp_path: Path) -> None:
    home, root, other = tmp_path / "home", tmp_path / "root", tmp_path / "other"
    plugin = home / ".wave" / "plugins" / "kit"
    (plugin / "agents").mkdir(parents=True)

    def place(path: Path) -> AgentPlace:
        found = agent_place(path, root, home, {}, {})
        assert found is not None, path
        return found

    assert place(root / ".wave" / "agents" / "a.md").agent_dir.source == "project"
    assert place(home / ".wave" / "agents" / "a.md").agent_dir.source == "user"
    assert place(home / ".wave" / "agents" / "a.md").cwd == root
    kit = place(plugin / "agents" / "a.md")
    assert (kit.agent_dir.source, kit.agent_dir.plugin) == ("plugin", "kit")
    assert place(other / ".wave" / "agents" / "a.md").cwd == other
    for outside in (
        "README.md",
        ".wave/agents/sub/a.md",
        ".wave/agents/.a.md",
        ".wave/agents/a.txt",
    ):
        assert agent_place(root / outside, root, home, {}, {}) is None, outside
