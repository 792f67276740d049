"""Chat sessions over LSP, end to end: a real wave-ls process, the offline model over HTTP."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from tests.support.fake_model import FakeModelServer, call, reply, route
from tests.support.lsp import CLIENTS, capabilities, server_env, wave_client
from tests.support.waiting import until


def script(*routes: dict[str, Any]) -> dict[str, Any]:
    return {"routes": list(routes)}


async def new_session(client: Any, cwd: Path, **extra: Any) -> str:
    result = await client.request("wave/session/new", {"cwd": str(cwd), **extra})
    return str(result["sessionId"])


def tool_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [m for m in body["messages"] if m["role"] == "tool"]


@pytest.mark.parametrize("client_name", CLIENTS)
async def test_turn_with_tool_calls_streams_every_update(
    client_name: str, fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(
        script(
            route(
                "what does answer return",
                reply("Let me read it.", call("Read", {"file_path": "src/app.py"})),
                reply("It returns 41.", chunk_size=3),
            )
        )
    )
    async with wave_client(
        server_env(home, fake_model.base_url), caps=capabilities(client_name)
    ) as client:
        sid = await new_session(client, project)
        result = await client.request(
            "wave/chat/send", {"sessionId": sid, "text": "what does answer return?"}
        )
        assert result["status"] == "completed"
        assert result["text"] == "It returns 41."
        assert result["usage"]["total_tokens"] > 0
        await client.wait_update(lambda u: u["kind"] == "turnEnded")

        kinds = [u["kind"] for u in client.updates_for(sid)]
        assert kinds[0] == "messagesChanged" or kinds[0] == "userMessage"
        assert "assistantDelta" in kinds
        assert kinds.count("assistantMessage") == 2
        assert kinds[-1] == "turnEnded"
        blocks = client.updates_for(sid, "toolBlock")
        assert blocks[0]["status"] == "pending"
        assert blocks[-1]["status"] == "completed"
        assert blocks[-1]["name"] == "Read"
        assert "return 41" in blocks[-1]["result"]
        deltas = client.updates_for(sid, "assistantDelta")
        # Deltas carry only the new text; the whole message comes once, in assistantMessage.
        assert all(set(d) == {"sessionId", "kind", "delta"} for d in deltas)
        assert "".join(d["delta"] for d in deltas).endswith("It returns 41.")

    # The model saw the tool result in its second round.
    second = fake_model.chat_bodies()[1]
    assert "return 41" in tool_messages(second)[0]["content"]


async def test_cancel_mid_stream_leaves_the_session_usable(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(
        script(
            route(
                "tell me a long story",
                reply("once upon a time " * 40, chunk_size=4, chunk_delay=0.05),
            ),
            route("short answer please", reply("Short.")),
        )
    )
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        sid = await new_session(client, project)
        msg_id, send = client.start_request(
            "wave/chat/send", {"sessionId": sid, "text": "tell me a long story"}
        )
        await client.wait_update(lambda u: u["kind"] == "assistantDelta")
        client.send_cancel(msg_id)
        ended = await client.wait_update(lambda u: u["kind"] == "turnEnded")
        assert ended["status"] == "cancelled"
        assert (await send)["status"] == "cancelled"
        result = await client.request(
            "wave/chat/send", {"sessionId": sid, "text": "short answer please"}
        )
        assert result == {"status": "completed", "text": "Short.", "usage": result["usage"]}
        # The text the user saw before stopping stays in the history, marked as cut off; the
        # model saw it too in the next round.
        messages = (await client.request("wave/session/messages", {"sessionId": sid}))["messages"]
        partial = [m for m in messages if (m.get("meta") or {}).get("interrupted")]
        assert len(partial) == 1 and "once upon a time".startswith(partial[0]["content"])
        assert partial[0]["role"] == "assistant"
        last_body = fake_model.chat_bodies()[-1]["messages"]
        assert any(m["content"] == partial[0]["content"] for m in last_body)
        # Each completed round keeps its usage in meta; a resumed session starts from the sum.
        short = messages[-1]
        assert short["content"] == "Short." and short["meta"]["usage"]["total_tokens"] > 0
        await client.request("wave/session/close", {"sessionId": sid})
        await client.request("wave/session/new", {"sessionId": sid})
        await client.request("wave/chat/send", {"sessionId": sid, "text": "short answer please"})
        usage = client.updates_for(sid, "usage")
        before, after = usage[-2], usage[-1]  # the last round before the close, the first after
        assert after["total"]["total_tokens"] == (
            before["total"]["total_tokens"] + after["usage"]["total_tokens"]
        )


async def test_cancel_mid_tool_kills_the_command(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(
        script(
            route(
                "run the slow thing",
                reply("", call("Bash", {"command": "echo $$ > pid.txt; sleep 30"})),
            ),
            route("are you there", reply("Yes.")),
        )
    )
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        sid = await new_session(client, project, permissionMode="bypassPermissions")
        msg_id, send = client.start_request(
            "wave/chat/send", {"sessionId": sid, "text": "run the slow thing"}
        )
        await client.wait_update(lambda u: u["kind"] == "toolBlock" and u["status"] == "running")
        pid_file = project / "pid.txt"
        await until(lambda: pid_file.exists() and pid_file.read_text().strip(), 5, "the pid")
        pid = int((project / "pid.txt").read_text())
        client.send_cancel(msg_id)
        ended = await client.wait_update(lambda u: u["kind"] == "turnEnded")
        assert ended["status"] == "cancelled"
        assert (await send)["status"] == "cancelled"
        await until(lambda: not Path(f"/proc/{pid}").exists(), 5, "the cancelled command's end")
        result = await client.request(
            "wave/chat/send", {"sessionId": sid, "text": "are you there?"}
        )
        assert result["text"] == "Yes."
    # The model's history stays valid: the interrupted call got a result.
    last = fake_model.chat_bodies()[-1]
    assert "Interrupted" in tool_messages(last)[0]["content"]


async def test_two_sessions_in_parallel_do_not_mix(
    fake_model: FakeModelServer, home: Path, project: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    fake_model.set_script(
        script(
            route("alpha", reply("alpha " * 20, chunk_size=5, chunk_delay=0.01)),
            route("beta", reply("beta " * 20, chunk_size=5, chunk_delay=0.01)),
        )
    )
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        a = await new_session(client, project)
        b = await new_session(client, other, model="other-model")
        ra, rb = await asyncio.gather(
            client.request("wave/chat/send", {"sessionId": a, "text": "alpha"}),
            client.request("wave/chat/send", {"sessionId": b, "text": "beta"}),
        )
        assert ra["text"].startswith("alpha") and rb["text"].startswith("beta")
        for sid, word, stranger in ((a, "alpha", "beta"), (b, "beta", "alpha")):
            text = json.dumps(client.updates_for(sid))
            assert word in text and stranger not in text
    models = {body["messages"][-1]["content"]: body["model"] for body in fake_model.chat_bodies()}
    assert models == {"alpha": "test-model", "beta": "other-model"}


async def test_second_message_on_a_busy_session_is_refused(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(script(route("slow", reply("done", delay=1.0))))
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        sid = await new_session(client, project)
        first = asyncio.create_task(
            client.request("wave/chat/send", {"sessionId": sid, "text": "slow"})
        )
        await client.wait_update(lambda u: u["kind"] == "userMessage")
        with pytest.raises(JsonRpcException) as error:
            await client.request("wave/chat/send", {"sessionId": sid, "text": "slow again"})
        assert error.value.code == -32010
        assert "still answering" in error.value.message
        assert (await first)["text"] == "done"


WRITE_SCRIPT = script(
    route(
        "create notes",
        reply("", call("Write", {"file_path": "notes.txt", "content": "hello\n"})),
        reply("Done."),
    )
)


@pytest.mark.parametrize("answer", [True, False])
async def test_permission_is_asked_in_default_mode(
    answer: bool, fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(WRITE_SCRIPT)
    async with wave_client(
        server_env(home, fake_model.base_url), caps=capabilities(permission=True)
    ) as client:
        client.permission_answer = lambda _p: {
            "allowed": answer,
            "message": "" if answer else "Not now.",
        }
        sid = await new_session(client, project)
        await client.request("wave/chat/send", {"sessionId": sid, "text": "create notes"})
        assert len(client.permission_requests) == 1
        request = client.permission_requests[0]
        assert request["sessionId"] == sid
        assert request["toolName"] == "Write"
        assert "notes.txt" in request["summary"]
    assert (project / "notes.txt").exists() is answer
    result = tool_messages(fake_model.chat_bodies()[-1])[0]["content"]
    if not answer:
        assert "Not now." in result


async def test_client_without_permission_support_is_never_asked(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(WRITE_SCRIPT)
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        sid = await new_session(client, project)
        result = await client.request("wave/chat/send", {"sessionId": sid, "text": "create notes"})
        assert result["status"] == "completed"
        assert client.permission_requests == []
    assert not (project / "notes.txt").exists()
    denial = tool_messages(fake_model.chat_bodies()[-1])[0]["content"]
    assert "cannot show permission prompts" in denial


async def test_accept_edits_writes_without_asking(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(WRITE_SCRIPT)
    async with wave_client(
        server_env(home, fake_model.base_url), caps=capabilities(permission=True)
    ) as client:
        sid = await new_session(client, project, permissionMode="acceptEdits")
        await client.request("wave/chat/send", {"sessionId": sid, "text": "create notes"})
        assert client.permission_requests == []
    assert (project / "notes.txt").read_text() == "hello\n"


async def test_resume_after_the_server_was_killed(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(
        script(
            route("remember the number 7", reply("Noted: 7.")),
            route("which number", reply("It was 7.")),
        )
    )
    env = server_env(home, fake_model.base_url)
    text = "[@agent:Explore] remember the number 7 [@file:src/app.py]"
    async with wave_client(env) as client:
        sid = await new_session(client, project)
        await client.request("wave/chat/send", {"sessionId": sid, "text": text})
        before = (await client.request("wave/session/messages", {"sessionId": sid}))["messages"]
        assert client._server is not None
        client._server.kill()  # no shutdown: a crash
        await client._server.wait()
    assert (home / ".wave" / "sessions" / f"{sid}.jsonl").exists()
    async with wave_client(env) as client:
        resumed = await client.request("wave/session/new", {"cwd": str(project), "sessionId": sid})
        assert resumed["sessionId"] == sid
        after = (await client.request("wave/session/messages", {"sessionId": sid}))["messages"]
        assert after == before
        # MENTION-7: the user's text comes back verbatim, tags included.
        assert after[0]["content"] == text
        result = await client.request(
            "wave/chat/send", {"sessionId": sid, "text": "which number was it?"}
        )
        assert result["text"] == "It was 7."
    contents = [m["content"] for m in fake_model.chat_bodies()[-1]["messages"]]
    assert text in contents and "Noted: 7." in contents


async def test_file_mentions_bring_the_file_to_the_model(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(script(route("explain", reply("It returns 41."))))
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        sid = await new_session(client, project)
        await client.request(
            "wave/chat/send",
            {"sessionId": sid, "text": "explain [@file:src/app.py] and @agent:Explore"},
        )
    users = [m["content"] for m in fake_model.chat_bodies()[0]["messages"] if m["role"] == "user"]
    file_reminders = [u for u in users if "<system-reminder>" in u and "return 41" in u]
    assert len(file_reminders) == 1
    # @agent: is never taken for a file
    assert not any("agent:Explore" in u and "does not exist" in u.lower() for u in users)


BAD_REQUESTS: list[tuple[str, Any]] = [
    ("wave/session/new", {}),
    ("wave/session/new", {"cwd": "relative/path"}),
    ("wave/session/new", {"cwd": "/definitely/not/here"}),
    ("wave/session/new", {"cwd": "/", "permissionMode": "yolo"}),
    ("wave/session/new", {"cwd": "/", "model": 5}),
    ("wave/session/new", [1, 2]),
    ("wave/chat/send", {"sessionId": "nope", "text": "hi"}),
    ("wave/chat/send", {"text": "hi"}),
    ("wave/chat/send", None),
    ("wave/session/messages", {}),
    ("wave/session/messages", {"sessionId": "../../etc/passwd"}),
    ("wave/agents/list", {"cwd": 3}),
    ("wave/agents/list", {"cwd": "/definitely/not/here"}),
    ("wave/chatInput/completion", {}),
    ("wave/chatInput/completion", {"text": "@", "cursor": 99}),
    ("wave/chatInput/completion", {"text": "@", "sessionId": "nope"}),
]


async def test_bad_params_get_an_invalid_params_error(home: Path) -> None:
    async with wave_client(server_env(home)) as client:
        for method, params in BAD_REQUESTS:
            with pytest.raises(JsonRpcException) as error:
                await asyncio.wait_for(client.request(method, params), 10)
            assert error.value.code == -32602, (method, params, error.value)
            assert error.value.message, (method, params)


async def test_bad_initialization_options_fall_back_and_are_shown(
    home: Path, project: Path
) -> None:
    options = {"permissionMode": "yolo", "model": 42}
    async with wave_client(server_env(home), init_options=options) as client:
        sid = await new_session(client, project)
        assert sid
        messages = [m.message for m in client.messages]
        assert any("permissionMode" in m for m in messages)
        assert any("model" in m for m in messages)


async def test_without_an_endpoint_the_turn_says_what_to_set(home: Path, project: Path) -> None:
    async with wave_client(server_env(home)) as client:
        sid = await new_session(client, project)
        result = await client.request("wave/chat/send", {"sessionId": sid, "text": "hi"})
        assert result["status"] == "failed"
        assert "OPENAI_BASE_URL" in result["error"] and "WAVE_MODEL" in result["error"]


async def test_options_override_the_environment(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(script(route("hi", reply("hello"))))
    env = server_env(home)
    options = {"baseUrl": fake_model.base_url, "apiKey": "k", "model": "from-options"}
    async with wave_client(env, init_options=options) as client:
        sid = await new_session(client, project)
        result = await client.request("wave/chat/send", {"sessionId": sid, "text": "hi"})
        assert result["text"] == "hello"
    assert fake_model.chat_bodies()[0]["model"] == "from-options"
    assert "OPENAI_BASE_URL" not in env and os.environ.get("WAVE_MODEL") != "from-options"
