"""``wave-ls acp`` end to end: a real subprocess, the ``acp`` package's client, the offline
model. What an ACP client (Zed, JetBrains AI Assistant) sees on the wire."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from acp.helpers import embedded_text_resource, resource_block, resource_link_block, text_block
from acp.schema import McpServerStdio

from tests.support.acp_client import AcpAgent, acp_agent
from tests.support.fake_model import FakeModelServer, call, reply, route
from tests.support.lsp import server_env

EXPLORE_SYSTEM = "READ-ONLY: NO FILE MODIFICATIONS"  # in the built-in Explore's prompt (pins its route)


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
        (call_id, events), = calls.items()
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
