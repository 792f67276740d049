"""A model's reasoning (``reasoning_content`` deltas, issue 27 point 5) is shown as thinking,
never as the answer, and never sent back to the model: over LSP (``thinkingDelta`` updates,
``meta.thinking`` on the message and in the transcript) and over ACP
(``agent_thought_chunk``, also when a saved session is loaded)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from acp.helpers import text_block

from tests.support.acp_client import acp_agent
from tests.support.fake_model import FakeModelServer, reply, route
from tests.support.lsp import server_env, wave_client
from wave_ls.server.updates import Coalescer

THOUGHT = "The user greets me; a short greeting back will do. No tools are needed here."
ANSWER = "Hello there!"


def script(fake_model: FakeModelServer) -> None:
    fake_model.set_script(
        {
            "routes": [
                route("say hello", reply(ANSWER, reasoning_content=THOUGHT, chunk_size=5)),
                route("and again", reply("Again.")),
            ]
        }
    )


def sent_to_the_model(fake_model: FakeModelServer) -> str:
    return json.dumps(fake_model.chat_bodies())


async def test_reasoning_is_thinking_over_lsp_and_never_the_answer(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    script(fake_model)
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        sid = (await client.request("wave/session/new", {"cwd": str(project)}))["sessionId"]
        result = await client.request("wave/chat/send", {"sessionId": sid, "text": "say hello"})
        second = await client.request("wave/chat/send", {"sessionId": sid, "text": "and again"})
        updates = client.updates_for(sid)
        messages = (await client.request("wave/session/messages", {"sessionId": sid}))["messages"]
    assert result["status"] == "completed" and result["text"] == ANSWER
    assert second["status"] == "completed"
    kinds = [u["kind"] for u in updates]
    thinking = [u for u in updates if u["kind"] == "thinkingDelta"]
    assert "".join(u["delta"] for u in thinking) == THOUGHT
    # The answer's deltas hold only the answer, and the thinking came first.
    assert kinds.index("thinkingDelta") < kinds.index("assistantDelta")
    first_turn = updates[: kinds.index("turnEnded")]
    answer = [u["delta"] for u in first_turn if u["kind"] == "assistantDelta"]
    assert "".join(answer) == ANSWER
    (said, *_rest) = [u["message"] for u in updates if u["kind"] == "assistantMessage"]
    assert said["content"] == ANSWER and said["meta"]["thinking"] == THOUGHT
    # Kept for the user (wave/session/messages, the transcript), never sent back.
    (kept,) = [m for m in messages if m["role"] == "assistant" and m["content"] == ANSWER]
    assert kept["meta"]["thinking"] == THOUGHT
    transcript = (home / ".wave" / "sessions" / f"{sid}.jsonl").read_text(encoding="utf-8")
    assert THOUGHT in transcript
    bodies = fake_model.chat_bodies()
    assert len(bodies) == 2
    assert any(m.get("content") == ANSWER for m in bodies[1]["messages"])
    assert "greeting back" not in sent_to_the_model(fake_model)


async def test_reasoning_is_an_agent_thought_over_acp_live_and_when_loaded(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    script(fake_model)
    env = server_env(home, fake_model.base_url)
    async with acp_agent(env) as agent:
        sid = (await agent.conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        done = await asyncio.wait_for(
            agent.conn.prompt(session_id=sid, prompt=[text_block("say hello")]), 60
        )
        assert done.stop_reason == "end_turn"
        assert agent.client.text(sid, "agent_thought_chunk") == THOUGHT
        assert agent.client.text(sid) == ANSWER
        live = [u["sessionUpdate"] for u in agent.client.of(sid)]
        assert live.index("agent_thought_chunk") < live.index("agent_message_chunk")
    async with acp_agent(env) as agent:  # a new process: the session comes from disk
        await agent.conn.load_session(cwd=str(project), session_id=sid, mcp_servers=[])
        history: list[dict[str, Any]] = [
            u for u in agent.client.of(sid) if u["sessionUpdate"] != "available_commands_update"
        ]
        assert [u["sessionUpdate"] for u in history] == [
            "user_message_chunk",
            "agent_thought_chunk",
            "agent_message_chunk",
        ]
        assert history[1]["content"]["text"] == THOUGHT
        assert history[2]["content"]["text"] == ANSWER
    assert "greeting back" not in sent_to_the_model(fake_model)


async def test_thinking_held_back_by_the_pacing_is_sent_before_the_answer() -> None:
    sent: list[dict[str, Any]] = []
    coalescer = Coalescer(sent.append, 20.0)  # a send per kind every 50 ms
    coalescer.push({"kind": "thinkingDelta", "delta": "Let me "})
    coalescer.push({"kind": "thinkingDelta", "delta": "think."})  # held back
    coalescer.push({"kind": "assistantDelta", "delta": "Hi."})
    coalescer.flush()
    assert [(u["kind"], u["delta"]) for u in sent] == [
        ("thinkingDelta", "Let me "),
        ("thinkingDelta", "think."),
        ("assistantDelta", "Hi."),
    ]
