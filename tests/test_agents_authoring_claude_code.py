"""The editor side of Claude Code's agent files (issue 24): completion and hover for the
keys Claude Code honours, and the quick fixes that keep a leniently read value whole.
Pure functions over real texts; every fixed text is loaded by the real parser."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_agents_authoring import apply
from wave_ls.agents import parse_agent_file
from wave_ls.agents.authoring import CompletionFacts, complete, hover, quick_fixes
from wave_ls.agents.authoring.check import check_agent_text
from wave_ls.agents.authoring.fixes import double_quoted
from wave_ls.agents.authoring.keys import COLORS, FOREIGN_KEYS, KEY_DOCS, key_markdown
from wave_ls.agents.definition import (
    EFFORTS,
    HOOK_EVENTS,
    MEMORY_SCOPES,
    PERMISSION_MODES,
    ProblemCode,
)
from wave_ls.agents.discovery import AgentDir
from wave_ls.agents.parse import KNOWN_KEYS

FOLDER = Path("/p/.claude/agents")
PATH = FOLDER / "a.md"
FACTS = CompletionFacts({}, models=None, session_model="house", skills=("pdf", "release-notes"))
NEW_KEYS = (
    "permissionMode",
    "maxTurns",
    "background",
    "color",
    "effort",
    "skills",
    "memory",
    "hooks",
)


def labels(text: str, line: int, column: int) -> list[str]:
    return [s.label for s in complete(text, line, column, PATH, FACTS)]


def problems(text: str) -> list:
    return list(check_agent_text(text, PATH, AgentDir("project", FOLDER), [], None).problems)


def test_the_keys_claude_code_honours_are_keys_now() -> None:
    assert set(NEW_KEYS) <= set(KEY_DOCS) and set(NEW_KEYS) <= KNOWN_KEYS
    assert {"mcpServers", "initialPrompt"} == FOREIGN_KEYS
    assert "started for it and stopped when it ends" in key_markdown("mcpServers")
    offered = labels("---\nname: a\n\n---\n", 2, 0)
    assert set(NEW_KEYS) <= set(offered) and "mcpServers" not in offered
    for key in NEW_KEYS:
        [item] = [s for s in complete("---\nname: a\n\n---\n", 2, 0, PATH, FACTS) if s.label == key]
        assert item.new_text == f"{key}: " and item.documentation == KEY_DOCS[key].markdown


@pytest.mark.parametrize(
    ("key", "values"),
    [
        ("permissionMode", list(PERMISSION_MODES)),
        ("background", ["true", "false"]),
        ("color", ["red", "blue", "green", "yellow", "purple", "orange", "pink", "cyan"]),
        ("effort", list(EFFORTS)),
        ("memory", list(MEMORY_SCOPES)),
        ("model", ["inherit", "haiku", "sonnet", "opus"]),
    ],
)
def test_value_completion_of_each_key(key: str, values: list[str]) -> None:
    line = f"{key}: "
    assert labels(f"---\nname: a\n{line}\n---\n", 2, len(line)) == values
    # Partly typed: the typed value is replaced.
    [first, *_] = complete(f"---\n{key}: x\n---\n", 1, len(key) + 3, PATH, FACTS)
    assert first.new_text == values[0]
    assert (first.replace.column, first.replace.end_column) == (len(key) + 2, len(key) + 3)


def test_max_turns_offers_whole_numbers_that_load() -> None:
    counts = labels("---\nmaxTurns: \n---\n", 1, 10)
    assert counts and all(count.isdigit() and int(count) > 0 for count in counts)
    text = f"---\nname: a\ndescription: d\nmaxTurns: {counts[0]}\n---\nbody\n"
    defn, found = parse_agent_file(PATH, text, "project")
    assert found == [] and defn is not None and defn.max_turns == int(counts[0])


def test_skill_names_in_each_list_spelling() -> None:
    assert labels("---\nskills: pdf, \n---\n", 1, 13) == ["release-notes", "pdf"]  # listed last
    assert labels("---\nskills: [rel]\n---\n", 1, 12)[0] == "pdf"
    [item] = [
        s for s in complete("---\nskills:\n  - rel\n---\n", 2, 7, PATH, FACTS) if s.label == "pdf"
    ]
    assert (item.replace.column, item.replace.end_column) == (4, 7)  # the typed word


def test_hook_events_on_the_first_level_under_hooks() -> None:
    text = "---\nhooks:\n  Pre\n    - matcher: Bash\n  \n---\n"
    events = complete(text, 2, 5, PATH, FACTS)
    assert [e.label for e in events] == list(HOOK_EVENTS)
    assert events[0].new_text == "PreToolUse:" and events[0].replace.column == 2
    assert labels(text, 3, 4) == []  # deeper: a matcher's line, not an event
    text = "---\nhooks:\n  PreToolUse:\n    - matcher: Bash\n  \n---\n"
    assert labels(text, 4, 2) == list(HOOK_EVENTS)  # the same level as the first event


def test_hover_on_each_new_key_and_its_value() -> None:
    for key in NEW_KEYS:
        found = hover(f"---\n{key}: x\n---\n", 1, 1, FACTS)
        assert found is not None and found.markdown.startswith(f"**{key}**")
    mode = hover("---\npermissionMode: plan\n---\n", 1, 17, FACTS)
    assert mode is not None and mode.markdown.startswith("`plan`: read-only")
    color = hover("---\ncolor: cyan\n---\n", 1, 8, FACTS)
    assert (
        color is not None
        and "`cyan`" in color.markdown
        and all(c in color.markdown for c in COLORS)
    )


@pytest.mark.parametrize(
    ("value", "tier"),
    [("sonnet", "sonnet"), ("haiku", "haiku"), ("claude-opus-4-1-20250805", "opus")],
)
def test_hover_on_a_model_tier_says_what_it_runs_on(value: str, tier: str) -> None:
    text = f"---\nmodel: {value}\n---\n"
    found = hover(text, 1, 8, FACTS)
    assert found is not None
    assert f"`{tier}` tier" in found.markdown and f"WAVE_MODEL_{tier.upper()}" in found.markdown
    assert "now `house`" in found.markdown and "will fail" not in found.markdown
    mapped = CompletionFacts({}, tiers={tier: ("gpt-x", f"env: WAVE_MODEL_{tier.upper()}")})
    runs = hover(text, 1, 8, mapped)
    assert runs is not None and f"runs on `gpt-x` (env: WAVE_MODEL_{tier.upper()})" in runs.markdown
    unmapped = hover(text, 1, 8, CompletionFacts({}, session_model="house", tiers={}))
    assert unmapped is not None and "No model is set for this tier" in unmapped.markdown
    details = {s.label: s.detail for s in complete(text, 1, 7, PATH, mapped)}
    assert details[tier] == "Claude Code's tier: runs on gpt-x"
    # A claude-* id the endpoint lists is that model, not a tier.
    served = CompletionFacts({}, models=[value], session_model="house")
    listed = hover(text, 1, 8, served)
    assert listed is not None and ("tier" in listed.markdown) == (value == tier)


# ---------------------------------------------------------------------------- quick fixes


@pytest.mark.parametrize(
    ("line", "read_as"),
    [
        (
            "description: Use when: tests fail # not a comment",
            "Use when: tests fail # not a comment",
        ),
        ('description: *Expert* in "C:\\dir": paths', '*Expert* in "C:\\dir": paths'),
        ("description: @here: always", "@here: always"),
        ("description: `make` fails: read the log", "`make` fails: read the log"),
        ("description: one: a\\ntwo # b", "one: a\ntwo # b"),  # Claude Code's line break
        ("model: sonnet: fast", None),
    ],
)
def test_quoting_a_lenient_value_keeps_the_whole_line(line: str, read_as: str | None) -> None:
    description = "" if line.startswith("description") else "description: d\n"
    text = f"---\nname: a\n{description}{line}   \n---\nbody\n"
    before, _ = parse_agent_file(PATH, text, "project")
    assert before is not None
    if read_as is not None:
        assert before.description == read_as
    [lenient] = [p for p in problems(text) if p.code == ProblemCode.LENIENT_VALUE]
    fixes = quick_fixes(text, PATH, [lenient])
    assert fixes and fixes[0].title == "Quote the value" and fixes[0].preferred
    for fix in fixes:
        fixed = apply(text, fix.edits)
        after, found = parse_agent_file(PATH, fixed, "project")
        assert found == [], (fix.title, fixed)
        assert after is not None
        assert (after.description, after.model) == (before.description, before.model), fixed
    [edit] = fixes[0].edits
    assert edit.range.column == len(line.split(": ", 1)[0]) + 2  # right after 'key: '
    assert edit.range.end_column == len(line)  # the whole line, trailing spaces left out


def test_double_quoted_escapes_backslashes_quotes_and_breaks() -> None:
    assert double_quoted('a "b" \\ c\nd') == '"a \\"b\\" \\\\ c\\nd"'


def test_the_unquoted_colon_fix_no_longer_cuts_at_a_hash() -> None:
    # Broken for Claude Code too (a continuation line under 'model'): still an error,
    # whose quote fix keeps ' # c' as part of the description.
    text = "---\nname: a\ndescription: Use it: x # c\nmodel: m\n  z: w\n---\n"
    [error] = problems(text)
    assert error.code == ProblemCode.UNQUOTED_COLON and error.line == 3
    quote = next(f for f in quick_fixes(text, PATH, [error]) if f.title == "Quote the value")
    assert apply(text, quote.edits).split("\n")[2] == 'description: "Use it: x # c"'
