"""A compaction that cannot make the conversation smaller is not made (issue 27 point 3): a
summary of a few short messages is as long as they are (6,997 -> 7,016 tokens was seen).
Over LSP with the offline model, whose token count is a quarter of a request's characters."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.fake_model import FakeModelServer, reply, route
from tests.support.lsp import server_env, wave_client

SUMMARIZER = "You summarize a coding session"  # the summary request's system prompt
LONG_SUMMARY = "SUMMARY-WORDS " * 300


def settings(project: Path, data: dict[str, Any]) -> None:
    folder = project / ".wave"
    folder.mkdir(exist_ok=True)
    (folder / "settings.local.json").write_text(json.dumps(data), encoding="utf-8")


def summary_requests(fake_model: FakeModelServer) -> list[dict[str, Any]]:
    return [b for b in fake_model.chat_bodies() if SUMMARIZER in str(b["messages"][0]["content"])]


async def test_compact_on_demand_of_a_tiny_conversation_changes_nothing_and_says_why(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(
        {
            "routes": [
                route("", reply(LONG_SUMMARY), system=SUMMARIZER),
                route("hi", reply("Hello.")),
                route("next", reply("Next.")),
            ]
        }
    )
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        sid = (await client.request("wave/session/new", {"cwd": str(project)}))["sessionId"]
        await client.request("wave/chat/send", {"sessionId": sid, "text": "hi"})
        done = await client.request("wave/session/compact", {"sessionId": sid})
        assert done["compacted"] is False
        assert done["tokensBefore"] == done["tokensAfter"] > 0
        assert not client.updates_for(sid, "compacted")
        (notice,) = [
            u for u in client.updates_for(sid, "notice") if "Compaction skipped" in u["text"]
        ]
        assert "would not make the conversation smaller" in notice["text"]
        assert f"{done['tokensBefore']:,} tokens now" in notice["text"]
        await client.request("wave/chat/send", {"sessionId": sid, "text": "next"})
        messages = (await client.request("wave/session/messages", {"sessionId": sid}))["messages"]
    assert len(summary_requests(fake_model)) == 1  # it was asked, then not used
    last = fake_model.chat_bodies()[-1]
    assert "SUMMARY-WORDS" not in json.dumps(last["messages"])
    assert any(m.get("content") == "hi" for m in last["messages"])
    assert not [m for m in messages if (m.get("meta") or {}).get("kind") == "compacted"]


async def test_no_automatic_compaction_when_the_prompt_alone_passes_the_threshold(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # The main agent's first request is ~6,900 tokens; a window of 8,000 sends max_tokens
    # 2,000, so a request may hold 6,000 before it is compacted first: every round passes it,
    # with a history far too short for a summary to help.
    settings(project, {"context": {"windowTokens": 8_000}})
    fake_model.set_script(
        {
            "routes": [
                route("", reply(LONG_SUMMARY), system=SUMMARIZER),
                route("first", reply("One.")),
                route("second", reply("Two.")),
            ]
        }
    )
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        sid = (await client.request("wave/session/new", {"cwd": str(project)}))["sessionId"]
        first = await client.request("wave/chat/send", {"sessionId": sid, "text": "first"})
        second = await client.request("wave/chat/send", {"sessionId": sid, "text": "second"})
        usage = client.updates_for(sid, "contextUsage")
        skipped = [
            u for u in client.updates_for(sid, "notice") if "Compaction skipped" in u["text"]
        ]
    assert (first["status"], second["status"]) == ("completed", "completed")
    assert usage and usage[-1]["tokens"] > 6_000  # past the limit all along
    assert summary_requests(fake_model) == []  # nothing worth summarizing: never asked
    assert not client.updates_for(sid, "compacted")
    assert len(skipped) == 1  # said once, not before every round


async def test_a_failed_automatic_compaction_is_not_tried_again_every_round(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # A model whose summary comes back empty: the round goes on uncompacted, and the next
    # attempt waits until the conversation has grown by a summary's worth (it was tried
    # before every round: 10 summary requests in a 50-round turn of bench_loop).
    settings(project, {"context": {"windowTokens": 16_000}})  # compacts past 12,000 tokens
    fake_model.set_script(
        {
            "routes": [
                route("", reply(""), system=SUMMARIZER),
                route("turn", reply("Noted.")),
                route("again", reply("Again.")),
            ]
        }
    )
    filler = "words " * 700  # ~1,050 tokens a message (a quarter of its characters)
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        sid = (await client.request("wave/session/new", {"cwd": str(project)}))["sessionId"]
        turns = []
        for n in range(6):
            text = f"turn {n}: {filler}"
            turns.append(await client.request("wave/chat/send", {"sessionId": sid, "text": text}))
            if summary_requests(fake_model):
                break
        tried = len(summary_requests(fake_model))
        for _ in range(2):
            turns.append(
                await client.request("wave/chat/send", {"sessionId": sid, "text": "again"})
            )
        usage = client.updates_for(sid, "contextUsage")
    assert tried == 1, "the window was never passed"
    assert [t["status"] for t in turns] == ["completed"] * len(turns)
    assert usage[-1]["tokens"] > 12_000  # still past the limit, uncompacted
    assert len(summary_requests(fake_model)) == 1  # not asked again for a few more words
    assert not client.updates_for(sid, "compacted")
