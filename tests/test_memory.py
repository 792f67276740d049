"""Memory: AGENTS.md (or CLAUDE.md), user memory and unconditional rules, as one reminder."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from wave_ls.runtime.memory import (
    MemorySettings,
    load_memory,
    memory_reminder,
    memory_reminder_for,
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def titles(project: Path, home: Path) -> list[str]:
    return [f"{s.kind}:{s.path.name}" for s in load_memory(project, home)]


def test_no_memory_files_give_no_reminder(project: Path, home: Path) -> None:
    assert load_memory(project, home) == []
    assert memory_reminder([]) is None


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        ({"AGENTS.md": "use pnpm"}, ["project:AGENTS.md"]),
        ({"CLAUDE.md": "use yarn"}, ["project:CLAUDE.md"]),
        ({"AGENTS.md": "use pnpm", "CLAUDE.md": "use yarn"}, ["project:AGENTS.md"]),
        ({"AGENTS.md": "  \n", "CLAUDE.md": "use yarn"}, ["project:CLAUDE.md"]),
        ({"AGENTS.md": "", "CLAUDE.md": ""}, []),
    ],
)
def test_project_memory_prefers_agents_md_and_falls_back_to_claude_md(
    project: Path, home: Path, files: dict[str, str], expected: list[str]
) -> None:
    for name, text in files.items():
        write(project / name, text)
    assert titles(project, home) == expected


def test_every_source_in_reading_order(project: Path, home: Path) -> None:
    write(project / "AGENTS.md", "Always use pnpm.\n")
    write(project / ".wave" / "rules" / "testing.md", "Run vitest.")
    write(project / ".wave" / "rules" / "code-style.md", "Two spaces.")
    write(project / ".wave" / "rules" / "frontend" / "react.md", "Function components.")
    write(home / ".wave" / "AGENTS.md", "My name is Alice.")
    write(home / ".wave" / "rules" / "prefs.md", "Be brief.")
    assert titles(project, home) == [
        "project:AGENTS.md",
        "project_rule:code-style.md",
        "project_rule:react.md",  # "frontend/react.md" sorts between the two
        "project_rule:testing.md",
        "user:AGENTS.md",
        "user_rule:prefs.md",
    ]


def test_user_memory_alone(project: Path, home: Path) -> None:
    write(home / ".wave" / "AGENTS.md", "My name is Alice.")
    [source] = load_memory(project, home)
    assert (source.kind, source.content) == ("user", "My name is Alice.")


def test_reminder_text_names_each_file_and_wraps_in_system_reminder(
    project: Path, home: Path
) -> None:
    write(project / "AGENTS.md", "Always use pnpm.\n")
    write(home / ".wave" / "AGENTS.md", "My name is Alice.")
    text = memory_reminder(load_memory(project, home))
    assert text is not None
    assert text.startswith(
        "<system-reminder>\nAs you answer the user's questions, you can use the following "
        f"context:\n# Project memory ({project / 'AGENTS.md'})\nAlways use pnpm.\n\n"
        f"# User memory ({home / '.wave' / 'AGENTS.md'})\nMy name is Alice.\n"
    )
    assert text.endswith("</system-reminder>")
    assert "project's win" in text
    assert memory_reminder_for(project, home) == text


def test_disabled_settings_load_nothing(project: Path, home: Path) -> None:
    # FM-1: omitAgentsMd drops project memory, user memory and rules alike.
    write(project / "AGENTS.md", "x")
    write(project / ".wave" / "rules" / "a.md", "y")
    write(home / ".wave" / "AGENTS.md", "z")
    assert load_memory(project, home, MemorySettings(enabled=False)) == []
    assert memory_reminder_for(project, home, MemorySettings(enabled=False)) is None
    assert len(load_memory(project, home, MemorySettings())) == 3


@pytest.mark.parametrize(
    ("text", "loaded"),
    [
        ("No frontmatter at all.", "No frontmatter at all."),
        ("---\ndescription: style\n---\nTwo spaces.\n", "Two spaces."),
        ("---\n---\nEmpty header.", "Empty header."),
        ("---\npaths:\n---\nEmpty paths apply everywhere.", "Empty paths apply everywhere."),
        ('---\npaths:\n  - "src/api/**/*.ts"\n---\nOnly for the API.', None),
        ('---\npaths: ["src/**/*.ts"]\n---\nFlow style list.', None),
        ("---\npaths: src/**\n---\nOne pattern.", None),
        ("---\ndescription: only a header\n---\n", None),
    ],
)
def test_rules_with_paths_are_conditional_and_skipped(
    project: Path, home: Path, text: str, loaded: str | None
) -> None:
    write(project / ".wave" / "rules" / "rule.md", text)
    contents = [s.content for s in load_memory(project, home)]
    assert contents == ([loaded] if loaded else [])


def test_only_markdown_rules_are_read(project: Path, home: Path) -> None:
    write(project / ".wave" / "rules" / "notes.txt", "not a rule")
    write(project / ".wave" / "rules" / "a.md", "a rule")
    assert titles(project, home) == ["project_rule:a.md"]


@pytest.mark.parametrize(
    "text",
    [
        "---\npaths: [unclosed\n---\nBroken YAML.",
        "---\npaths: src/**\nNo closing line, so the header never ends.",
    ],
)
def test_rule_with_broken_frontmatter_is_skipped_with_a_warning(
    project: Path, home: Path, text: str, caplog: pytest.LogCaptureFixture
) -> None:
    write(project / ".wave" / "rules" / "broken.md", text)
    write(project / ".wave" / "rules" / "good.md", "Still loaded.")
    with caplog.at_level(logging.WARNING, logger="wave_ls.runtime.memory"):
        assert [s.content for s in load_memory(project, home)] == ["Still loaded."]
    assert "broken.md" in caplog.text


def test_unreadable_file_is_skipped_with_a_warning(
    project: Path, home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    (project / "AGENTS.md").write_bytes(b"\xff\xfe not utf-8 \x80")
    write(home / ".wave" / "AGENTS.md", "User memory still works.")
    with caplog.at_level(logging.WARNING, logger="wave_ls.runtime.memory"):
        sources = load_memory(project, home)
    assert [s.kind for s in sources] == ["user"]
    assert "AGENTS.md" in caplog.text and "skipped" in caplog.text


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads any file")
def test_file_without_read_permission_is_skipped(
    project: Path, home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = write(project / ".wave" / "rules" / "secret.md", "hidden")
    path.chmod(0)
    try:
        with caplog.at_level(logging.WARNING, logger="wave_ls.runtime.memory"):
            assert load_memory(project, home) == []
        assert "secret.md" in caplog.text
    finally:
        path.chmod(0o644)


def test_a_directory_named_agents_md_is_not_memory(project: Path, home: Path) -> None:
    (project / "AGENTS.md").mkdir()
    write(project / "CLAUDE.md", "fallback")
    assert titles(project, home) == ["project:CLAUDE.md"]


def test_symlinked_rules_are_followed_and_loops_do_not_hang(
    project: Path, home: Path, tmp_path: Path
) -> None:
    shared = tmp_path / "shared-rules"
    write(shared / "team.md", "Team rule.")
    rules = project / ".wave" / "rules"
    rules.mkdir(parents=True)
    (rules / "shared").symlink_to(shared)
    (shared / "loop").symlink_to(shared)  # a cycle
    assert [s.content for s in load_memory(project, home)] == ["Team rule."]


def test_home_as_project_reads_each_file_once(home: Path) -> None:
    write(home / ".wave" / "rules" / "a.md", "once")
    assert [s.content for s in load_memory(home, home)] == ["once"]


def test_changed_file_is_read_again(project: Path, home: Path) -> None:
    path = write(project / "AGENTS.md", "first")
    assert load_memory(project, home)[0].content == "first"
    path.write_text("second version", encoding="utf-8")
    os.utime(path, ns=(path.stat().st_mtime_ns + 10**9,) * 2)
    assert load_memory(project, home)[0].content == "second version"
    path.unlink()
    assert load_memory(project, home) == []


async def test_memory_is_read_once_per_turn(project: Path, home: Path) -> None:
    # Issue 12: memory was read again at every model round. A change made during a turn
    # (here by the agent's own Bash call) reaches the model from the next turn on.
    from tests.support.fake_model import FakeModelServer, call, reply, route
    from wave_ls.runtime.model_client import OpenAIModelClient
    from wave_ls.session import AgentSession

    path = write(project / "AGENTS.md", "MEMORY ONE")
    rewrite = "printf 'MEMORY TWO' > AGENTS.md && touch -d '+1 minute' AGENTS.md"
    script = {
        "routes": [
            route(
                "change it",
                reply("", call("Bash", {"command": rewrite})),
                reply("Changed."),
            ),
            route("and now", reply("Now.")),
        ]
    }
    with FakeModelServer(script) as model:
        session = AgentSession(
            cwd=project,
            home=home,
            model="m",
            client=OpenAIModelClient(model.base_url, "k"),
            permission_mode="bypassPermissions",
            persist=False,
        )
        assert (await session.send("change it")).text == "Changed."
        assert (await session.send("and now")).text == "Now."
        bodies = model.chat_bodies()
    assert path.read_text() == "MEMORY TWO"
    memories = [str(body["messages"][1]["content"]) for body in bodies]
    assert ["MEMORY ONE" in m for m in memories] == [True, True, False]
    assert "MEMORY TWO" in memories[2]
