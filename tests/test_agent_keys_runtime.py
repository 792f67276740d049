"""Claude Code's subagent keys at runtime, end to end over LSP (issue 24, point 6).

A real ``wave-ls`` process and the offline model: each key changes what the subagent does
(its requests, its tools' outcomes, its files), and the main agent still reads only the
subagent's own text (FAIL-3).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.background import script, send, started_task, tasks_of, wait_task, wave_client
from tests.support.fake_model import FakeModelServer, call, reply, route
from tests.support.lsp import WaveClient, capabilities, server_env


def write_agent(project: Path, name: str, keys: str, body: str = "You help.") -> None:
    folder = project / ".wave" / "agents"
    folder.mkdir(parents=True, exist_ok=True)
    text = f"---\nname: {name}\ndescription: Helps with {name}.\n{keys.strip()}\n---\n{body}\n"
    (folder / f"{name}.md").write_text(text, encoding="utf-8")


def delegate(subagent_type: str, prompt: str, **extra: Any) -> dict[str, Any]:
    args = {"description": "Do it", "prompt": prompt, "subagent_type": subagent_type, **extra}
    return call("Agent", args)


def bodies_for(fake: FakeModelServer, text: str) -> list[dict[str, Any]]:
    """The requests of the conversation whose user messages contain ``text``."""
    return [
        body
        for body in fake.chat_bodies()
        if any(text in (m.get("content") or "") for m in body["messages"] if m["role"] == "user")
    ]


def main_bodies(fake: FakeModelServer, text: str) -> list[dict[str, Any]]:
    return [body for body in bodies_for(fake, text) if "Agent" in tool_names(body)]


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools") or []]


def tool_results(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def system_prompt(body: dict[str, Any]) -> str:
    return str(body["messages"][0]["content"])


def agent_blocks(client: WaveClient) -> list[dict[str, Any]]:
    return [u for u in client.updates if u["kind"] == "toolBlock" and u["name"] == "Agent"]


async def chat(
    fake: FakeModelServer,
    home: Path,
    project: Path,
    text: str,
    *,
    mode: str | None = None,
    permission: bool = False,
) -> WaveClient:
    """One turn in a new session (``mode``: its permission mode); the client afterwards.
    With ``permission``, the client answers every permission request with an allow."""
    caps = capabilities("visual-studio-code", permission=permission)
    async with wave_client(server_env(home, fake.base_url), caps=caps) as client:
        if permission:
            client.permission_answer = lambda _params: {"allowed": True}
        params = {"cwd": str(project), **({"permissionMode": mode} if mode else {})}
        sid = (await client.request("wave/session/new", params))["sessionId"]
        await send(client, sid, text)
        return client


async def test_max_turns_stops_the_subagent_with_what_it_has(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # maxTurns: at most that many model requests; the result is the subagent's text
    # (FAIL-1, FAIL-3), or the failure rule when it has none (FAIL-2); color on the block.
    write_agent(project, "brief", "maxTurns: 2\ncolor: cyan")
    write_agent(project, "mute", "maxTurns: 1")
    looking = reply("Still looking.", call("Glob", {"pattern": "*.md"}))
    fake_model.set_script(
        script(
            route(
                "look around",
                reply("", delegate("brief", "BRIEF TASK"), delegate("mute", "MUTE TASK")),
                reply("main done"),
            ),
            route("BRIEF TASK", reply("First look.", call("Glob", {"pattern": "*"})), looking),
            route("MUTE TASK", reply("", call("Glob", {"pattern": "*"})), reply("never sent")),
        )
    )
    client = await chat(fake_model, home, project, "look around")
    assert len(bodies_for(fake_model, "BRIEF TASK")) == 2
    assert len(bodies_for(fake_model, "MUTE TASK")) == 1
    results = sorted(tool_results(main_bodies(fake_model, "look around")[-1]))
    assert results == [
        "Agent delegation failed: reached its maxTurns limit (1 model requests)",
        "Still looking.",
    ]
    ended = [b for b in agent_blocks(client) if b["status"] in ("completed", "failed")]
    by_type = {b["details"]["subagentType"]: b["details"] for b in ended}
    assert by_type["brief"]["maxTurnsReached"] is True
    assert by_type["brief"]["status"] == "completed"
    assert by_type["brief"]["summary"].startswith("Done, maxTurns reached")
    assert by_type["brief"]["color"] == "cyan"
    assert by_type["mute"]["maxTurnsReached"] is True
    assert "color" not in by_type["mute"]


async def test_background_definition_always_runs_in_the_background(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # background: true: the call returns a task id at once, as with run_in_background.
    write_agent(project, "slowpoke", "background: true")
    fake_model.set_script(
        script(
            route("start it", reply("", delegate("slowpoke", "SLOW TASK")), reply("started")),
            route("SLOW TASK", reply("SLOW RESULT", delay=1.0)),
        )
    )
    caps = capabilities("visual-studio-code")
    async with wave_client(server_env(home, fake_model.base_url), caps=caps) as client:
        sid = (await client.request("wave/session/new", {"cwd": str(project)}))["sessionId"]
        first = await send(client, sid, "start it")
        assert first["text"] == "started"
        launched = tool_results(main_bodies(fake_model, "start it")[-1])[0]
        assert launched.startswith("Started slowpoke in the background.")
        task_id, _session, _output = started_task(launched)
        listed = (await tasks_of(client, sid))[task_id]
        assert listed["subagentType"] == "slowpoke"
        done = await wait_task(client, task_id, "completed")
        assert done["subagentType"] == "slowpoke"
        # One progress, the run's, as for run_in_background: the launching call has none.
        assert f"wave/agent/{task_id}" in client.progress_reports
        assert f"wave/agent/{listed['toolCallId']}" not in client.progress_reports


EDIT = {"file_path": "src/app.py", "old_string": "return 41", "new_string": "return 42"}


@pytest.mark.parametrize(
    ("session_mode", "agent_mode", "edited"),
    [
        (None, "acceptEdits", True),  # the agent's mode: an edit without a prompt
        (None, None, False),  # the parent's default: asked, and nobody can answer
        ("plan", "acceptEdits", False),  # a plan-mode parent is never loosened
        ("plan", "bypassPermissions", False),
        ("bypassPermissions", "plan", True),  # a bypassing parent takes precedence
    ],
)
async def test_permission_mode_as_claude_code_applies_it(
    session_mode: str | None,
    agent_mode: str | None,
    edited: bool,
    fake_model: FakeModelServer,
    home: Path,
    project: Path,
) -> None:
    write_agent(project, "editor", f"permissionMode: {agent_mode}" if agent_mode else "")
    fake_model.set_script(
        script(
            route("edit it", reply("", delegate("editor", "EDIT TASK")), reply("ok")),
            route("EDIT TASK", reply("", call("Edit", EDIT)), reply("edit tried")),
        )
    )
    await chat(fake_model, home, project, "edit it", mode=session_mode)
    text = (project / "src/app.py").read_text()
    assert ("return 42" in text) is edited
    outcome = tool_results(bodies_for(fake_model, "EDIT TASK")[-1])[0]
    if session_mode == "plan":
        assert outcome.startswith("Plan mode is active")


async def test_dont_ask_denies_what_would_need_a_prompt_without_asking(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # dontAsk: a call that needs a prompt is denied, nobody is asked; what needs none runs.
    write_agent(project, "quiet", "permissionMode: dontAsk")
    fake_model.set_script(
        script(
            route("be quiet", reply("", delegate("quiet", "QUIET TASK")), reply("ok")),
            route(
                "QUIET TASK",
                reply("", call("Bash", {"command": "touch made.txt"})),
                reply("", call("Bash", {"command": "ls"})),
                reply("quiet done"),
            ),
        )
    )
    client = await chat(fake_model, home, project, "be quiet", permission=True)
    assert client.permission_requests == []
    assert not (project / "made.txt").exists()
    denied, listed = tool_results(bodies_for(fake_model, "QUIET TASK")[-1])
    assert "dontAsk" in denied and "denied" in denied
    assert "README.md" in listed


async def test_effort_is_sent_and_dropped_where_the_endpoint_rejects_it(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # effort: the request's reasoning_effort; an endpoint that refuses the parameter gets
    # the request again without it, and this client no longer sends it.
    write_agent(project, "thinker", "effort: high")
    rejection = {
        "status": 400,
        "times": 1,
        "body": {
            "error": {
                "message": "Unrecognized request argument supplied: reasoning_effort",
                "type": "invalid_request_error",
                "param": "reasoning_effort",
                "code": None,
            }
        },
    }
    fake_model.set_script(
        script(
            route(
                "think twice",
                reply("", delegate("thinker", "FIRST THOUGHT")),
                reply("", delegate("thinker", "SECOND THOUGHT")),
                reply("thought twice"),
            ),
            route("FIRST THOUGHT", reply("first", fault=rejection)),
            route("SECOND THOUGHT", reply("second")),
        )
    )
    await chat(fake_model, home, project, "think twice")
    first = bodies_for(fake_model, "FIRST THOUGHT")
    assert [body.get("reasoning_effort") for body in first] == ["high", None]
    assert [body.get("reasoning_effort") for body in bodies_for(fake_model, "SECOND THOUGHT")] == [
        None
    ]
    assert all("reasoning_effort" not in body for body in main_bodies(fake_model, "think twice"))
    assert tool_results(main_bodies(fake_model, "think twice")[-1]) == ["first", "second"]


async def test_effort_reaches_an_endpoint_that_accepts_it(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    write_agent(project, "thinker", "effort: low")
    fake_model.set_script(
        script(
            route("think", reply("", delegate("thinker", "LOW THOUGHT")), reply("ok")),
            route("LOW THOUGHT", reply("done")),
        )
    )
    await chat(fake_model, home, project, "think")
    [body] = bodies_for(fake_model, "LOW THOUGHT")
    assert body["reasoning_effort"] == "low"


async def test_skills_are_in_the_subagent_context_from_its_start(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    skill = project / ".wave" / "skills" / "house-style" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: house-style\ndescription: x\n---\nHOUSE STYLE: use tabs.\n")
    claude_skill = home / ".claude" / "skills" / "commit-msg" / "SKILL.md"
    claude_skill.parent.mkdir(parents=True)
    claude_skill.write_text("COMMIT MESSAGES: imperative mood.\n")
    write_agent(project, "styled", "skills: [house-style, commit-msg, no-such-skill]")
    fake_model.set_script(
        script(
            route("style it", reply("", delegate("styled", "STYLE TASK")), reply("ok")),
            route("STYLE TASK", reply("styled")),
        )
    )
    await chat(fake_model, home, project, "style it")
    [first] = bodies_for(fake_model, "STYLE TASK")
    prompt = system_prompt(first)
    assert "HOUSE STYLE: use tabs." in prompt and "name: house-style" not in prompt
    assert "COMMIT MESSAGES: imperative mood." in prompt
    assert "'no-such-skill'" in prompt and "not found" in prompt
    assert tool_results(main_bodies(fake_model, "style it")[-1]) == ["styled"]


async def test_memory_folder_is_read_at_the_start_and_writable(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # memory: MEMORY.md in the system prompt; Write there runs without a prompt (nobody
    # could answer one here) also from a worktree-isolated run; elsewhere it is still asked.
    folder = project / ".wave" / "agent-memory" / "keeper"
    folder.mkdir(parents=True)
    (folder / "MEMORY.md").write_text("REMEMBERED: the API is in src/app.py\n")
    user_folder = home / ".wave" / "agent-memory" / "roamer"
    write_agent(project, "keeper", "memory: project\ntools: Read, Grep")
    write_agent(project, "roamer", "memory: user\nisolation: worktree\ntools: Grep")
    index = str(folder / "MEMORY.md")
    fake_model.set_script(
        script(
            route(
                "remember",
                reply("", delegate("keeper", "KEEP TASK"), delegate("roamer", "ROAM TASK")),
                reply("ok"),
            ),
            route(
                "KEEP TASK",
                reply("", call("Write", {"file_path": index, "content": "REMEMBERED: v2\n"})),
                reply("", call("Write", {"file_path": str(project / "x.txt"), "content": "x"})),
                reply("kept"),
            ),
            route(
                "ROAM TASK",
                reply(
                    "",
                    call("Write", {"file_path": str(user_folder / "notes.md"), "content": "n"}),
                ),
                reply("roamed"),
            ),
        )
    )
    await chat(fake_model, home, project, "remember")
    keep = bodies_for(fake_model, "KEEP TASK")
    assert "REMEMBERED: the API is in src/app.py" in system_prompt(keep[0])
    assert str(folder) in system_prompt(keep[0])
    assert {"Read", "Write", "Edit", "Grep"} <= set(tool_names(keep[0]))
    assert (folder / "MEMORY.md").read_text() == "REMEMBERED: v2\n"
    assert not (project / "x.txt").exists()
    assert "denied" in tool_results(keep[-1])[-1]
    roam = bodies_for(fake_model, "ROAM TASK")
    assert "MEMORY.md does not exist yet" in system_prompt(roam[0])
    assert (user_folder / "notes.md").read_text() == "n"


HOOKED = """\
tools: Read, Bash
hooks:
  PreToolUse:
    - matcher: "Bash"
      hooks:
        - type: command
          command: "cat > {pre}; echo 'no shell here, use Read' >&2; exit 2"
  PostToolUse:
    - matcher: "Read|Glob"
      hooks:
        - type: command
          command: "cat > {post}"
  Stop:
    - hooks:
        - type: command
          command: "cat > {stop}"
"""


async def test_agent_hooks_block_observe_and_end(
    fake_model: FakeModelServer, home: Path, project: Path, tmp_path: Path
) -> None:
    # hooks: PreToolUse exit 2 blocks with stderr for the model; PostToolUse gets the tool's
    # response on stdin; Stop runs at the end (as SubagentStop, as Claude Code runs it).
    pre, post, stop = tmp_path / "pre.json", tmp_path / "post.json", tmp_path / "stop.json"
    write_agent(project, "hooked", HOOKED.format(pre=pre, post=post, stop=stop))
    fake_model.set_script(
        script(
            route("hook it", reply("", delegate("hooked", "HOOK TASK")), reply("ok")),
            route(
                "HOOK TASK",
                reply("", call("Bash", {"command": "ls"})),
                reply("", call("Read", {"file_path": "README.md"})),
                reply("hooked done"),
            ),
        )
    )
    await chat(fake_model, home, project, "hook it", mode="bypassPermissions")
    blocked, read = tool_results(bodies_for(fake_model, "HOOK TASK")[-1])
    assert blocked == "no shell here, use Read"
    assert "# demo" in read
    pre_input = json.loads(pre.read_text())
    assert pre_input["hook_event_name"] == "PreToolUse"
    assert pre_input["tool_name"] == "Bash" and pre_input["tool_input"] == {"command": "ls"}
    post_input = json.loads(post.read_text())
    assert post_input["hook_event_name"] == "PostToolUse"
    assert post_input["tool_input"] == {"file_path": "README.md"}
    assert "# demo" in post_input["tool_response"]["content"]
    assert post_input["cwd"] == str(project) and post_input["agent_type"] == "hooked"
    stop_input = json.loads(stop.read_text())
    assert stop_input["hook_event_name"] == "SubagentStop"
    assert stop_input["last_assistant_message"] == "hooked done"
    assert tool_results(main_bodies(fake_model, "hook it")[-1]) == ["hooked done"]


async def test_a_subagent_with_only_mcp_tools_says_it_ran_without_tools(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # Point 4: never silently without tools; the main model reads why.
    write_agent(project, "gh", "tools: mcp__github__create_issue")
    fake_model.set_script(
        script(
            route("file it", reply("", delegate("gh", "GH TASK")), reply("ok")),
            route("GH TASK", reply("I have no tools.")),
        )
    )
    await chat(fake_model, home, project, "file it")
    [sub] = bodies_for(fake_model, "GH TASK")
    assert tool_names(sub) == []
    [result] = tool_results(main_bodies(fake_model, "file it")[-1])
    assert result.startswith("I have no tools.\n\nnote: this subagent lists only MCP tools")
    assert "(mcp__github__create_issue)" in result and "ran without tools" in result


async def test_a_stop_hook_that_blocks_sends_the_subagent_back_once(
    fake_model: FakeModelServer, home: Path, project: Path, tmp_path: Path
) -> None:
    # Stop: a JSON decision "block" gives its reason to the subagent, which goes on; the
    # hook sees stop_hook_active the second time and lets it end.
    hook = tmp_path / "stop.sh"
    hook.write_text(
        "grep -q '\"stop_hook_active\": false' &&"
        ' echo \'{"decision": "block", "reason": "CHECK THE TESTS TOO"}\'\n'
        "exit 0\n"
    )
    keys = (
        f'hooks:\n  Stop:\n    - hooks:\n        - type: command\n          command: "bash {hook}"'
    )
    write_agent(project, "careful", keys)
    fake_model.set_script(
        script(
            route("be careful", reply("", delegate("careful", "CAREFUL TASK")), reply("ok")),
            route("CAREFUL TASK", reply("first answer"), reply("tests checked too")),
        )
    )
    await chat(fake_model, home, project, "be careful")
    sub = bodies_for(fake_model, "CAREFUL TASK")
    assert len(sub) == 2
    assert sub[1]["messages"][-1] == {"role": "user", "content": "CHECK THE TESTS TOO"}
    assert tool_results(main_bodies(fake_model, "be careful")[-1]) == ["tests checked too"]
