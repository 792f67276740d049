"""What outside ACP clients (Toad, acpx) needed (issue 28 point 10) and ``/compact`` with the
context usage (issue 27): a real ``wave-ls acp``, the ``acp`` package's client, the offline
model."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from acp import RequestError
from acp.helpers import text_block

from tests.support.acp_client import AcpAgent, acp_agent
from tests.support.fake_model import FakeModelServer, call, reply, route
from tests.support.lsp import server_env
from tests.test_acp import choose, new_session, say, texts

SUMMARY = "SUMMARY-OF-EARLIER-WORK"
SUMMARIZER = "You summarize a coding session"  # the summary request's system prompt


def env_for(fake: FakeModelServer, home: Path) -> dict[str, str]:
    return server_env(home, fake.base_url)


def diffs(update: dict[str, Any]) -> list[dict[str, Any]]:
    return [c for c in update.get("content") or [] if c["type"] == "diff"]


async def test_a_write_diff_carries_the_old_text_and_a_plan_its_text(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(
        {
            "routes": [
                route(
                    "write them",
                    reply(
                        "",
                        call("Write", {"file_path": "README.md", "content": "# new\n"}),
                        call("Write", {"file_path": "NEW.md", "content": "fresh\n"}),
                    ),
                    reply("Written."),
                ),
                route(
                    "make a plan",
                    reply("", call("ExitPlanMode", {"plan": "1. Edit src/app.py\n2. Test"})),
                    reply("Planned."),
                ),
            ]
        }
    )
    async with acp_agent(env_for(fake_model, home)) as agent:
        agent.client.permission_answer = choose("allow_once")
        sid = await new_session(agent, project)
        assert await say(agent, sid, "write them") == "end_turn"
        assert (project / "README.md").read_text() == "# new\n"
        calls = list(agent.client.tool_calls(sid).values())
        assert len(calls) == 2
        readme, new = calls
        (start,) = diffs(readme[0])
        assert start["oldText"] == "# demo\n" and start["newText"] == "# new\n"
        (end,) = diffs(readme[-1])
        assert readme[-1]["status"] == "completed" and end["oldText"] == "# demo\n"
        (created,) = diffs(new[-1])
        assert created["oldText"] == "" and created["newText"] == "fresh\n"
        asked = [r["toolCall"] for r in agent.client.permission_requests]
        assert [diffs(a)[0]["oldText"] for a in asked] == ["# demo\n", ""]

        await agent.conn.set_session_mode(session_id=sid, mode_id="plan")
        agent.client.permission_requests.clear()
        assert await say(agent, sid, "make a plan") == "end_turn"
        (request,) = agent.client.permission_requests
        assert texts(request["toolCall"]) == ["1. Edit src/app.py\n2. Test"]


async def test_initialize_with_version_0_answers_the_latest(
    fake_model: FakeModelServer, home: Path
) -> None:
    from acp import PROTOCOL_VERSION
    from acp.schema import ClientCapabilities

    async with acp_agent(env_for(fake_model, home)) as agent:
        again = await agent.conn.initialize(
            protocol_version=0, client_capabilities=ClientCapabilities()
        )
        assert again.protocol_version == PROTOCOL_VERSION
        caps = again.agent_capabilities
        assert caps is not None and caps.session_capabilities is not None
        assert caps.session_capabilities.resume is not None
        assert caps.session_capabilities.close is not None


async def test_a_mode_the_client_sets_is_echoed_and_is_a_config_option(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    async with acp_agent(env_for(fake_model, home)) as agent:
        created = await agent.conn.new_session(cwd=str(project), mcp_servers=[])
        sid = created.session_id
        (option,) = [o.root if hasattr(o, "root") else o for o in created.config_options or []]
        assert option.id == "mode" and option.current_value == "default"
        await agent.conn.set_session_mode(session_id=sid, mode_id="plan")
        await agent.client.wait_for(lambda: agent.client.of(sid, "current_mode_update"))
        answer = await agent.conn.set_config_option(
            config_id="mode", session_id=sid, value="acceptEdits"
        )
        (changed,) = [o.root if hasattr(o, "root") else o for o in answer.config_options]
        assert changed.current_value == "acceptEdits"
        await agent.client.wait_for(lambda: len(agent.client.of(sid, "current_mode_update")) == 2)
        modes = agent.client.of(sid, "current_mode_update")
        assert [m["currentModeId"] for m in modes] == ["plan", "acceptEdits"]
        try:
            await agent.conn.set_config_option(config_id="model", session_id=sid, value="x")
        except RequestError as error:
            assert error.code == -32602
        else:
            raise AssertionError("an unknown option was accepted")


async def test_close_then_resume_goes_on_without_the_history_sent_again(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(
        {"routes": [route("first", reply("One.")), route("second", reply("Two."))]}
    )
    async with acp_agent(env_for(fake_model, home)) as agent:
        sid = await new_session(agent, project)
        assert await say(agent, sid, "first") == "end_turn"
        await agent.conn.close_session(session_id=sid)
        try:
            await agent.conn.prompt(session_id=sid, prompt=[text_block("second")])
        except RequestError as error:
            assert "unknown sessionId" in str(error)
        else:
            raise AssertionError("a closed session took a prompt")
        before = len(agent.client.of(sid))
        resumed = await agent.conn.resume_session(session_id=sid, cwd=str(project))
        assert resumed.modes is not None and resumed.modes.current_mode_id == "default"
        assert await say(agent, sid, "second") == "end_turn"
        later = agent.client.of(sid)[before:]
        assert not [u for u in later if u["sessionUpdate"] == "user_message_chunk"]
    last = fake_model.chat_bodies()[-1]
    assert [m["content"] for m in last["messages"] if m["role"] == "user"][-2:] == [
        "first",
        "second",
    ]


async def compact(agent: AcpAgent, sid: str, text: str = "/compact") -> str:
    return await say(agent, sid, text)


async def test_compact_is_a_command_that_compacts_and_shows_the_usage(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(
        {
            "routes": [
                route("", reply(SUMMARY), system=SUMMARIZER),  # first: it quotes the others
                route("first question", reply("A1 " * 200)),
                route(
                    # Long enough to be asked to compact meanwhile (~4 s, not 13: 255 chunks).
                    "slow story",
                    reply("once upon a time " * 30, chunk_size=200, chunk_delay=1.0),
                ),
            ]
        }
    )
    async with acp_agent(env_for(fake_model, home)) as agent:
        sid = await new_session(agent, project)
        await agent.client.wait_for(lambda: agent.client.of(sid, "available_commands_update"))
        (listed,) = agent.client.of(sid, "available_commands_update")[-1:]
        assert "compact" in [c["name"] for c in listed["availableCommands"]]

        assert await compact(agent, sid) == "end_turn"
        assert "nothing to compact" in agent.client.text(sid)

        assert await say(agent, sid, "first question") == "end_turn"
        (usage, *_) = agent.client.of(sid, "usage_update")
        assert usage["used"] > 0 and usage["size"] > usage["used"]

        shown = len(agent.client.text(sid))
        assert await compact(agent, sid, "/compact keep the numbers") == "end_turn"
        line = agent.client.text(sid)[shown:]
        assert "conversation compacted (" in line and " tokens)" in line
        summary_body = fake_model.chat_bodies()[-1]
        assert SUMMARIZER in summary_body["messages"][0]["content"]
        assert "keep the numbers" in str(summary_body["messages"])
        last_usage = agent.client.of(sid, "usage_update")[-1]
        assert last_usage["used"] < usage["used"]

        running = asyncio.create_task(say(agent, sid, "slow story"))
        await agent.client.wait_for(lambda: "once upon" in agent.client.text(sid))
        shown = len(agent.client.text(sid))
        assert await compact(agent, sid) == "end_turn"
        assert "cannot be compacted while a turn is running" in agent.client.text(sid)[shown:]
        assert await running == "end_turn"


async def test_a_write_to_a_fifo_shows_no_old_text_and_blocks_nothing(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    import os

    os.mkfifo(project / "pipe")  # reading it for the diff would wait for a writer forever
    fake_model.set_script(
        {
            "routes": [
                route(
                    "write the pipe",
                    reply("", call("Write", {"file_path": "pipe", "content": "x\n"})),
                    reply("Not written."),
                )
            ]
        }
    )
    async with acp_agent(env_for(fake_model, home)) as agent:
        agent.client.permission_answer = choose("reject_once")
        sid = await new_session(agent, project)
        assert await say(agent, sid, "write the pipe") == "end_turn"
        ((_, events),) = agent.client.tool_calls(sid).items()
        (shown,) = diffs(events[0])
        assert "oldText" not in shown or shown["oldText"] is None
        assert events[-1]["status"] == "failed"
