"""Mentions read from a chat message, and the reminders they produce (SPEC section 3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from wave_ls.chat_input.mentions import (
    file_mention_reminder,
    find_agent_mentions,
    find_file_mentions,
    mention_reminder,
)

AVAILABLE = [
    ("Explore", "Fast read-only agent for locating code."),
    ("test-runner", "Runs the test suite and fixes failures. Use PROACTIVELY."),
    ("acme:reviewer", "Reviews diffs for the acme plugin."),
]


# --- recognising agent mentions -----------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "names"),
    [
        ("please [@agent:test-runner] fix it", ["test-runner"]),  # webview spelling
        ("please @agent:test-runner fix it", ["test-runner"]),  # CLI spelling
        ("@agent:Explore find the parser", ["Explore"]),
        ("[@agent:acme:reviewer] check this", ["acme:reviewer"]),  # plugin agent
        ("ask @agent:acme:reviewer please", ["acme:reviewer"]),
        ("ask @agent:reviewer: the diff", ["reviewer"]),  # trailing colon is punctuation
        ("thanks @agent:Explore.", ["Explore"]),
        ("@agent:Explore, then @agent:Plan!", ["Explore", "Plan"]),
        ("(@agent:Explore)", ["Explore"]),
        ("run @agent:v2_agent-x now", ["v2_agent-x"]),
        ("first [@agent:a] then @agent:b and [@agent:a] again", ["a", "b"]),  # unique, in order
        ("line one\n@agent:Plan", ["Plan"]),
    ],
)
def test_agent_mentions_are_found_in_both_spellings(text: str, names: list[str]) -> None:
    assert find_agent_mentions(text) == names


@pytest.mark.parametrize(
    "text",
    [
        "write to a@b.com today",  # an e-mail address
        "mail me@agent:Explore now",  # not preceded by start or whitespace
        "@agent:1abc starts with a digit",
        "[@agent:] empty",
        "@agent: nothing",
        "@Explore without the agent prefix",
        "[@file:src/agent.py]",
    ],
)
def test_text_without_agent_mentions_yields_none(text: str) -> None:
    assert find_agent_mentions(text) == []


# --- recognising file mentions ------------------------------------------------------------


def test_file_mentions_keep_spaces_and_brackets_in_paths() -> None:
    text = "see [@file:my dir/a b.txt] and [@file:app/[id]/page.tsx] and [@file:my dir/a b.txt]"
    assert find_file_mentions(text) == ["my dir/a b.txt", "app/[id]/page.tsx"]


def test_agent_mentions_are_never_file_mentions() -> None:
    # `@agent:` is excluded from file mention scanning (SPEC section 3).
    text = "[@agent:Explore] @agent:Plan @README.md a@b.com [@ide:selection]"
    assert find_file_mentions(text) == []


# --- the agent reminder -------------------------------------------------------------------


def test_no_mentions_means_no_reminder() -> None:
    assert mention_reminder([], AVAILABLE) is None


def test_registered_agent_gets_a_delegation_reminder() -> None:
    # MENTION-4
    reminder = mention_reminder(["test-runner"], AVAILABLE)
    assert reminder is not None
    assert reminder.startswith("<system-reminder>\n")
    assert reminder.endswith("\n</system-reminder>")
    assert "subagent_type=test-runner" in reminder
    assert "Agent tool" in reminder
    assert "Runs the test suite and fixes failures." in reminder
    assert "not available" not in reminder


def test_plugin_agent_and_case_difference_resolve_to_the_registered_name() -> None:
    # MENTION-4: a hand-typed `@agent:explore` still means `Explore` when unambiguous.
    reminder = mention_reminder(["explore"], AVAILABLE)
    assert reminder is not None
    assert "subagent_type=Explore" in reminder
    assert "subagent_type=acme:reviewer" in (mention_reminder(["acme:reviewer"], AVAILABLE) or "")


def test_two_agents_share_one_reminder() -> None:
    # MENTION-6
    reminder = mention_reminder(["Explore", "test-runner"], AVAILABLE)
    assert reminder is not None
    assert reminder.count("<system-reminder>") == 1
    assert "subagent_type=Explore" in reminder
    assert "subagent_type=test-runner" in reminder
    assert "parallel" in reminder  # the main agent decides how to split: a soft instruction


def test_unknown_agent_gets_the_available_names_instead() -> None:
    # MENTION-5
    reminder = mention_reminder(["tset-runner"], AVAILABLE)
    assert reminder is not None
    assert "@agent:tset-runner" in reminder
    assert "no subagent with that name is available" in reminder
    assert "Available subagents: acme:reviewer, Explore, test-runner." in reminder
    assert "subagent_type=tset-runner" not in reminder


def test_known_and_unknown_agents_in_one_message() -> None:
    # MENTION-4 + MENTION-5 in one reminder
    reminder = mention_reminder(["Explore", "ghost"], AVAILABLE)
    assert reminder is not None
    assert reminder.count("<system-reminder>") == 1
    assert "subagent_type=Explore" in reminder
    assert "@agent:ghost, but no subagent" in reminder


def test_unknown_agent_with_no_agents_registered() -> None:
    reminder = mention_reminder(["ghost"], [])
    assert reminder is not None
    assert "Available subagents: (none)." in reminder


def test_long_descriptions_are_shortened_to_one_line() -> None:
    reminder = mention_reminder(["big"], [("big", "line one\nline two " + "x" * 500)])
    assert reminder is not None
    assert "line one line two" in reminder
    assert "x" * 300 not in reminder
    assert "…" in reminder


# --- the file reminder --------------------------------------------------------------------


def test_file_reminder_shows_numbered_lines(tmp_path: Path) -> None:
    (tmp_path / "my dir").mkdir()
    (tmp_path / "my dir" / "a b.txt").write_text("first\nsecond\n", encoding="utf-8")
    reminder = file_mention_reminder(["my dir/a b.txt"], tmp_path)
    assert reminder is not None
    assert reminder.startswith("<system-reminder>\n")
    assert "Contents of my dir/a b.txt:\n     1\tfirst\n     2\tsecond" in reminder
    assert reminder.endswith("</system-reminder>")


def test_file_reminder_accepts_absolute_paths(tmp_path: Path) -> None:
    target = tmp_path / "abs.py"
    target.write_text("x = 1\n", encoding="utf-8")
    reminder = file_mention_reminder([str(target)], Path("/"))
    assert reminder is not None
    assert "     1\tx = 1" in reminder


def test_file_reminder_reports_missing_binary_and_directories(tmp_path: Path) -> None:
    (tmp_path / "logo.png").write_bytes(b"\x89PNG\x00\x00\x01")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "mod.py").write_text("", encoding="utf-8")
    (tmp_path / "pkg" / "sub").mkdir()
    (tmp_path / "empty.txt").write_text("", encoding="utf-8")
    reminder = file_mention_reminder(["gone.py", "logo.png", "pkg", "empty.txt"], tmp_path)
    assert reminder is not None
    assert "gone.py: file not found" in reminder
    assert "logo.png: binary file (7 bytes); contents not shown." in reminder
    assert "pkg is a directory; its entries:\n- mod.py\n- sub/" in reminder
    assert "Contents of empty.txt: (empty file)" in reminder


def test_file_reminder_caps_large_files_at_a_line_end(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("".join(f"line {n}\n" for n in range(50_000)))
    reminder = file_mention_reminder(["big.txt"], tmp_path, max_bytes=1000)
    assert reminder is not None
    assert "     1\tline 0" in reminder
    assert "line 49999" not in reminder
    assert "Truncated: showing lines 1-" in reminder
    assert "Read the rest with the Read tool" in reminder
    shown = [line for line in reminder.splitlines() if "\tline " in line]
    assert shown[-1].endswith(f"line {len(shown) - 1}")  # the last line shown is whole


def test_file_reminder_total_budget(tmp_path: Path) -> None:
    for name in ("a.txt", "b.txt"):
        (tmp_path / name).write_text("z" * 99 + "\n", encoding="utf-8")
    reminder = file_mention_reminder(["a.txt", "b.txt"], tmp_path, max_total_bytes=100)
    assert reminder is not None
    assert "Contents of a.txt:" in reminder
    assert "b.txt: not shown (100 bytes); the size budget" in reminder


def test_no_file_mentions_means_no_file_reminder(tmp_path: Path) -> None:
    assert file_mention_reminder([], tmp_path) is None
