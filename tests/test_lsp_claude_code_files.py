"""Agent files written for Claude Code, end to end over LSP (issue 24): a real server, the
offline model, files as users copy them from public collections."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.fake_model import FakeModelServer, call, reply, route
from tests.support.lsp import capabilities, server_env, wave_client

# As the collections write them: an unquoted ': ' and '\n' in the description, Claude
# Code's MultiEdit and TodoWrite, a longer dash run closing the frontmatter.
EDITOR = """\
---
name: fixer
description: Use this agent when: a typo needs fixing.\\n\\nExamples: "fix the typo"
tools: Read, MultiEdit, TodoWrite
-----
You fix typos.
"""

SPACED = """\
---
name: Python Security Expert
description: Reviews Python code for security issues.
tools: Read Grep
---
You review.
"""


def write_agent(project: Path, file: str, text: str) -> None:
    folder = project / ".wave" / "agents"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / file).write_text(text, encoding="utf-8")


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools", [])]


def bodies_for(fake: FakeModelServer, text: str) -> list[dict[str, Any]]:
    return [
        body
        for body in fake.chat_bodies()
        if any(text in (m.get("content") or "") for m in body["messages"] if m["role"] == "user")
    ]


async def test_a_claude_code_file_with_multiedit_can_edit_a_file(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    write_agent(project, "fixer.md", EDITOR)
    (project / "notes.txt").write_text("teh answer\n")
    task = "Fix the typo in notes.txt."
    edit = {"file_path": "notes.txt", "old_string": "teh", "new_string": "the"}
    fake_model.set_script(
        {
            "routes": [
                route(
                    "fix the typo please",
                    reply(
                        "",
                        call(
                            "Agent",
                            {"description": "Fix", "prompt": task, "subagent_type": "fixer"},
                        ),
                    ),
                    reply("Fixed."),
                ),
                route(task, reply("", call("Edit", edit)), reply("Done: notes.txt fixed.")),
            ]
        }
    )
    async with wave_client(server_env(home, fake_model.base_url), caps=capabilities()) as client:
        listed = await client.request("wave/agents/list", {"cwd": str(project)})
        fixer = next(a for a in listed["agents"] if a["name"] == "fixer")
        assert fixer["description"] == (
            'Use this agent when: a typo needs fixing.\n\nExamples: "fix the typo"'
        )
        assert fixer["tools"] == "Read, Edit"
        problems = [p for p in listed["problems"] if p["path"].endswith("fixer.md")]
        assert {p["severity"] for p in problems} == {"warning", "info"}
        assert any("MultiEdit -> Edit" in p["message"] for p in problems)
        sid = (
            await client.request(
                "wave/session/new", {"cwd": str(project), "permissionMode": "acceptEdits"}
            )
        )["sessionId"]
        result = await client.request(
            "wave/chat/send", {"sessionId": sid, "text": "fix the typo please"}
        )
    assert result["status"] == "completed"
    [first, _second] = bodies_for(fake_model, task)
    assert tool_names(first) == ["Read", "Edit"]
    assert (project / "notes.txt").read_text() == "the answer\n"


async def test_a_name_with_spaces_is_delegable_and_mentionable(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    write_agent(project, "security.md", SPACED)
    task = "Review app.py."
    fake_model.set_script(
        {
            "routes": [
                route(
                    "[@agent:Python-Security-Expert] review",
                    reply(
                        "",
                        call(
                            "Agent",
                            {
                                "description": "Review",
                                "prompt": task,
                                "subagent_type": "Python Security Expert",
                            },
                        ),
                    ),
                    reply("Reviewed."),
                ),
                route(task, reply("No issues.")),
            ]
        }
    )
    async with wave_client(server_env(home, fake_model.base_url), caps=capabilities()) as client:
        sid = (await client.request("wave/session/new", {"cwd": str(project)}))["sessionId"]
        result = await client.request(
            "wave/chat/send",
            {"sessionId": sid, "text": "[@agent:Python-Security-Expert] review app.py"},
        )
    assert result["status"] == "completed" and result["text"] == "Reviewed."
    main = fake_model.chat_bodies()[0]
    reminder = main["messages"][-1]["content"]
    assert 'mentioned the subagent "Python Security Expert"' in reminder
    assert "`subagent_type=Python Security Expert`" in reminder
    [sub] = bodies_for(fake_model, task)
    assert tool_names(sub) == ["Read", "Grep"]
    final = fake_model.chat_bodies()[-1]
    assert [m["content"] for m in final["messages"] if m["role"] == "tool"] == ["No issues."]


async def test_an_agent_in_a_claude_subdirectory_is_listed_and_delegated_to(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # Issue 24 point 1, over LSP: .claude/agents/sub/x.md, with its path and source.
    path = project / ".claude" / "agents" / "sub" / "x.md"
    path.parent.mkdir(parents=True)
    path.write_text("---\nname: x\ndescription: Does x things.\ntools: Read\n---\nYou do x.\n")
    task = "Do the x thing."
    fake_model.set_script(
        {
            "routes": [
                route(
                    "please do x",
                    reply(
                        "",
                        call("Agent", {"description": "X", "prompt": task, "subagent_type": "x"}),
                    ),
                    reply("x is done."),
                ),
                route(task, reply("Did x.")),
            ]
        }
    )
    async with wave_client(server_env(home, fake_model.base_url), caps=capabilities()) as client:
        listed = await client.request("wave/agents/list", {"cwd": str(project)})
        [x] = [a for a in listed["agents"] if a["name"] == "x"]
        assert (x["source"], x["path"]) == ("project", str(path))
        sid = (await client.request("wave/session/new", {"cwd": str(project)}))["sessionId"]
        result = await client.request("wave/chat/send", {"sessionId": sid, "text": "please do x"})
    assert result["text"] == "x is done."
    [sub] = bodies_for(fake_model, task)
    assert sub["messages"][0]["content"].startswith("You do x.")
    assert tool_names(sub) == ["Read"]
