"""Claude Code's agent folders end to end over LSP (issue 24, point 1; PROTOCOL.md "Added for
Claude Code users"): a real server, the offline model, ``.claude/agents`` of the project and
of the user, files in subfolders, and ``{"agents": {"claudeDirs": false}}``."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from tests.support.agent_docs import AgentEditor
from tests.support.fake_model import FakeModelServer, call, reply, route
from tests.support.lsp import WaveClient, capabilities, server_env, wave_client
from tests.support.waiting import until


def write(path: Path, name: str, body: str, extra: str = "") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f"---\nname: {name}\ndescription: Does {name} things.\n{extra}---\n{body}\n",
        encoding="utf-8",
    )
    return path


def agents_by_name(listed: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {agent["name"]: agent for agent in listed["agents"]}


def bodies_for(fake: FakeModelServer, text: str) -> list[dict[str, Any]]:
    """The model requests whose user messages hold ``text`` (a subagent's task)."""
    return [
        body
        for body in fake.chat_bodies()
        if any(text in (m.get("content") or "") for m in body["messages"] if m["role"] == "user")
    ]


async def listed_until(
    client: WaveClient, cwd: Path, holds: Any, timeout: float = 5.0
) -> dict[str, Any]:
    """``wave/agents/list`` once ``holds`` is true of it (a change on disk shows within the
    watcher's sweep)."""
    listed: dict[str, Any] = {}

    async def listed_now() -> bool:
        nonlocal listed
        listed = await client.request("wave/agents/list", {"cwd": str(cwd)})
        return bool(holds(listed))

    with contextlib.suppress(AssertionError):  # the caller's assertion shows what was listed
        await until(listed_now, timeout, "the listing")
    return listed


async def test_an_agent_in_a_claude_subfolder_is_listed_and_delegated_to(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # LOAD-1 for Claude Code's folder: .claude/agents/sub/x.md, named by its frontmatter.
    path = write(project / ".claude" / "agents" / "sub" / "x.md", "x", "You do x.", "tools: Read\n")
    task = "Do the x thing now."
    launch = call("Agent", {"description": "X", "prompt": task, "subagent_type": "x"})
    fake_model.set_script(
        {
            "routes": [
                route("please do x", reply("", launch), reply("x is done.")),
                route(task, reply("Did x.")),
            ]
        }
    )
    async with wave_client(server_env(home, fake_model.base_url), caps=capabilities()) as client:
        listed = await client.request("wave/agents/list", {"cwd": str(project)})
        x = agents_by_name(listed)["x"]
        assert (x["source"], x["path"]) == ("project", str(path))
        assert listed["problems"] == []
        sid = (await client.request("wave/session/new", {"cwd": str(project)}))["sessionId"]
        result = await client.request("wave/chat/send", {"sessionId": sid, "text": "please do x"})
    assert result["text"] == "x is done."
    [sub] = bodies_for(fake_model, task)  # the subagent's request reached the model
    assert sub["messages"][0]["content"].startswith("You do x.")
    assert [t["function"]["name"] for t in sub.get("tools", [])] == ["Read"]
    final = fake_model.chat_bodies()[-1]
    assert [m["content"] for m in final["messages"] if m["role"] == "tool"] == ["Did x."]


async def test_the_scopes_and_their_two_folders_in_wave_agents_list(
    home: Path, project: Path
) -> None:
    # LOAD-2, LOAD-3: the user's .claude folder below the user's .wave folder, the project
    # (either folder) over the user.
    user_claude = write(home / ".claude" / "agents" / "team" / "helper.md", "helper", "U")
    write(home / ".claude" / "agents" / "both.md", "both", "user claude")
    user_wave = write(home / ".wave" / "agents" / "both.md", "both", "user wave")
    write(home / ".wave" / "agents" / "shared.md", "shared", "user wave")
    project_claude = write(project / ".claude" / "agents" / "shared.md", "shared", "P")
    async with wave_client(server_env(home), root=project) as client:
        listed = await client.request("wave/agents/list", {"cwd": str(project)})
    agents = agents_by_name(listed)
    assert (agents["helper"]["source"], agents["helper"]["path"]) == ("user", str(user_claude))
    assert (agents["both"]["source"], agents["both"]["path"]) == ("user", str(user_wave))
    assert (agents["shared"]["source"], agents["shared"]["path"]) == (
        "project",
        str(project_claude),
    )
    assert listed["problems"] == []


async def test_claude_dirs_false_turns_both_folders_off_while_the_server_runs(
    home: Path, project: Path
) -> None:
    write(project / ".claude" / "agents" / "p.md", "project-claude", "P")
    write(home / ".claude" / "agents" / "u.md", "user-claude", "U")
    settings = project / ".wave" / "settings.json"
    settings.parent.mkdir(parents=True)
    async with wave_client(server_env(home), root=project) as client:
        listed = await client.request("wave/agents/list", {"cwd": str(project)})
        assert {"project-claude", "user-claude"} <= set(agents_by_name(listed))
        settings.write_text(json.dumps({"agents": {"claudeDirs": False}}))
        listed = await listed_until(client, project, lambda r: "user-claude" not in str(r))
        assert not {"project-claude", "user-claude"} & set(agents_by_name(listed))
        # A file made meanwhile in a new subfolder of the .wave folder still loads.
        write(project / ".wave" / "agents" / "new" / "w.md", "wave-one", "W")
        listed = await listed_until(client, project, lambda r: "wave-one" in str(r))
        assert "wave-one" in agents_by_name(listed)


async def test_a_claude_subfolder_file_gets_the_editor_features(home: Path, project: Path) -> None:
    # PROTOCOL.md "Agent files in the editor": a file in a folder the server loads.
    path = write(project / ".claude" / "agents" / "sub" / "fixer.md", "fixer", "You fix.")
    text = "---\nname: fixer\ndescription: Fixes.\ntools: Reed\n---\nYou fix.\n"
    async with wave_client(server_env(home), root=project) as client:
        editor = AgentEditor(client)
        uri = editor.open(path, text)
        [diagnostic] = await editor.diagnostics(uri, bool)
        assert "did you mean 'Read'" in diagnostic.message
        [fix] = await editor.fixes(uri, diagnostic)
        assert "tools: Read\n" in editor.applied(uri, fix)
        labels = {item.label for item in await editor.completion(uri, 3, 0)}
        assert "model" in labels
        assert await editor.hover(uri, 1, 1) is not None


async def test_with_claude_dirs_false_a_claude_file_gets_nothing(home: Path, project: Path) -> None:
    (project / ".wave").mkdir()
    (project / ".wave" / "settings.json").write_text('{"agents": {"claudeDirs": false}}')
    path = write(project / ".claude" / "agents" / "fixer.md", "fixer", "You fix.")
    broken = "---\nname: fixer\ndescription: Fixes.\ntools: Reed\n---\nYou fix.\n"
    probe = write(project / ".wave" / "agents" / "probe.md", "probe", "You probe.")
    async with wave_client(server_env(home), root=project) as client:
        editor = AgentEditor(client)
        uri = editor.open(path, broken)
        probe_uri = editor.open(probe, broken.replace("fixer", "probe"))
        # The probe's check was scheduled after any check of the other (and a check runs as
        # soon as it is due, in order): its diagnostics prove the other got none.
        await editor.diagnostics(probe_uri, bool)
        assert uri not in client.diagnostics
        assert await editor.completion(uri, 3, 0) == []
