"""A saved history carries each call's target and kind (issue 29 point 3): the tool message
of every call keeps, in its ``meta``, the ``target`` and ``toolKind`` its block showed, so
that ``wave/session/messages`` replays a call as it was shown live, for a session still open
and for a saved one read by another server (a real ``wave-ls`` over LSP, the offline model);
ACP's ``session/load`` replay reads them too."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.fake_model import FakeModelServer, call, reply, route
from tests.support.lsp import server_env, wave_client
from wave_ls.acp.history import replay
from wave_ls.runtime.core import Message, ToolCall

LONG = "def  answer\n" + "x" * 300


def shown(messages: list[dict[str, Any]]) -> dict[str, tuple[str, str, str]]:
    """``tool_call_id -> (name, target, toolKind)`` of the history's tool messages."""
    return {
        m["tool_call_id"]: (m["name"], m["meta"]["target"], m["meta"]["toolKind"])
        for m in messages
        if m["role"] == "tool"
    }


async def test_a_replayed_history_carries_each_calls_target_and_kind(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(
        {
            "routes": [
                route(
                    "look",
                    reply(
                        "",
                        call("Read", {"file_path": "src/app.py"}, id="c1"),
                        call("Grep", {"pattern": LONG, "path": "src"}, id="c2"),
                    ),
                    reply("", call("TaskList", {}, id="c3")),
                    reply("Seen."),
                )
            ]
        }
    )
    env = server_env(home, fake_model.base_url)
    blocks: dict[str, tuple[str, str]] = {}
    async with wave_client(env) as client:
        sid = (await client.request("wave/session/new", {"cwd": str(project)}))["sessionId"]
        result = await client.request("wave/chat/send", {"sessionId": sid, "text": "look"})
        assert result["status"] == "completed", result
        for block in client.updates_for(sid, "toolBlock"):  # each call's last update
            blocks[block["toolCallId"]] = (block["target"], block["toolKind"])
        live = await client.request("wave/session/messages", {"sessionId": sid})
    expected = {
        "c1": ("Read", "src/app.py", "read"),
        "c2": ("Grep", ("def answer " + "x" * 300)[:199] + "…", "search"),
        "c3": ("TaskList", "", "think"),
    }
    assert shown(live["messages"]) == expected
    # As the live blocks showed them.
    assert {cid: (target, kind) for cid, (_n, target, kind) in expected.items()} == blocks
    async with wave_client(env) as client:  # a saved session, not resumed
        saved = await client.request("wave/session/messages", {"sessionId": sid})
    assert shown(saved["messages"]) == expected


def test_acps_replay_titles_a_call_from_the_target_its_block_showed() -> None:
    # An MCP tool's key argument is known only to its live server: the kept target says it.
    search = ToolCall("c1", "mcp__docs__search", '{"limit": "5", "q": "hooks"}')
    meta = {"target": "hooks", "toolKind": "search"}

    def replayed(meta: dict[str, Any]) -> tuple[str, str]:
        messages = [
            Message("assistant", "", [search]),
            Message("tool", "found", tool_call_id="c1", name=search.name, meta=meta),
        ]
        [update] = replay(messages, Path("/w"))
        return update.title, update.kind

    assert replayed(meta) == ("docs: search hooks", "search")
    assert replayed({}) == ("docs: search 5", "other")  # saved before: the first text argument
