"""``wave/agents/list`` and ``wave/chatInput/completion`` over LSP against a real server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.lsp import CLIENTS, capabilities, server_env, wave_client


def agent_file(name: str, description: str, extra: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\nYou are {name}.\n"


def put(folder: Path, name: str, text: str) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{name}.md"
    path.write_text(text, encoding="utf-8")
    return path


def by_name(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {agent["name"]: agent for agent in result["agents"]}


@pytest.mark.parametrize("client_name", CLIENTS)
async def test_agents_list_with_overrides_and_problems(
    client_name: str, home: Path, project: Path
) -> None:
    # LOAD-1, LOAD-2, LOAD-3, PLAN-4
    user_dir, project_dir = home / ".wave" / "agents", project / ".wave" / "agents"
    put(user_dir, "reviewer", agent_file("reviewer", "User reviewer"))
    put(user_dir, "helper", agent_file("helper", "User-only helper"))
    put(project_dir, "reviewer", agent_file("reviewer", "Project reviewer", "tools: Read, Grep\n"))
    put(project_dir, "Plan", agent_file("Plan", "Our planner"))
    put(project_dir, "broken", "---\nname: broken\ndescription: a: b\n  more: c\n---\nbody\n")
    async with wave_client(server_env(home), caps=capabilities(client_name)) as client:
        result = await client.request("wave/agents/list", {"cwd": str(project)})
    agents = by_name(result)
    assert agents["reviewer"]["description"] == "Project reviewer"
    assert agents["reviewer"]["source"] == "project"
    assert agents["reviewer"]["tools"] == "Read, Grep"
    assert agents["reviewer"]["path"] == str(project_dir / "reviewer.md")
    assert agents["helper"]["source"] == "user"
    assert agents["Plan"]["source"] == "project" and agents["Plan"]["description"] == "Our planner"
    assert agents["Explore"]["source"] == "builtin" and agents["Explore"]["model"] == "inherit"
    assert "broken" not in agents
    [problem] = result["problems"]
    assert problem["path"].endswith("broken.md") and problem["line"] == 3
    assert "quote" in problem["message"] and problem["severity"] == "error"


async def test_completion_orders_agents_before_files_and_filters(home: Path, project: Path) -> None:
    # MENTION-1, MENTION-2
    project_dir = project / ".wave" / "agents"
    put(project_dir, "test-runner", agent_file("test-runner", "Runs the tests"))
    put(project_dir, "docs-writer", agent_file("docs-writer", "Writes documentation for tests"))
    (project / "tests").mkdir()
    (project / "tests" / "test_app.py").write_text("")
    async with wave_client(server_env(home), root=project) as client:
        everything = await client.request("wave/chatInput/completion", {"text": "look at @"})
        labels = [item["label"] for item in everything["items"]]
        agent_items = [i for i in everything["items"] if i["insertText"].startswith("[@agent:")]
        file_items = [i for i in everything["items"] if i["insertText"].startswith("[@file:")]
        assert {"Explore", "Plan", "general-purpose", "test-runner", "docs-writer"} <= set(labels)
        assert file_items, "files are offered besides subagents"
        ordered = sorted(everything["items"], key=lambda i: i["sortText"])
        assert ordered[: len(agent_items)] == sorted(agent_items, key=lambda i: i["sortText"])
        runner = next(i for i in agent_items if i["label"] == "test-runner")
        assert runner["insertText"] == "[@agent:test-runner]"
        assert runner["detail"] == "Runs the tests"

        filtered = await client.request(
            "wave/chatInput/completion", {"text": "ask @tes please", "cursor": 8}
        )
        agents = [
            i["label"]
            for i in sorted(filtered["items"], key=lambda i: i["sortText"])
            if i["insertText"].startswith("[@agent:")
        ]
        assert agents[0] == "test-runner"  # name prefix first
        assert "docs-writer" in agents  # description match
        assert "Explore" not in agents
        files = [i["label"] for i in filtered["items"] if i["insertText"].startswith("[@file:")]
        assert "tests/test_app.py" in files

        nothing = await client.request("wave/chatInput/completion", {"text": "no mention here"})
        assert nothing["items"] == []


async def test_a_deleted_definition_disappears_mid_session(home: Path, project: Path) -> None:
    # MENTION-9
    path = put(
        project / ".wave" / "agents", "short-lived", agent_file("short-lived", "Here for now")
    )
    async with wave_client(server_env(home)) as client:
        sid = (await client.request("wave/session/new", {"cwd": str(project)}))["sessionId"]
        before = await client.request(
            "wave/chatInput/completion", {"sessionId": sid, "text": "@short"}
        )
        assert [i["label"] for i in before["items"] if i["label"] == "short-lived"] == [
            "short-lived"
        ]
        path.unlink()
        after = await client.request(
            "wave/chatInput/completion", {"sessionId": sid, "text": "@short"}
        )
        assert "short-lived" not in [i["label"] for i in after["items"]]
        listed = await client.request("wave/agents/list", {"cwd": str(project)})
        assert "short-lived" not in by_name(listed)
