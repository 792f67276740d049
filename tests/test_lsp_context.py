"""The context window over LSP with the offline model (issue 27, points 2-4): where its size
comes from, the usage the client sees, compaction (automatic, after a refusal, on demand, in
a subagent), the transcript kept whole, and a huge tool output cut with a note.

The offline model counts a request's tokens as a quarter of its JSON's characters, so the
numbers below follow from the files the tools read: the main agent's first request is about
6,900 tokens, and reading one ``big<N>.txt`` adds about 2,750.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from tests.support.fake_model import FakeModelServer, call, reply, route
from tests.support.lsp import server_env, wave_client

SUMMARY = "SUMMARY-OF-EARLIER-WORK"
# The summary request's system prompt (runtime/context/compaction.py).
SUMMARIZER = "You summarize a coding session"
# max_tokens = a quarter of it (4,600), so a request may hold 13,800 tokens before the
# conversation is compacted first (the threshold's 80 % would be 14,720).
WINDOW = 18_400
LIMIT = 13_800


def summary_route() -> dict[str, Any]:
    # Listed first: a summary request also quotes the other routes' texts.
    return route("", reply(SUMMARY), system=SUMMARIZER)


def big_file(project: Path, name: str, lines: int = 120) -> None:
    (project / name).write_text("".join(f"{name[:4]}efgh" * 10 + "\n" for _ in range(lines)))


def settings(project: Path, data: dict[str, Any]) -> None:
    folder = project / ".wave"
    folder.mkdir(exist_ok=True)
    (folder / "settings.local.json").write_text(json.dumps(data), encoding="utf-8")


def read(name: str) -> dict[str, Any]:
    return call("Read", {"file_path": name})


def texts(body: dict[str, Any]) -> str:
    return json.dumps(body["messages"])


def is_summary_request(body: dict[str, Any]) -> bool:
    return SUMMARIZER in str(body["messages"][0]["content"])


def fake_tokens(body: dict[str, Any]) -> int:
    """What the offline model reports as the request's prompt tokens."""
    return (len(json.dumps(body["messages"])) + len(json.dumps(body.get("tools") or []))) // 4


async def new_session(client: Any, cwd: Path) -> str:
    return str((await client.request("wave/session/new", {"cwd": str(cwd)}))["sessionId"])


async def send(client: Any, sid: str, text: str) -> dict[str, Any]:
    result: dict[str, Any] = await client.request(
        "wave/chat/send", {"sessionId": sid, "text": text}
    )
    return result


async def test_a_session_that_crosses_the_threshold_compacts_before_the_request(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    for name in ("big1.txt", "big2.txt", "big3.txt"):
        big_file(project, name)
    settings(project, {"context": {"windowTokens": WINDOW}})
    fake_model.set_script(
        {
            "routes": [
                summary_route(),
                route("first question", reply("", read("big1.txt")), reply("A1")),
                route("second question", reply("", read("big2.txt")), reply("A2")),
                route("third question", reply("", read("big3.txt")), reply("A3")),
                route("fourth question", reply("A4")),
            ]
        }
    )
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        sid = await new_session(client, project)
        for text in ("first question", "second question", "third question"):
            assert (await send(client, sid, text))["status"] == "completed"
        bodies = fake_model.chat_bodies()
        assert not any(is_summary_request(b) for b in bodies[:5])
        summary_body, after = bodies[5], bodies[6]
        # Compacted before the request that would have crossed the threshold: the one after
        # the third Read. The summary covers the first two exchanges; the third (the work in
        # progress) stays verbatim.
        assert is_summary_request(summary_body)
        assert "first question" in texts(summary_body) and "second question" in texts(summary_body)
        assert "third question" not in texts(summary_body)
        assert "max_tokens" in summary_body and "tools" not in summary_body
        assert SUMMARY in after["messages"][1]["content"]
        assert [m["role"] for m in after["messages"][2:]] == ["user", "assistant", "tool"]
        assert after["messages"][2]["content"] == "third question"
        assert "first question" not in texts(after) and "A2" not in texts(after)
        assert fake_tokens(after) < LIMIT < fake_tokens(summary_body) + fake_tokens(bodies[4])
        (compacted,) = client.updates_for(sid, "compacted")
        assert compacted["tokensBefore"] > LIMIT > compacted["tokensAfter"]
        usage = client.updates_for(sid, "contextUsage")
        assert {u["windowTokens"] for u in usage} == {WINDOW}
        assert usage[-1]["tokens"] < LIMIT

        # The session's history keeps every message, with one compacted message.
        messages = (await client.request("wave/session/messages", {"sessionId": sid}))["messages"]
        users = [m["content"] for m in messages if m["role"] == "user" and "meta" not in m]
        assert users == ["first question", "second question", "third question"]
        (marker,) = [m for m in messages if (m.get("meta") or {}).get("kind") == "compacted"]
        assert SUMMARY in marker["content"] and marker["meta"]["tokensAfter"] > 0
        assert messages[-1]["content"] == "A3"
        transcript = (home / ".wave" / "sessions" / f"{sid}.jsonl").read_text()
        assert "first question" in transcript and '"kind":"compacted"' in transcript

        # A resumed session continues from the summary.
        await client.request("wave/session/close", {"sessionId": sid})
        await client.request("wave/session/new", {"sessionId": sid})
        assert (await send(client, sid, "fourth question"))["text"] == "A4"
    resumed = fake_model.chat_bodies()[-1]
    assert SUMMARY in resumed["messages"][1]["content"]
    assert "third question" in texts(resumed) and "first question" not in texts(resumed)


REFUSAL = {
    "error": {
        "message": "This model's maximum context length is 30000 tokens. However, you "
        "requested 41000 tokens (33000 in the messages, 8000 in the completion).",
        "type": "invalid_request_error",
        "param": "messages",
        "code": "context_length_exceeded",
    }
}


@pytest.mark.parametrize("refusals", [1, 5])
async def test_a_refused_request_is_compacted_and_sent_again_once(
    refusals: int, fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    big_file(project, "big1.txt", lines=250)  # more than a summary's size to compact
    fault = {"status": 400, "body": REFUSAL, "times": refusals}
    fake_model.set_script(
        {
            "routes": [
                summary_route(),
                route("first question", reply("", read("big1.txt")), reply("A1")),
                route("refuse me", reply("Answered after all.", fault=fault)),
            ]
        }
    )
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        sid = await new_session(client, project)
        await send(client, sid, "first question")
        result = await send(client, sid, "refuse me")
        compacted = client.updates_for(sid, "compacted")
        usage = client.updates_for(sid, "contextUsage")
    bodies = fake_model.chat_bodies()
    assert len(bodies) == 5  # the first turn's two, the refused one, the summary, one retry
    assert is_summary_request(bodies[3]) and "first question" in texts(bodies[3])
    assert SUMMARY in bodies[4]["messages"][1]["content"]
    assert bodies[4]["messages"][2]["content"] == "refuse me"  # the exchange kept verbatim
    assert len(compacted) == 1
    # The refusal named the window: believed from then on.
    assert usage[-1]["windowTokens"] == 30_000
    if refusals == 1:
        assert result["status"] == "completed" and result["text"] == "Answered after all."
    else:
        assert result["status"] == "failed"
        assert "longer than the model's context window" in result["error"]
        assert "maximum context length is 30000" in result["error"]


async def test_compact_on_demand_and_refused_during_a_turn(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    big_file(project, "big1.txt")
    fake_model.set_script(
        {
            "routes": [
                summary_route(),
                route("first question", reply("", read("big1.txt")), reply("A1")),
                route(
                    # Long enough to be asked to compact meanwhile (~4 s, not 13: 255 chunks).
                    "slow story",
                    reply("once upon a time " * 30, chunk_size=200, chunk_delay=1.0),
                ),
                route("next question", reply("A2")),
            ]
        }
    )
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        sid = await new_session(client, project)
        empty = await client.request("wave/session/compact", {"sessionId": sid})
        assert empty["compacted"] is False
        await send(client, sid, "first question")
        done = await client.request(
            "wave/session/compact", {"sessionId": sid, "instructions": "keep the numbers"}
        )
        assert done["compacted"] is True and done["tokensBefore"] > done["tokensAfter"] > 0
        summary_body = fake_model.chat_bodies()[-1]
        assert is_summary_request(summary_body) and "keep the numbers" in texts(summary_body)
        assert "first question" in texts(summary_body)
        (update,) = client.updates_for(sid, "compacted")
        assert (update["tokensBefore"], update["tokensAfter"]) == (
            done["tokensBefore"],
            done["tokensAfter"],
        )

        _msg_id, running = client.start_request(
            "wave/chat/send", {"sessionId": sid, "text": "slow story"}
        )
        await client.wait_update(lambda u: u["kind"] == "assistantDelta")
        with pytest.raises(JsonRpcException) as refused:
            await client.request("wave/session/compact", {"sessionId": sid})
        assert refused.value.code == -32602
        assert "running a turn" in str(refused.value.message)
        assert (await running)["status"] == "completed"

        assert (await send(client, sid, "next question"))["text"] == "A2"
    last = fake_model.chat_bodies()[-1]
    assert SUMMARY in last["messages"][1]["content"]
    assert "first question" not in texts(last) and "slow story" in texts(last)


async def test_a_subagent_compacts_its_own_context_only(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    names = [f"big{i}.txt" for i in range(1, 5)]
    for name in names:
        big_file(project, name)
    settings(project, {"context": {"windowTokens": WINDOW}})
    task = {"subagent_type": "general-purpose", "description": "read", "prompt": "SUB TASK"}
    fake_model.set_script(
        {
            "routes": [
                summary_route(),
                route("delegate the reading", reply("", call("Agent", task)), reply("parent done")),
                route("SUB TASK", *(reply("", read(n)) for n in names)),
                # After its compaction the subagent's request holds the summary, not the task.
                route(SUMMARY, reply("sub result")),
            ]
        }
    )
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        sid = await new_session(client, project)
        result = await send(client, sid, "delegate the reading")
        messages = (await client.request("wave/session/messages", {"sessionId": sid}))["messages"]
        assert client.updates_for(sid, "compacted") == []
    assert result["text"] == "parent done"
    bodies = fake_model.chat_bodies()
    summaries = [b for b in bodies if is_summary_request(b)]
    assert len(summaries) == 1
    assert "SUB TASK" in texts(summaries[0]) and "delegate the reading" not in texts(summaries[0])
    parent = [b for b in bodies if "You are wave" in b["messages"][0]["content"]]
    sub = [b for b in bodies if b not in parent and b not in summaries]
    assert SUMMARY in sub[-1]["messages"][1]["content"] and "SUB TASK" in texts(sub[0])
    # The parent's history and requests never held the subagent's compaction.
    assert not any((m.get("meta") or {}).get("kind") == "compacted" for m in messages)
    assert len(parent) == 2 and all(SUMMARY not in texts(b) for b in parent)
    assert "sub result" in json.dumps([m for m in parent[-1]["messages"] if m["role"] == "tool"])


async def test_a_tool_output_too_large_for_the_window_is_cut_with_a_note(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    big_file(project, "huge.txt", lines=300)  # ~27,000 characters: more than 20 % of 18,400
    settings(project, {"context": {"windowTokens": WINDOW}})
    fake_model.set_script(
        {
            "routes": [
                summary_route(),
                route(
                    "read it", reply("", {**read("huge.txt"), "id": "../../escape"}), reply("Read.")
                ),
            ]
        }
    )
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        sid = await new_session(client, project)
        await send(client, sid, "read it")
    (output,) = [
        m["content"] for m in fake_model.chat_bodies()[1]["messages"] if m["role"] == "tool"
    ]
    assert len(output) < 16_000 and "characters cut here" in output
    assert "more than 20% of the model's context window (18,400 tokens)" in output
    kept_dir = home / ".wave" / "tool-outputs" / sid
    (kept,) = kept_dir.iterdir()
    assert kept.name == "______escape.txt"  # the model's call id, made a plain file name
    assert str(kept) in output and "Read with offset and limit" in output
    assert kept.read_text().count("hugeefgh") == 300 * 10


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ("settings", 50_000),
        ("option", 40_000),
        ("env", 45_000),
        ("all three", 50_000),
        ("option and env", 40_000),
        ("vllm", 24_000),
        ("llama.cpp", 12_288),
        ("nothing", 32_768),
    ],
)
async def test_where_the_window_comes_from(
    where: str, expected: int, fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    extra: dict[str, str] = {}
    options: dict[str, Any] = {}
    script: dict[str, Any] = {"routes": [route("hello", reply("Hi."))]}
    if where in ("settings", "all three"):
        settings(project, {"context": {"windowTokens": 50_000}})
    if where in ("option", "all three", "option and env"):
        options["contextWindow"] = 40_000
    if where in ("env", "all three", "option and env"):
        extra["WAVE_CONTEXT_WINDOW"] = "45000"
    if where == "vllm":
        script["model_info"] = {"max_model_len": 24_000}
    if where == "llama.cpp":
        script["props"] = {"default_generation_settings": {"n_ctx": 12_288}}
        script["model_info"] = {"meta": {"n_ctx_train": 131_072}}
    fake_model.set_script(script)
    env = server_env(home, fake_model.base_url, **extra)
    async with wave_client(env, init_options=options or None) as client:
        sid = await new_session(client, project)
        await send(client, sid, "hello")
        usage = client.updates_for(sid, "contextUsage")
    assert usage and {u["windowTokens"] for u in usage} == {expected}
    assert 0 < usage[-1]["tokens"] < expected
    (body,) = fake_model.chat_bodies()
    assert body["max_tokens"] == min(8192, expected // 4)


async def test_auto_compaction_can_be_turned_off(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # The numbers of the first test: the fourth request would be compacted first.
    names = ["big1.txt", "big2.txt", "big3.txt"]
    for name in names:
        big_file(project, name)
    settings(project, {"context": {"windowTokens": WINDOW, "autoCompact": False}})
    steps = [*(reply("", read(n)) for n in names), reply("Read them.")]
    fake_model.set_script({"routes": [summary_route(), route("read them", *steps)]})
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        sid = await new_session(client, project)
        assert (await send(client, sid, "read them"))["text"] == "Read them."
        assert client.updates_for(sid, "compacted") == []
        assert client.updates_for(sid, "contextUsage")[-1]["tokens"] > LIMIT
    assert not any(is_summary_request(b) for b in fake_model.chat_bodies())


async def test_context_usage_follows_each_rounds_usage(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # contextUsage follows each round's usage update, before the turn ends.
    fake_model.set_script({"routes": [route("hello", reply("Hi."))]})
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        sid = await new_session(client, project)
        await send(client, sid, "hello")
        await asyncio.wait_for(client.wait_update(lambda u: u["kind"] == "turnEnded"), 10)
        kinds = [u["kind"] for u in client.updates_for(sid)]
    assert kinds.index("usage") < kinds.index("contextUsage") < kinds.index("turnEnded")


async def test_a_summary_request_refused_for_its_length_is_sent_again_shorter(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # Text denser than the estimate (numbers, another script) can make the summary request
    # itself too long: it is sent again with half the conversation's text.
    big_file(project, "big1.txt", lines=250)
    refused_once = {"status": 400, "body": REFUSAL, "times": 1}
    fake_model.set_script(
        {
            "routes": [
                route("", reply(SUMMARY, fault=refused_once), system=SUMMARIZER),
                route("first question", reply("", read("big1.txt")), reply("A1")),
            ]
        }
    )
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        sid = await new_session(client, project)
        await send(client, sid, "first question")
        done = await client.request("wave/session/compact", {"sessionId": sid})
    assert done["compacted"] is True
    refused, sent = [b for b in fake_model.chat_bodies() if is_summary_request(b)]
    assert len(texts(sent)) < len(texts(refused)) * 0.75
