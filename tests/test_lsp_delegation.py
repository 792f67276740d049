"""Subagent delegation end to end over LSP: what the model received, what the client saw."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_model import FakeModelServer, call, reply, route
from tests.support.lsp import CLIENTS, capabilities, progress_settled, server_env, wave_client
from wave_ls.agents import AgentRegistry

TEST_RUNNER = """\
---
name: test-runner
description: Use PROACTIVELY to run the tests and fix failures.
tools: Read, Grep
---
You are the test runner. Run tests and report.
"""

NO_EDITS = """\
---
name: no-edits
description: Reviews code without changing it.
disallowedTools: [Edit, Write, NoSuchTool]
---
You review code.
"""

OTHER_MODEL = """\
---
name: big-thinker
description: Thinks hard.
model: other-model
---
You think hard.
"""

WITH_MEMORY = """\
---
name: remembers
description: Uses project memory.
---
You remember.
"""

WITHOUT_MEMORY = """\
---
name: forgets
description: Ignores project memory.
omitAgentsMd: true
---
You forget.
"""

USER_PLAN = """\
---
name: Plan
description: The team's own planner.
---
You are OUR planner, not the built-in one.
"""


def write_agents(project: Path, **files: str) -> None:
    folder = project / ".wave" / "agents"
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (folder / f"{name}.md").write_text(text, encoding="utf-8")


def delegate(
    subagent_type: str | None, prompt: str, description: str = "Do a task", **extra: Any
) -> dict[str, Any]:
    args: dict[str, Any] = {"description": description, "prompt": prompt, **extra}
    if subagent_type is not None:
        args["subagent_type"] = subagent_type
    return call("Agent", args)


def bodies_for(fake: FakeModelServer, text: str) -> list[dict[str, Any]]:
    """Requests whose first user message contains ``text`` (one conversation's rounds)."""
    out = []
    for body in fake.chat_bodies():
        users = [m for m in body["messages"] if m["role"] == "user"]
        if any(text in (m.get("content") or "") for m in users):
            out.append(body)
    return out


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools", [])]


def tool_results(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


def agent_tool_description(body: dict[str, Any]) -> str:
    return next(
        t["function"]["description"] for t in body["tools"] if t["function"]["name"] == "Agent"
    )


async def chat(
    fake: FakeModelServer,
    home: Path,
    project: Path,
    text: str,
    client_name: str = "visual-studio-code",
    **session: Any,
) -> tuple[Any, dict[str, Any]]:
    """Run one turn; return the client (after the server exited) and the chat result."""
    caps = capabilities(client_name)
    async with wave_client(server_env(home, fake.base_url), caps=caps) as client:
        sid = (await client.request("wave/session/new", {"cwd": str(project), **session}))[
            "sessionId"
        ]
        result = await client.request("wave/chat/send", {"sessionId": sid, "text": text})
        await progress_settled(client)
        return client, result


async def test_agent_tool_lists_subagents_with_guidance(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # AUTO-1, AUTO-2, AUTO-3, AUTO-4, FM-4
    write_agents(project, **{"test-runner": TEST_RUNNER, "no-edits": NO_EDITS})
    fake_model.set_script({"routes": [route("fix the failing tests", reply("ok"))]})
    await chat(fake_model, home, project, "fix the failing tests")
    description = agent_tool_description(fake_model.chat_bodies()[0])
    assert (
        "- test-runner: Use PROACTIVELY to run the tests and fix failures. (Tools: Read, Grep)"
        in description
    )
    assert (
        "- no-edits: Reviews code without changing it. (Tools: All except Edit, Write)"
        in description
    )
    assert (
        "- Explore: " in description
        and "- Plan: " in description
        and "- general-purpose: " in description
    )
    assert "PROACTIVELY" in description.split("When to use it:")[1]
    assert "in parallel" in description
    assert "do the work yourself" in description
    assert "(Tools: *" not in description


async def test_unknown_or_missing_type_lists_the_available_subagents(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # TYPE-1, BI-2
    write_agents(project, **{"test-runner": TEST_RUNNER})
    fake_model.set_script(
        {
            "routes": [
                route(
                    "delegate badly",
                    reply("", delegate("nope", "x"), delegate(None, "y")),
                    reply("sorry"),
                )
            ]
        }
    )
    await chat(fake_model, home, project, "delegate badly")
    unknown, missing = tool_results(fake_model.chat_bodies()[-1])
    for text in (unknown, missing):
        assert (
            "Explore" in text
            and "Plan" in text
            and "general-purpose" in text
            and "test-runner" in text
        )
    assert "'nope' not found" in unknown
    assert "subagent_type is required" in missing


@pytest.mark.parametrize("client_name", CLIENTS)
async def test_explore_runs_in_isolation_with_its_tools(
    client_name: str, fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # BI-1, BI-3, EXP-1, EXP-2, EXP-3, EXP-4, EXP-5, CTX-1, CTX-3, PLAN-RO-1, PLAN-RO-2,
    # ACT-1, ACT-2, ACT-3, ACT-4
    (project / "AGENTS.md").write_text("PROJECT MEMORY: use tabs\n")
    task = "Find where answer is defined."
    fake_model.set_script(
        {
            "routes": [
                route(
                    "where is answer",
                    reply("Asking Explore.", delegate("Explore", task, "Find answer")),
                    reply("It is in src/app.py."),
                ),
                route(
                    task,
                    reply("", call("Grep", {"pattern": "def answer"})),
                    # slower than the 30/s coalescing, so the client sees the Grep report
                    reply("", call("Write", {"file_path": "x.txt", "content": "no"}), delay=0.2),
                    reply("answer is defined in src/app.py", delay=0.2),
                ),
            ]
        }
    )
    client, result = await chat(fake_model, home, project, "where is answer?", client_name)
    assert result["text"] == "It is in src/app.py."
    sub = bodies_for(fake_model, task)
    assert len(sub) == 3
    explore = AgentRegistry(home).load(project).get("Explore")
    assert explore is not None
    first = sub[0]
    assert first["model"] == "test-model"  # inherit, no fast model (EXP-1, EXP-2)
    assert first["messages"][0]["role"] == "system"
    assert first["messages"][0]["content"].startswith(explore.system_prompt)
    assert [m["role"] for m in first["messages"]] == ["system", "user"]  # CTX-1, no memory (EXP-3)
    assert first["messages"][1]["content"] == task
    assert "PROJECT MEMORY" not in str(first["messages"])
    names = set(tool_names(first))
    assert {"Read", "Grep", "Glob", "Bash", "WebFetch", "WebSearch", "Skill", "LSP"} <= names
    assert not names & {
        "Agent",
        "Artifact",
        "ExitPlanMode",
        "Edit",
        "Write",
        "TaskCreate",
        "TaskGet",
        "TaskUpdate",
        "TaskList",
    }
    assert tool_results(sub[2])[-1] == "Tool 'Write' not found"  # EXP-5
    assert not (project / "x.txt").exists()
    # CTX-3: the main agent gets the final text and keeps its own context.
    main_last = fake_model.chat_bodies()[-1]
    assert tool_results(main_last) == ["answer is defined in src/app.py"]
    assert "PROJECT MEMORY" in str(main_last["messages"])
    # ACT-1 (live shortResult), ACT-2 (latest tool), ACT-4 (totals at the end); ACT-3 above.
    tokens = [t for t in client.progress_reports if str(t).startswith("wave/agent/")]
    if client_name == "minimal":  # no window.workDoneProgress: no $/progress at all
        assert client.progress_reports == {}
    else:
        assert len(tokens) == 1
        reports = client.progress_reports[tokens[0]]
        assert reports[0].kind == "begin" and reports[0].title == "Explore: Find answer"
        messages = [r.message for r in reports if r.kind == "report"]
        assert any("Grep def answer" in m and "tokens" in m for m in messages)
        assert reports[-1].kind == "end"
        assert "2 tool calls" in reports[-1].message and "tokens" in reports[-1].message
    # Every client sees the block's live activity in wave/session/update.
    running = [u for u in client.updates if u["kind"] == "toolBlock" and u["name"] == "Agent"]
    assert any("Grep def answer" in (u.get("shortResult") or "") for u in running)
    blocks = [u for u in client.updates if u["kind"] == "toolBlock" and u["name"] == "Agent"]
    assert blocks[-1]["status"] == "completed"
    assert blocks[-1]["details"]["subagentType"] == "Explore"
    assert blocks[-1]["details"]["toolCalls"] == 2


async def test_tools_whitelist_and_model(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # LOAD-4, LOAD-5, FM-2, FM-3, FM-5, and no task-list tool in a subagent
    write_agents(
        project, **{"test-runner": TEST_RUNNER, "no-edits": NO_EDITS, "big-thinker": OTHER_MODEL}
    )
    fake_model.set_script(
        {
            "routes": [
                route(
                    "three delegations",
                    reply(
                        "",
                        delegate("test-runner", "RUNNER TASK"),
                        delegate("no-edits", "REVIEW TASK"),
                        delegate("big-thinker", "THINK TASK"),
                    ),
                    reply("all done"),
                ),
                route(
                    "RUNNER TASK", reply("", call("Bash", {"command": "ls"})), reply("runner done")
                ),
                route(
                    "REVIEW TASK",
                    reply(
                        "",
                        call(
                            "Edit", {"file_path": "README.md", "old_string": "#", "new_string": "!"}
                        ),
                    ),
                    reply("review done"),
                ),
                route("THINK TASK", reply("thought")),
            ]
        }
    )
    await chat(fake_model, home, project, "three delegations")
    runner = bodies_for(fake_model, "RUNNER TASK")
    assert tool_names(runner[0]) == ["Read", "Grep"]
    assert tool_results(runner[1]) == ["Tool 'Bash' not found"]
    review = bodies_for(fake_model, "REVIEW TASK")
    names = tool_names(review[0])
    assert "Edit" not in names and "Write" not in names and "Read" in names and "Bash" in names
    assert tool_results(review[1]) == ["Tool 'Edit' not found"]
    assert (project / "README.md").read_text() == "# demo\n"
    think = bodies_for(fake_model, "THINK TASK")
    assert think[0]["model"] == "other-model"
    for body in runner + review + think:
        assert not set(tool_names(body)) & {
            "Agent",
            "TaskCreate",
            "TaskGet",
            "TaskUpdate",
            "TaskList",
        }
    assert sorted(tool_results(fake_model.chat_bodies()[-1])) == [
        "review done",
        "runner done",
        "thought",
    ]


async def test_memory_switch(fake_model: FakeModelServer, home: Path, project: Path) -> None:
    # FM-1
    (project / "AGENTS.md").write_text("PROJECT MEMORY LINE\n")
    rules = project / ".wave" / "rules"
    rules.mkdir(parents=True)
    (rules / "style.md").write_text("RULE LINE\n")
    (home / ".wave").mkdir()
    (home / ".wave" / "AGENTS.md").write_text("USER MEMORY LINE\n")
    write_agents(project, remembers=WITH_MEMORY, forgets=WITHOUT_MEMORY)
    fake_model.set_script(
        {
            "routes": [
                route(
                    "memory check",
                    reply("", delegate("remembers", "TASK ONE"), delegate("forgets", "TASK TWO")),
                    reply("ok"),
                ),
                route("TASK ONE", reply("one")),
                route("TASK TWO", reply("two")),
            ]
        }
    )
    await chat(fake_model, home, project, "memory check")
    with_memory = str(bodies_for(fake_model, "TASK ONE")[0]["messages"])
    without = str(bodies_for(fake_model, "TASK TWO")[0]["messages"])
    for line in ("PROJECT MEMORY LINE", "RULE LINE", "USER MEMORY LINE"):
        assert line in with_memory
        assert line not in without


async def test_rejected_model_fails_only_that_delegation(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # LOAD-5 edge case, FAIL-2
    write_agents(project, **{"big-thinker": OTHER_MODEL})
    fake_model.set_script(
        {
            "models": ["test-model"],
            "routes": [
                route(
                    "think please",
                    reply("", delegate("big-thinker", "THINK TASK")),
                    reply("It failed."),
                ),
                route("THINK TASK", reply("never")),
            ],
        }
    )
    _client, result = await chat(fake_model, home, project, "think please")
    assert result["text"] == "It failed."
    failure = tool_results(fake_model.chat_bodies()[-1])[0]
    assert failure.startswith("Agent delegation failed: ")
    assert "other-model" in failure


async def test_failure_after_an_answer_returns_the_answer(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # FAIL-1, FAIL-3
    fake_model.set_script(
        {
            "routes": [
                route(
                    "go", reply("", delegate("general-purpose", "HALF TASK")), reply("main done")
                ),
                route(
                    "HALF TASK",
                    reply("Partial finding: src/app.py", call("Glob", {"pattern": "*.py"})),
                    reply("x", fault={"status": 500, "times": 10}),
                ),
            ]
        }
    )
    client, result = await chat(fake_model, home, project, "go")
    assert result["text"] == "main done"
    assert tool_results(fake_model.chat_bodies()[-1]) == ["Partial finding: src/app.py"]
    block = [u for u in client.updates if u["kind"] == "toolBlock" and u["name"] == "Agent"][-1]
    assert block["details"]["error"]  # the failure is shown in the block, not given to the model


async def test_mention_reminders(fake_model: FakeModelServer, home: Path, project: Path) -> None:
    # MENTION-4, MENTION-5, MENTION-6, and the reminder never enters a subagent
    write_agents(project, **{"test-runner": TEST_RUNNER})
    fake_model.set_script(
        {
            "routes": [
                route(
                    "please check", reply("", delegate("test-runner", "RUN TASK")), reply("done")
                ),
                route("RUN TASK", reply("ran")),
                route("who is there", reply("nobody")),
            ]
        }
    )
    await chat(fake_model, home, project, "[@agent:test-runner] and @agent:Explore please check")
    first = fake_model.chat_bodies()[0]
    reminders = [
        m["content"]
        for m in first["messages"]
        if m["role"] == "user" and "<system-reminder>" in m["content"]
    ]
    mention = [r for r in reminders if "test-runner" in r]
    assert len(mention) == 1
    assert "subagent_type" in mention[0] and "Explore" in mention[0]
    assert "<system-reminder>" not in str(bodies_for(fake_model, "RUN TASK")[0]["messages"])
    await chat(fake_model, home, project, "@agent:ghost who is there")
    last = fake_model.chat_bodies()[-1]
    unknown = [
        m["content"]
        for m in last["messages"]
        if m["role"] == "user" and "ghost" in m["content"] and "<system-reminder>" in m["content"]
    ]
    assert unknown and "test-runner" in unknown[0] and "Explore" in unknown[0]


async def test_parallel_subagents_run_concurrently(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # Parallel Agent calls in one message: about the time of the slowest.
    fake_model.set_script(
        {
            "routes": [
                route(
                    "in parallel",
                    reply("", *(delegate("general-purpose", f"PAR TASK {i}") for i in range(3))),
                    reply("done"),
                ),
                *(route(f"PAR TASK {i}", reply(f"result {i}", delay=1.0)) for i in range(3)),
            ]
        }
    )
    _client, result = await chat(fake_model, home, project, "in parallel")
    assert result["text"] == "done"
    assert tool_results(fake_model.chat_bodies()[-1]) == ["result 0", "result 1", "result 2"]
    # Each subagent's model answers after 1 s: run one after another, the second would start
    # a second after the first. Concurrently, all three start together.
    starts = sorted(
        r["time"]
        for r in fake_model.requests()
        if r["method"] == "POST" and "PAR TASK" in str(r["body"].get("messages", [])[-1:])
    )
    assert len(starts) == 3
    assert starts[-1] - starts[0] < 0.5, f"subagents started {starts[-1] - starts[0]:.2f} s apart"


async def test_subagents_in_sequence_do_not_see_each_other(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # CTX-2
    fake_model.set_script(
        {
            "routes": [
                route(
                    "one then two",
                    reply("", delegate("general-purpose", "FIRST TASK")),
                    reply("", delegate("general-purpose", "SECOND TASK")),
                    reply("both done"),
                ),
                route("FIRST TASK", reply("FIRST SECRET")),
                route("SECOND TASK", reply("second")),
            ]
        }
    )
    await chat(fake_model, home, project, "one then two")
    second = bodies_for(fake_model, "SECOND TASK")[0]
    assert "FIRST" not in str(second["messages"])


async def test_user_plan_overrides_the_builtin(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # PLAN-4
    write_agents(project, Plan=USER_PLAN)
    fake_model.set_script(
        {
            "routes": [
                route("make a plan", reply("", delegate("Plan", "PLAN TASK")), reply("ok")),
                route("PLAN TASK", reply("plan")),
            ]
        }
    )
    await chat(fake_model, home, project, "make a plan")
    system = bodies_for(fake_model, "PLAN TASK")[0]["messages"][0]["content"]
    assert system.startswith("You are OUR planner, not the built-in one.")
    assert "- Plan: The team's own planner." in agent_tool_description(fake_model.chat_bodies()[0])


PLAN_TEXT = """Plan ({view}):
1. Change answer() to return 42.

## Critical Files for Implementation
- src/app.py - holds answer()
- README.md - documents it
- tests/test_app.py - to add
"""


async def test_plan_mode_end_to_end(fake_model: FakeModelServer, home: Path, project: Path) -> None:
    # PLAN-1, PLAN-2, PLAN-3, PLAN-5, PLAN-RO-3
    fake_model.set_script(
        {
            "routes": [
                route(
                    "plan the change",
                    reply(
                        "",
                        delegate("Plan", "PLAN SIMPLE", "Simple plan"),
                        delegate("Plan", "PLAN FAST", "Fast plan"),
                    ),
                    reply("", call("Write", {"file_path": "src/new.py", "content": "x"})),
                    reply("", call("ExitPlanMode", {"plan": "Return 42 from answer()."})),
                    reply("Here is the plan."),
                ),
                route(
                    "PLAN SIMPLE",
                    reply("", call("Bash", {"command": "mkdir build"})),
                    reply("", call("Bash", {"command": "ls src"})),
                    reply(PLAN_TEXT.format(view="simplicity")),
                ),
                route("PLAN FAST", reply(PLAN_TEXT.format(view="performance"), delay=0.3)),
            ]
        }
    )
    before = sorted(str(p) for p in project.rglob("*") if ".git" not in p.parts)
    env = server_env(home, fake_model.base_url)
    async with wave_client(env, caps=capabilities(permission=True)) as client:
        client.permission_answer = lambda p: {"allowed": p["toolName"] == "ExitPlanMode"}
        params = {"cwd": str(project), "permissionMode": "plan"}
        sid = (await client.request("wave/session/new", params))["sessionId"]
        text = "plan the change"
        result = await client.request("wave/chat/send", {"sessionId": sid, "text": text})
    assert result["status"] == "completed"
    after = sorted(str(p) for p in project.rglob("*") if ".git" not in p.parts)
    assert after == before  # nothing on disk changed
    simple = bodies_for(fake_model, "PLAN SIMPLE")
    refusal, listing = tool_results(simple[1])[0], tool_results(simple[2])[1]
    assert "read-only" in refusal.lower() and "mkdir" in refusal
    assert "app.py" in listing
    main = bodies_for(fake_model, "plan the change")
    plans = tool_results(main[1])
    assert "simplicity" in plans[0] and "performance" in plans[1]
    assert all("Critical Files for Implementation" in p for p in plans)
    write_result = tool_results(main[2])[-1]
    assert "plan mode" in write_result.lower()
    # ExitPlanMode presents the plan to the user, who approves it: plan mode ends.
    [asked] = [r for r in client.permission_requests if r["toolName"] == "ExitPlanMode"]
    assert asked["arguments"]["plan"] == "Return 42 from answer()."
    assert "approved" in tool_results(main[3])[-1]
    plan_prompt = AgentRegistry(home).load(project).get("Plan")
    assert (
        plan_prompt is not None and "Critical Files for Implementation" in plan_prompt.system_prompt
    )


async def test_a_tag_picked_in_one_session_works_in_another(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # MENTION-8, the server's half: the tag is plain text, so a draft carried over to another
    # session (the editor keeps drafts) still brings the reminder there. The draft itself
    # lives in the client (VS Code extension, a later wave).
    write_agents(project, **{"test-runner": TEST_RUNNER})
    fake_model.set_script({"routes": [route("carry over", reply("ok"))]})
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        first = (await client.request("wave/session/new", {"cwd": str(project)}))["sessionId"]
        second = (await client.request("wave/session/new", {"cwd": str(project)}))["sessionId"]
        items = await client.request(
            "wave/chatInput/completion", {"sessionId": first, "text": "@test-r"}
        )
        tag = next(i["insertText"] for i in items["items"] if i["label"] == "test-runner")
        text = f"{tag} carry over"
        await client.request("wave/chat/send", {"sessionId": second, "text": text})
        history = await client.request("wave/session/messages", {"sessionId": second})
    assert history["messages"][0]["content"] == "[@agent:test-runner] carry over"
    users = [m["content"] for m in fake_model.chat_bodies()[0]["messages"] if m["role"] == "user"]
    assert any("<system-reminder>" in u and "subagent_type=test-runner" in u for u in users)
