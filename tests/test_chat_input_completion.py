"""`@` completion candidates: subagents before files, filtered by the query (MENTION-1/2)."""

from __future__ import annotations

import time
from dataclasses import dataclass

from wave_ls.chat_input.completion import MAX_RENEWED, AgentIndex, Candidate, complete
from wave_ls.chat_input.file_index import FileIndex
from wave_ls.chat_input.mentions import find_agent_mentions, find_file_mentions


@dataclass(frozen=True)
class Agent:
    name: str
    description: str


AGENTS = [
    Agent("test-runner", "Runs the test suite and fixes failures."),
    Agent("Explore", "Fast read-only agent for locating code."),
    Agent("Plan", "Designs an implementation plan before coding."),
    Agent("acme:reviewer", "Reviews diffs for the acme plugin."),
    Agent("docs-writer", "Writes user documentation, not tests."),
]
FILES = FileIndex(
    [
        "README.md",
        "plan.md",
        "src/explore.py",
        "src/testing/runner.py",
        "tests/test_parser.py",
        "docs/my notes.md",
    ]
)


def labels(items: list[Candidate], kind: str) -> list[str]:
    return [item.label for item in items if item.kind == kind]


def test_empty_query_lists_every_agent_then_files() -> None:
    # MENTION-1
    items = complete("", AGENTS, FILES)
    assert labels(items, "agent") == [
        "acme:reviewer",
        "docs-writer",
        "Explore",
        "Plan",
        "test-runner",
    ]
    assert labels(items, "file") == list(FILES)
    assert [item.kind for item in items] == ["agent"] * 5 + ["file"] * 6


def test_agent_items_carry_name_description_and_tag() -> None:
    # MENTION-1, MENTION-3
    item = next(item for item in complete("Expl", AGENTS, FILES) if item.kind == "agent")
    assert item.label == "Explore"
    assert item.detail == item.documentation == "Fast read-only agent for locating code."
    assert item.insert_text == "[@agent:Explore]"
    assert find_agent_mentions(f"go {item.insert_text}") == ["Explore"]  # reads back


def test_file_items_insert_a_file_tag() -> None:
    item = next(item for item in complete("notes", AGENTS, FILES) if item.kind == "file")
    assert item.label == "docs/my notes.md"
    assert item.insert_text == "[@file:docs/my notes.md]"
    assert find_file_mentions(item.insert_text) == ["docs/my notes.md"]


def test_sort_text_puts_every_agent_before_every_file() -> None:
    # MENTION-1: the client sorts by sortText, so the order must survive a lexical sort.
    agents = [Agent(f"agent{n}", "test helper") for n in range(15)]
    items = complete("test", agents + AGENTS, FILES)
    assert sorted(items, key=lambda item: item.sort_text) == items
    kinds = [item.kind for item in items]
    assert kinds.index("file") > max(i for i, kind in enumerate(kinds) if kind == "agent")


def test_query_filters_agents_by_name_then_description() -> None:
    # MENTION-2: name prefix first, then name substring, then description; ties by name.
    items = complete("test", AGENTS, FILES)
    assert labels(items, "agent") == ["test-runner", "docs-writer"]
    items = complete("re", AGENTS, FILES)
    # prefix: (acme:)reviewer; substring: Explore; description ("before", "failures"):
    # Plan, test-runner
    assert labels(items, "agent") == ["acme:reviewer", "Explore", "Plan", "test-runner"]


def test_filtering_ignores_case() -> None:
    assert labels(complete("EXPL", AGENTS, FILES), "agent") == ["Explore"]
    assert labels(complete("readme", AGENTS, FILES), "file") == ["README.md"]


def test_file_search_works_independently_of_agents() -> None:
    # MENTION-2: agents filtered away do not stop file results, and the reverse.
    items = complete("parser", AGENTS, FILES)
    assert labels(items, "agent") == []
    assert labels(items, "file") == ["tests/test_parser.py"]
    items = complete("reviewer", AGENTS, FILES)
    assert labels(items, "agent") == ["acme:reviewer"]
    assert labels(items, "file") == []


def test_file_ranking_basename_prefix_then_segment_then_substring_then_subsequence() -> None:
    files = FileIndex(["lib/xrun.py", "run/setup.py", "src/runner.py", "r_u_n.txt"])
    assert labels(complete("run", [], files), "file") == [
        "src/runner.py",  # basename starts with it
        "run/setup.py",  # a directory starts with it
        "lib/xrun.py",  # contains it
        "r_u_n.txt",  # its letters in order
    ]
    assert labels(complete("src/ru", [], files), "file") == ["src/runner.py"]


def test_group_prefix_limits_the_list_to_that_group() -> None:
    items = complete("agent:Pla", AGENTS, FILES)
    assert [item.label for item in items] == ["Plan"]
    items = complete("file:pla", AGENTS, FILES)
    assert [item.label for item in items] == ["plan.md"]


def test_no_at_word_means_no_items() -> None:
    assert complete(None, AGENTS, FILES) == []


def test_limit_caps_each_group() -> None:
    files = [f"f{n:03}.txt" for n in range(300)]
    items = complete("f", AGENTS, files, limit=10)
    assert len(labels(items, "file")) == 10
    assert labels(items, "file")[0] == "f000.txt"


def test_names_a_mention_cannot_hold_insert_their_mention_form() -> None:
    # Issue 24: Claude Code allows '.' and spaces in names; the item inserts a form the
    # mention parser reads back (and resolves to that agent), the label is the name.
    agents = [Agent("1bad", "x"), Agent("has space", "y"), Agent("ok", "z"), Agent("v5.1", "w")]
    items = {item.label: item for item in complete("", agents, [])}
    assert sorted(items) == ["1bad", "has space", "ok", "v5.1"]
    for name, form in [("1bad", "agent-1bad"), ("has space", "has-space"), ("v5.1", "v5-1")]:
        assert items[name].insert_text == f"[@agent:{form}]"
        assert find_agent_mentions(items[name].insert_text) == [form]
    assert items["ok"].insert_text == "[@agent:ok]"
    # What a mention holds finds it.
    assert labels(complete("has-sp", agents, []), "agent") == ["has space"]
    # A form another agent answers to would mention that one: not offered.
    taken = complete("", [Agent("has space", "y"), Agent("Has-Space", "z")], [])
    assert labels(taken, "agent") == ["Has-Space"]


@dataclass(frozen=True)
class ColoredAgent:
    name: str
    description: str
    color: str | None = None


def test_an_agent_item_carries_its_color() -> None:
    agents = [ColoredAgent("red-one", "x", "red"), ColoredAgent("plain", "y")]
    items = {item.label: item for item in complete("", agents, [])}
    assert items["red-one"].color == "red" and items["plain"].color is None
    assert all(item.color is None for item in complete("", [Agent("a", "b")], ["f.txt"]))


def test_removed_agent_disappears() -> None:
    # MENTION-9: the candidates come from the list passed in on every call.
    assert "Plan" in labels(complete("", AGENTS, FILES), "agent")
    remaining = [agent for agent in AGENTS if agent.name != "Plan"]
    assert "Plan" not in labels(complete("", remaining, FILES), "agent")


def test_an_edited_agent_is_found_by_its_new_description_beside_the_unchanged_ones() -> None:
    # A renewed catalog holds the unchanged definitions again and a new one for the edit.
    assert labels(complete("diffs", AGENTS, FILES), "agent") == ["acme:reviewer"]
    edited = Agent("acme:reviewer", "Audits licences for the acme plugin.")
    renewed = [edited if agent.name == "acme:reviewer" else agent for agent in AGENTS]
    assert labels(complete("diffs", renewed, FILES), "agent") == []
    assert labels(complete("licences", renewed, FILES), "agent") == ["acme:reviewer"]
    assert labels(complete("plan", renewed, FILES), "agent") == ["Plan"]
    details = {item.label: item.detail for item in complete("", renewed, FILES)}
    assert details["acme:reviewer"] == "Audits licences for the acme plugin."


def test_an_index_renewed_after_edits_answers_as_one_built_afresh() -> None:
    # A sweep renews the index from the last one when only a few agents were replaced by
    # ones of the same names (an edited file): rows and matches must be those of a new one,
    # for a mentionable name, one written in its mention form and one no mention reaches.
    agents = [
        *(Agent(f"agent-{n:03d}", f"Helps with topic {n:03d}.") for n in range(200)),
        Agent("Data Wizard", "Shapes tables."),  # offered as Data-Wizard
        Agent("Python Expert", "Knows Python."),  # Python-Expert is another agent's name:
        Agent("Python-Expert", "Knows it too."),  # only that one is offered
    ]
    edits = {
        "agent-007": "Audits licences.",
        "agent-150": "Helps with topic 150, and more.",
        "Data Wizard": "Reshapes frames.",
        "Python Expert": "Audits snakes.",
    }
    edited = [Agent(a.name, edits[a.name]) if a.name in edits else a for a in agents]
    renewed = AgentIndex(agents).renewed(edited)
    fresh = AgentIndex(edited)
    assert renewed is not None and renewed.agents is edited
    assert renewed.rows == fresh.rows
    for query in ["", "agent-0", "licences", "topic 15", "frames", "shapes", "snakes", "python"]:
        assert renewed.search(query, 50) == fresh.search(query, 50), query
    assert [renewed.rows[row][0] for _, row in renewed.search("audits", 50)] == ["agent-007"]


def test_an_index_is_built_afresh_when_names_change_or_many_agents_do() -> None:
    agents = [Agent(f"agent-{n:03d}", f"Helps with topic {n:03d}.") for n in range(200)]
    index = AgentIndex(agents)
    renamed = [Agent("zeta", a.description) if a.name == "agent-001" else a for a in agents]
    assert index.renewed(renamed) is None
    assert index.renewed(agents[:-1]) is None
    many = [Agent(a.name, "Edited.") for a in agents[: MAX_RENEWED + 1]] + agents[MAX_RENEWED + 1 :]
    assert index.renewed(many) is None
    assert labels(complete("zeta", renamed, FILES), "agent") == ["zeta"]
    assert len(labels(complete("edited", many, FILES), "agent")) == 50  # the group's cap


def test_large_workspace_is_fast() -> None:
    agents = [Agent(f"agent-{n}", f"helps with topic {n} and tests") for n in range(1000)]
    files = FileIndex(f"pkg{n % 50}/module_{n}/file_{n}.py" for n in range(20_000))
    queries = ["", "t", "file_1", "agent-99", "pkg7/mod", "zqxj", "fl99"]
    complete("warm", agents, files)
    started = time.perf_counter()
    for query in queries * 5:
        complete(query, agents, files)
    per_call = (time.perf_counter() - started) / (len(queries) * 5)
    assert per_call < 0.02  # generous for slow CI; about 1 ms here
