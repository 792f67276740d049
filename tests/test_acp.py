"""``wave-ls acp`` end to end: a real subprocess, the ``acp`` package's client, the offline
model. What an ACP client (Zed, JetBrains AI Assistant) sees on the wire."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from acp import RequestError
from acp.helpers import embedded_text_resource, resource_block, resource_link_block, text_block

from tests.support.acp_client import AcpAgent, acp_agent
from tests.support.fake_model import FakeModelServer, call, reply, route
from tests.support.lsp import server_env
from tests.support.waiting import until

EXPLORE_SYSTEM = (
    "READ-ONLY: NO FILE MODIFICATIONS"  # in the built-in Explore's prompt (pins its route)
)


def env_for(fake: FakeModelServer, home: Path) -> dict[str, str]:
    return server_env(home, fake.base_url)


async def new_session(agent: AcpAgent, cwd: Path, **extra: Any) -> str:
    response = await agent.conn.new_session(cwd=str(cwd), mcp_servers=[], **extra)
    return response.session_id


async def say(agent: AcpAgent, session_id: str, text: str) -> str:
    response = await asyncio.wait_for(
        agent.conn.prompt(session_id=session_id, prompt=[text_block(text)]), 60
    )
    return response.stop_reason


def texts(update: dict[str, Any]) -> list[str]:
    return [c["content"]["text"] for c in update.get("content") or [] if c["type"] == "content"]


# ------------------------------------------------------------------ initialize, modes


async def test_initialize_advertises_load_session_and_prompt_content(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    async with acp_agent(env_for(fake_model, home)) as agent:
        caps = agent.init.agent_capabilities
        assert caps is not None and caps.load_session is True
        assert caps.prompt_capabilities is not None
        assert caps.prompt_capabilities.embedded_context is True
        assert not caps.prompt_capabilities.image
        assert agent.init.agent_info is not None and agent.init.agent_info.name == "wave-ls"
        response = await agent.conn.new_session(cwd=str(project), mcp_servers=[])
        assert response.modes is not None
        assert response.modes.current_mode_id == "default"
        assert [m.id for m in response.modes.available_modes] == [
            "default",
            "acceptEdits",
            "bypassPermissions",
            "plan",
        ]


# ------------------------------------------------------------------ delegation


async def test_explore_delegation_is_one_live_tool_call_then_the_answer(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(
        {
            "routes": [
                route(
                    "where are the tests",
                    reply(
                        "",
                        call(
                            "Agent",
                            {
                                "subagent_type": "Explore",
                                "description": "Find the tests",
                                "prompt": "List the test files of this project",
                            },
                        ),
                    ),
                    reply("The tests are in src/app.py, next to the code."),
                ),
                route(
                    "List the test files",
                    reply("", call("Glob", {"pattern": "**/*.py"})),
                    reply("", call("Read", {"file_path": "src/app.py"})),
                    reply("Found one Python file: src/app.py."),
                    system=EXPLORE_SYSTEM,
                ),
            ]
        }
    )
    async with acp_agent(env_for(fake_model, home)) as agent:
        sid = await new_session(agent, project)
        assert await say(agent, sid, "where are the tests?") == "end_turn"
        updates = agent.client.of(sid)
        calls = agent.client.tool_calls(sid)
        assert len(calls) == 1, "the subagent's own tools are not tool calls of their own"
        ((_, events),) = calls.items()
        start, *changes = events
        assert start["sessionUpdate"] == "tool_call"
        assert "Explore" in start["title"] and "Find the tests" in start["title"]
        assert start["kind"] == "think"
        live = [texts(u) for u in changes if u.get("status") == "in_progress" and texts(u)]
        assert any("Glob" in t[0] for t in live) and any("Read" in t[0] for t in live)
        assert any("tokens" in t[0] for t in live)
        last = changes[-1]
        assert last["status"] == "completed"
        summary, answer = texts(last)
        assert summary.startswith("Done (2 tool calls")
        assert answer == "Found one Python file: src/app.py."
        # The answer streams after the delegation has completed.
        end = updates.index(last)
        chunks = [i for i, u in enumerate(updates) if u["sessionUpdate"] == "agent_message_chunk"]
        assert chunks and min(chunks) > end
        assert agent.client.text(sid) == "The tests are in src/app.py, next to the code."


# ------------------------------------------------------------------ permissions


def edit(old: str, new: str, path: str = "src/app.py") -> dict[str, Any]:
    return call("Edit", {"file_path": path, "old_string": old, "new_string": new})


def edit_script() -> dict[str, Any]:
    return {
        "routes": [
            route("first edit", reply("", edit("return 41", "return 42")), reply("Edited.")),
            route("second edit", reply("", edit("return 42", "return 43")), reply("Edited.")),
            route(
                "third edit",
                reply("", edit("# demo", "# demo app", "README.md")),
                reply("Edited."),
            ),
            route("fourth edit", reply("", edit("return 43", "return 44")), reply("Edited.")),
        ]
    }


def choose(kind: str) -> Any:
    def answer(request: dict[str, Any]) -> str:
        return next(o["optionId"] for o in request["options"] if o["kind"] == kind)

    return answer


async def test_permission_allow_once_asks_again_next_time(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(edit_script())
    app = project / "src" / "app.py"
    async with acp_agent(env_for(fake_model, home)) as agent:
        agent.client.permission_answer = choose("allow_once")
        sid = await new_session(agent, project)
        assert await say(agent, sid, "first edit") == "end_turn"
        assert "return 42" in app.read_text()
        (request,) = agent.client.permission_requests
        assert sorted(o["kind"] for o in request["options"]) == [
            "allow_always",
            "allow_once",
            "reject_once",
        ]
        tool_call = request["toolCall"]
        ((call_id, events),) = agent.client.tool_calls(sid).items()
        assert tool_call["toolCallId"] == call_id  # the prompt is about the call shown
        start = events[0]
        assert start["kind"] == "edit" and start["title"] == "Edit src/app.py"
        assert start["locations"] == [{"path": str(app)}]
        (diff,) = start["content"]
        assert diff == {
            "type": "diff",
            "path": str(app),
            "oldText": "return 41",
            "newText": "return 42",
        }
        assert events[-1]["status"] == "completed"
        assert await say(agent, sid, "second edit") == "end_turn"
        assert "return 43" in app.read_text()
        assert len(agent.client.permission_requests) == 2  # asked again


async def test_permission_allow_always_remembers_for_the_session(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(edit_script())
    async with acp_agent(env_for(fake_model, home)) as agent:
        agent.client.permission_answer = choose("allow_always")
        sid = await new_session(agent, project)
        assert await say(agent, sid, "first edit") == "end_turn"
        (request,) = agent.client.permission_requests
        always = next(o for o in request["options"] if o["kind"] == "allow_always")
        assert "for this session" in always["name"]
        assert await say(agent, sid, "second edit") == "end_turn"
        assert await say(agent, sid, "third edit") == "end_turn"
        assert len(agent.client.permission_requests) == 1  # edits in the folder: not again
        assert "return 43" in (project / "src" / "app.py").read_text()
        assert (project / "README.md").read_text().startswith("# demo app")
        other = await new_session(agent, project)
        assert await say(agent, other, "fourth edit") == "end_turn"
        assert len(agent.client.permission_requests) == 2  # another session asks again


async def test_permission_rejected_leaves_the_file_and_fails_the_call(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(edit_script())
    async with acp_agent(env_for(fake_model, home)) as agent:
        agent.client.permission_answer = choose("reject_once")
        sid = await new_session(agent, project)
        assert await say(agent, sid, "first edit") == "end_turn"
        assert "return 41" in (project / "src" / "app.py").read_text()
        (events,) = agent.client.tool_calls(sid).values()
        assert events[-1]["status"] == "failed"
        assert "denied" in texts(events[-1])[0]
        model_saw = fake_model.chat_bodies()[-1]["messages"][-1]
        assert model_saw["role"] == "tool" and "denied" in model_saw["content"]


# ------------------------------------------------------------------ modes


async def test_plan_mode_refuses_an_edit_without_asking(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(edit_script())
    async with acp_agent(env_for(fake_model, home)) as agent:
        agent.client.permission_answer = choose("allow_once")
        sid = await new_session(agent, project)
        await agent.conn.set_session_mode(session_id=sid, mode_id="plan")
        assert await say(agent, sid, "first edit") == "end_turn"
        assert "return 41" in (project / "src" / "app.py").read_text()
        assert agent.client.permission_requests == []
        (events,) = agent.client.tool_calls(sid).values()
        assert events[-1]["status"] == "failed"
        assert "plan mode" in texts(events[-1])[0].lower()
        await agent.conn.set_session_mode(session_id=sid, mode_id="acceptEdits")
        assert await say(agent, sid, "first edit") == "end_turn"
        assert "return 42" in (project / "src" / "app.py").read_text()
        assert agent.client.permission_requests == []  # acceptEdits: edits without asking


async def test_set_mode_rejects_an_unknown_mode(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    async with acp_agent(env_for(fake_model, home)) as agent:
        sid = await new_session(agent, project)
        try:
            await agent.conn.set_session_mode(session_id=sid, mode_id="yolo")
        except RequestError as error:
            assert error.code == -32602 and "default" in str(error)
        else:
            raise AssertionError("an unknown mode was accepted")


async def test_approving_a_plan_with_accept_edits_switches_the_mode(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(
        {
            "routes": [
                route(
                    "make a plan",
                    reply("", call("ExitPlanMode", {"plan": "1. Edit src/app.py"})),
                    reply("", edit("return 41", "return 42")),
                    reply("Done."),
                )
            ]
        }
    )
    async with acp_agent(env_for(fake_model, home)) as agent:
        agent.client.permission_answer = choose("allow_always")
        sid = await new_session(agent, project)
        await agent.conn.set_session_mode(session_id=sid, mode_id="plan")
        assert await say(agent, sid, "make a plan") == "end_turn"
        (request,) = agent.client.permission_requests  # the plan; then edits are accepted
        assert request["toolCall"]["title"].startswith("Exit plan mode")
        assert "return 42" in (project / "src" / "app.py").read_text()
        modes = agent.client.of(sid, "current_mode_update")
        assert [m["currentModeId"] for m in modes] == ["plan", "acceptEdits"]  # plan: echoed


# ------------------------------------------------------------------ cancel


async def test_cancel_mid_turn_answers_cancelled_and_the_session_goes_on(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(
        {
            "routes": [
                route("wait a while", reply("", call("Bash", {"command": "sleep 30"}))),
                route("hello", reply("Hello again.")),
            ]
        }
    )
    async with acp_agent(env_for(fake_model, home)) as agent:
        sid = await new_session(agent, project)
        await agent.conn.set_session_mode(session_id=sid, mode_id="bypassPermissions")
        turn = asyncio.create_task(
            agent.conn.prompt(session_id=sid, prompt=[text_block("wait a while")])
        )

        def running() -> bool:
            return any(u.get("status") == "in_progress" for u in agent.client.of(sid))

        await agent.client.wait_for(running)
        started = asyncio.get_running_loop().time()
        await agent.conn.cancel(session_id=sid)
        response = await asyncio.wait_for(turn, 10)
        assert response.stop_reason == "cancelled"
        assert asyncio.get_running_loop().time() - started < 5  # not the 30 s of the sleep
        (events,) = agent.client.tool_calls(sid).values()
        assert events[-1]["status"] == "failed"  # sent before the answer
        assert await say(agent, sid, "hello") == "end_turn"
        assert agent.client.text(sid).endswith("Hello again.")


async def test_cancel_while_a_permission_prompt_is_open(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(edit_script())

    async def never(_request: dict[str, Any]) -> str | None:
        await asyncio.Event().wait()  # the user walks away from the prompt
        return None

    async with acp_agent(env_for(fake_model, home)) as agent:
        agent.client.permission_answer = never
        sid = await new_session(agent, project)
        turn = asyncio.create_task(
            agent.conn.prompt(session_id=sid, prompt=[text_block("first edit")])
        )
        await agent.client.wait_for(lambda: agent.client.permission_requests)
        await agent.conn.cancel(session_id=sid)
        assert (await asyncio.wait_for(turn, 10)).stop_reason == "cancelled"
        assert "return 41" in (project / "src" / "app.py").read_text()
        (events,) = agent.client.tool_calls(sid).values()
        assert events[-1]["status"] == "failed"


async def test_a_second_prompt_while_one_runs_is_refused(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(
        {"routes": [route("slow one", reply("Finally.", delay=2)), route("quick", reply("Ok."))]}
    )
    async with acp_agent(env_for(fake_model, home)) as agent:
        sid = await new_session(agent, project)
        slow: list[Any] = [text_block("slow one")]
        first = asyncio.create_task(agent.conn.prompt(session_id=sid, prompt=slow))
        # The first prompt runs once its model request arrived (answered 2 s later).
        await until(lambda: "slow one" in str(fake_model.chat_bodies()), 10, "the request")
        try:
            await agent.conn.prompt(session_id=sid, prompt=[text_block("quick")])
        except RequestError as error:
            assert error.code == -32010 and "still answering" in str(error)
        else:
            raise AssertionError("a second prompt ran beside the first")
        assert (await asyncio.wait_for(first, 20)).stop_reason == "end_turn"
        assert agent.client.text(sid) == "Finally."


async def test_a_turn_without_a_model_fails_with_what_to_set(home: Path, project: Path) -> None:
    async with acp_agent(server_env(home)) as agent:
        sid = await new_session(agent, project)
        try:
            await say(agent, sid, "hello")
        except RequestError as error:
            assert "OPENAI_BASE_URL" in str(error) and "WAVE_MODEL" in str(error)
        else:
            raise AssertionError("a turn without a model succeeded")


# ------------------------------------------------------------------ load


async def test_load_replays_a_saved_session_and_goes_on_with_it(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(
        {
            "routes": [
                route(
                    "what is in the readme",
                    reply("", call("Read", {"file_path": "README.md"})),
                    reply("It says demo."),
                ),
                route("and now", reply("Still demo.")),
            ]
        }
    )
    env = env_for(fake_model, home)
    async with acp_agent(env) as agent:
        sid = await new_session(agent, project)
        assert await say(agent, sid, "what is in the readme?") == "end_turn"
    async with acp_agent(env) as agent:  # a new process: the session comes from disk
        response = await agent.conn.load_session(cwd=str(project), session_id=sid, mcp_servers=[])
        assert response.modes is not None and response.modes.current_mode_id == "default"
        history = [
            u for u in agent.client.of(sid) if u["sessionUpdate"] != "available_commands_update"
        ]
        assert [u["sessionUpdate"] for u in history] == [
            "user_message_chunk",
            "tool_call",
            "agent_message_chunk",
        ]
        user, read, answer = history
        assert user["content"]["text"] == "what is in the readme?"
        assert read["title"] == "Read README.md" and read["kind"] == "read"
        assert read["status"] == "completed" and "# demo" in texts(read)[0]
        assert read["locations"] == [{"path": str(project / "README.md")}]
        assert answer["content"]["text"] == "It says demo."
        await agent.client.wait_for(lambda: agent.client.of(sid, "available_commands_update"))
        assert await say(agent, sid, "and now?") == "end_turn"
        sent = fake_model.chat_bodies()[-1]["messages"]
        assert any(m.get("content") == "It says demo." for m in sent)  # the old history
        assert agent.client.text(sid).endswith("Still demo.")


async def test_load_of_an_unknown_session_is_an_error(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    async with acp_agent(env_for(fake_model, home)) as agent:
        try:
            await agent.conn.load_session(cwd=str(project), session_id="nope", mcp_servers=[])
        except RequestError as error:
            assert error.code == -32602 and "nope" in str(error)
        else:
            raise AssertionError("an unknown session was loaded")


# ------------------------------------------------------------------ commands


TEST_RUNNER = """\
---
name: test-runner
description: Runs the tests.
tools: Read, Bash
---
You run tests.
"""


def command_names(update: dict[str, Any]) -> list[str]:
    return [c["name"] for c in update["availableCommands"]]


async def test_subagents_are_commands_sent_again_when_they_change(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script({"routes": [route("", reply("", echo=True))]})
    agents = project / ".wave" / "agents"
    agents.mkdir(parents=True)
    (agents / "test-runner.md").write_text(TEST_RUNNER)
    async with acp_agent(env_for(fake_model, home)) as agent:
        sid = await new_session(agent, project)
        first = await agent.client.wait_for(
            lambda: agent.client.of(sid, "available_commands_update")
        )
        assert set(command_names(first[0])) == {
            "Explore",
            "Plan",
            "general-purpose",
            "test-runner",
            "compact",  # the agent's own, after the subagents
        }
        (agents / "reviewer.md").write_text(
            TEST_RUNNER.replace("test-runner", "reviewer").replace("Runs the tests", "Reviews")
        )
        changed = await agent.client.wait_for(
            lambda: agent.client.of(sid, "available_commands_update")[1:], timeout=10
        )
        assert "reviewer" in command_names(changed[0])
        # Running a command is an @agent mention of that subagent.
        assert await say(agent, sid, "/test-runner run the unit tests") == "end_turn"
        messages = fake_model.chat_bodies()[-1]["messages"]
        users = [m["content"] for m in messages if m["role"] == "user"]
        assert "[@agent:test-runner] run the unit tests" in users
        assert any("subagent_type=test-runner" in text for text in users)


# ------------------------------------------------------------------ prompt content


async def test_resources_become_file_mentions_with_the_editor_text(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script({"routes": [route("", reply("Seen."))]})
    app = project / "src" / "app.py"
    async with acp_agent(env_for(fake_model, home)) as agent:
        sid = await new_session(agent, project)
        prompt: list[Any] = [
            text_block("compare"),
            resource_link_block("README.md", (project / "README.md").as_uri()),
            text_block("with"),
            resource_block(embedded_text_resource(app.as_uri(), "def answer():\n    return 99\n")),
        ]
        response = await agent.conn.prompt(session_id=sid, prompt=prompt)
        assert response.stop_reason == "end_turn"
        users = [
            m["content"] for m in fake_model.chat_bodies()[-1]["messages"] if m["role"] == "user"
        ]
        assert "compare [@file:README.md] with [@file:src/app.py]" in users
        reminder = next(text for text in users if "mentioned these files" in text)
        assert "# demo" in reminder  # read from disk
        assert "return 99" in reminder and "return 41" not in reminder  # the unsaved text


# ------------------------------------------------------------------ plan


async def test_the_task_list_is_a_plan(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(
        {
            "routes": [
                route(
                    "plan the work",
                    reply(
                        "",
                        call("TaskCreate", {"subject": "Write tests", "description": "t"}),
                        call("TaskCreate", {"subject": "Fix the bug", "description": "b"}),
                    ),
                    reply(
                        "",
                        call(
                            "TaskUpdate",
                            {"taskId": "1", "status": "in_progress", "activeForm": "Writing tests"},
                        ),
                    ),
                    reply("Planned."),
                )
            ]
        }
    )
    async with acp_agent(env_for(fake_model, home)) as agent:
        sid = await new_session(agent, project)
        assert await say(agent, sid, "plan the work") == "end_turn"
        plans = [u["entries"] for u in agent.client.of(sid, "plan")]
        assert plans[-1] == [
            {"content": "Writing tests", "priority": "medium", "status": "in_progress"},
            {"content": "Fix the bug", "priority": "medium", "status": "pending"},
        ]
        assert len(plans) == 3  # after each TaskCreate and the TaskUpdate


# ------------------------------------------------------------------ background work


async def test_a_background_run_is_its_own_tool_call_and_its_notice_a_message(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    launch = {
        "subagent_type": "general-purpose",
        "description": "Slow survey",
        "prompt": "SURVEY TASK: list the modules",
        "run_in_background": True,
    }
    fake_model.set_script(
        {
            "routes": [
                route("start the survey", reply("", call("Agent", launch)), reply("Started.")),
                route(
                    "SURVEY TASK",
                    reply("", call("Glob", {"pattern": "**/*.py"})),
                    reply("One module.", delay=0.5),
                    system="delegated task",
                ),
                route("A background agent completed a task", reply("The survey is done.")),
            ]
        }
    )
    async with acp_agent(env_for(fake_model, home)) as agent:
        sid = await new_session(agent, project)
        await agent.conn.set_session_mode(session_id=sid, mode_id="bypassPermissions")
        assert await say(agent, sid, "start the survey") == "end_turn"
        # No prompt is pending: the session's own turn answers the notice.
        await agent.client.wait_for(lambda: "The survey is done." in agent.client.text(sid))
        calls = agent.client.tool_calls(sid)
        launched = next(
            events for events in calls.values() if "background" not in events[0]["title"]
        )
        assert launched[-1]["status"] == "completed"
        run_id, run = next((i, e) for i, e in calls.items() if "(background)" in e[0]["title"])
        assert run_id.startswith("agent-") and "general-purpose" in run[0]["title"]
        assert any("Glob" in t[0] for t in map(texts, run[1:]) if t)
        assert run[-1]["status"] == "completed" and texts(run[-1])[0].startswith("Done (")
        text = agent.client.text(sid)
        assert f'Background task {run_id}: Agent "Slow survey" completed' in text
        assert text.index(run_id) < text.index("The survey is done.")


async def test_a_subagents_permission_request_is_put_on_its_delegation(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(
        {
            "routes": [
                route(
                    "bump the answer",
                    reply(
                        "",
                        call(
                            "Agent",
                            {
                                "subagent_type": "general-purpose",
                                "description": "Bump it",
                                "prompt": "CHANGE TASK: make answer() return 42",
                            },
                        ),
                    ),
                    reply("Bumped."),
                ),
                route(
                    "CHANGE TASK",
                    reply("", edit("return 41", "return 42")),
                    reply("Changed it."),
                    system="delegated task",
                ),
            ]
        }
    )
    async with acp_agent(env_for(fake_model, home)) as agent:
        agent.client.permission_answer = choose("allow_once")
        sid = await new_session(agent, project)
        assert await say(agent, sid, "bump the answer") == "end_turn"
        assert "return 42" in (project / "src" / "app.py").read_text()
        ((call_id, events),) = agent.client.tool_calls(sid).items()
        assert "general-purpose" in events[0]["title"]
        (request,) = agent.client.permission_requests
        asked = request["toolCall"]
        assert asked["toolCallId"] == call_id and asked["title"] == "Subagent: Edit src/app.py"
        assert asked["kind"] == "edit"  # acpx showed "Allow tool [other]?" (issue 28)
        assert texts(asked) == ["The subagent asks to run: Edit src/app.py"]
        assert asked["content"][1]["type"] == "diff"
        assert events[-1]["status"] == "completed"
        # Once answered, the delegation shows its own title and kind again.
        restored = [e for e in events[1:] if "title" in e]
        assert restored and "general-purpose" in restored[-1]["title"]
        assert restored[-1]["kind"] == "think"
