"""Fuzzing agent files (issue 12): whatever a file holds, parsing it gives a definition or
problems for that file (never an exception), and a folder of such files still loads every
good agent. Bounded: a fixed number of examples, no deadline per example.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wave_ls.agents import AgentRegistry, parse_agent_file
from wave_ls.agents.parse import KNOWN_KEYS, NAME_PATTERN

PARSE_EXAMPLES = 400
FOLDER_EXAMPLES = 60


def fuzz(examples: int) -> settings:
    return settings(
        max_examples=examples,
        deadline=None,
        database=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )


GOOD = "---\nname: good-agent\ndescription: Always loads.\n---\nYou are good.\n"

KEYS = st.one_of(st.sampled_from(sorted(KNOWN_KEYS)), st.text(max_size=8))
SCALAR = st.one_of(
    st.sampled_from(
        [
            "Read, Grep",
            "[Edit, Write]",
            "true",
            "'true'",
            "inherit",
            "worktree",
            "a: b",
            "'unclosed",
            '"esc \\x',
            "\t tab",
            "&anchor x",
            "*anchor",
            "!!python/object:os.system",
            "%TAG",
            "@at",
            "`tick`",
            "|",
            ">-",
            "- item",
            "{a: [b, {c: d}]}",
            "",
        ]
    ),
    st.text(st.characters(codec="utf-8", exclude_characters="\r"), max_size=30),
)
NESTED = st.integers(1, 3000).flatmap(
    lambda depth: st.sampled_from(
        ["[" * depth + "]" * depth, "{a: " * depth + "}" * depth, "[" * depth]
    )
)
BLOCK_NESTING = st.integers(1, 400).map(
    lambda depth: "\n" + "".join(" " * level + f"k{level}:\n" for level in range(depth))
)
VALUE = st.one_of(
    SCALAR,
    SCALAR,
    NESTED,
    BLOCK_NESTING,
    st.lists(SCALAR, max_size=4).map(lambda items: "".join(f"\n  - {item}" for item in items)),
)
LINE = st.one_of(
    st.tuples(KEYS, VALUE).map(lambda kv: f"{kv[0]}: {kv[1]}"),
    st.sampled_from(["---", "...", "# comment", "  indented: x", "\t", "- a", "? key", ""]),
    st.text(max_size=20),
)
NAME = st.one_of(st.sampled_from(["ok-agent", "A", "x_1", "bad name", "1st", "a:b"]), SCALAR)


@st.composite
def agent_texts(draw: st.DrawFn) -> str:
    head = draw(st.sampled_from(["", "\ufeff", "\n\n", "  \n"]))
    opening = draw(st.sampled_from(["---\n", "---\r\n", "--- \n", "", "----\n"]))
    lines = []
    if draw(st.booleans()):
        lines.append(f"name: {draw(NAME)}")
    if draw(st.booleans()):
        lines.append(f"description: {draw(SCALAR)}")
    lines += draw(st.lists(LINE, max_size=6))
    lines = draw(st.permutations(lines))
    newline = draw(st.sampled_from(["\n", "\r\n", "\r"]))
    closing = draw(st.sampled_from(["---\n", "...\n", "", "--- trailing\n"]))
    body = draw(st.text(max_size=60))
    return head + opening + newline.join(lines) + "\n" + closing + body


@fuzz(PARSE_EXAMPLES)
@given(text=agent_texts())
def test_any_text_parses_to_a_definition_or_problems(text: str) -> None:
    path = Path("/project/.wave/agents/fuzzed.md")
    definition, problems = parse_agent_file(path, text, "project")
    errors = [p for p in problems if p.severity == "error"]
    assert (definition is None) == bool(errors), problems
    lines = text.count("\n") + text.count("\r") + 2
    for problem in problems:
        assert problem.path == str(path)
        assert problem.message.strip()
        assert problem.line is None or 1 <= problem.line <= lines, (problem, text)
    if definition is not None:
        # Claude Code's names load too (one line of printable text); others get a warning.
        assert definition.name.strip() and "\n" not in definition.name
        if not NAME_PATTERN.match(definition.name):
            assert any(p.line is not None and "mention" in p.message for p in problems)
        assert definition.description.strip()


FILE_CONTENT = st.one_of(
    agent_texts().map(lambda text: text.encode("utf-8", "surrogatepass")),
    st.binary(max_size=200),
    st.just(b"\xff\xfe\x00---\n"),
)


@fuzz(FOLDER_EXAMPLES)
@given(files=st.lists(FILE_CONTENT, min_size=1, max_size=5))
def test_a_folder_of_fuzzed_files_still_loads_the_good_agent(files: list[bytes]) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        home, project = Path(tmp) / "home", Path(tmp) / "project"
        folder = project / ".wave" / "agents"
        folder.mkdir(parents=True)
        home.mkdir()
        (folder / "good-agent.md").write_text(GOOD)
        for index, content in enumerate(files):
            (folder / f"fuzz-{index}.md").write_bytes(content)
        os.symlink(folder / "loop-a.md", folder / "loop-b.md")
        os.symlink(folder / "loop-b.md", folder / "loop-a.md")
        catalog = AgentRegistry(home, env={}).load(project)
        assert catalog.get("good-agent") is not None
        assert catalog.get("Explore") is not None
        reported = {Path(p.path).name for p in catalog.problems}
        assert {"loop-a.md", "loop-b.md"} <= reported
        assert reported <= {"good-agent.md", "loop-a.md", "loop-b.md"} | {
            f"fuzz-{index}.md" for index in range(len(files))
        }
