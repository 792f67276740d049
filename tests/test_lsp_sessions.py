"""Sessions for the editor clients, end to end over LSP: ``wave/session/list``,
``wave/session/close`` and ``wave/session/configure`` (PROTOCOL.md "Added for the editor
clients"), against a real ``wave-ls`` process and the offline model."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from tests.support.background import (
    delegate_bg,
    pid_of,
    script,
    send,
    sleeper,
    wait_for,
    wait_group_gone,
    wave_client,
)
from tests.support.fake_model import FakeModelServer, call, reply, route
from tests.support.lsp import WaveClient, capabilities, server_env
from tests.support.processes import alive
from tests.support.waiting import until


async def new_session(client: WaveClient, cwd: Path, **params: Any) -> str:
    result = await client.request("wave/session/new", {"cwd": str(cwd), **params})
    return str(result["sessionId"])


async def listed(client: WaveClient, **params: Any) -> list[dict[str, Any]]:
    result = await client.request("wave/session/list", params)
    sessions: list[dict[str, Any]] = result["sessions"]
    return sessions


def open_fds(pid: int) -> set[str]:
    """What the process's descriptors point at (files, sockets, pipes)."""
    out = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            out.add(os.readlink(f"/proc/{pid}/fd/{fd}"))
        except OSError:
            continue  # closed while we looked
    return out


def server_pid(client: WaveClient) -> int:
    assert client._server is not None
    return client._server.pid


async def expect_error(client: WaveClient, method: str, params: Any, code: int) -> str:
    with pytest.raises(JsonRpcException) as caught:
        await client.request(method, params)
    assert caught.value.code == code, caught.value
    return str(caught.value)


async def test_list_shows_live_and_saved_sessions_with_title_count_and_times(
    fake_model: FakeModelServer, home: Path, project: Path, tmp_path: Path
) -> None:
    fake_model.set_script(script(route("", reply("Sure."))))
    other = tmp_path / "other"
    other.mkdir()
    long_text = "Please   look at\n[@agent:Explore] and then " + "x" * 200
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        started = int(time.time() * 1000)
        first = await new_session(client, project)
        await send(client, first, long_text)
        await send(client, first, "second message")
        now = int(time.time() * 1000)  # a later updatedAt (in ms) for the second session:
        await until(lambda: int(time.time() * 1000) > now, 1, "the next millisecond")
        second = await new_session(client, other)
        await send(client, second, "hello from the other folder")

        sessions = await listed(client)
        assert [s["sessionId"] for s in sessions] == [second, first]  # newest first
        by_id = {s["sessionId"]: s for s in sessions}
        messages = await client.request("wave/session/messages", {"sessionId": first})
        assert by_id[first]["messageCount"] == len(messages["messages"])
        # The mention added a reminder message: counted as a message, never as the title.
        assert any((m.get("meta") or {}).get("reminder") for m in messages["messages"])
        title = by_id[first]["title"]
        assert title.startswith("Please look at [@agent:Explore] and then xxx")
        assert len(title) <= 80 and "\n" not in title
        assert by_id[second]["title"] == "hello from the other folder"
        assert by_id[first]["cwd"] == str(project) and by_id[second]["cwd"] == str(other)
        for session in sessions:
            assert session["live"] is True
            assert started - 1000 <= session["createdAt"] <= session["updatedAt"]
            assert session["updatedAt"] <= int(time.time() * 1000) + 1000

        only_project = await listed(client, cwd=str(project))
        assert [s["sessionId"] for s in only_project] == [first]

    # A new server process: the same sessions, read from disk, not live, and resumable.
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        sessions = await listed(client)
        assert [s["sessionId"] for s in sessions] == [second, first]
        assert all(s["live"] is False for s in sessions)
        assert {s["sessionId"]: s["messageCount"] for s in sessions} == {
            first: by_id[first]["messageCount"],
            second: by_id[second]["messageCount"],
        }
        resumed = await client.request("wave/session/new", {"sessionId": first})
        assert resumed["sessionId"] == first
        result = await send(client, first, "third message")
        assert result["status"] == "completed"
        sessions = await listed(client)
        assert sessions[0]["sessionId"] == first and sessions[0]["live"] is True
        assert sessions[0]["messageCount"] == by_id[first]["messageCount"] + 2
        assert sessions[0]["title"] == title


async def test_list_rejects_a_relative_cwd(home: Path) -> None:
    async with wave_client(server_env(home)) as client:
        await expect_error(client, "wave/session/list", {"cwd": "relative/dir"}, -32602)
        assert await listed(client, cwd="/no/such/folder") == []


async def test_close_cancels_the_turn_stops_tasks_and_frees_the_transcript(
    fake_model: FakeModelServer, home: Path, project: Path, tmp_path: Path
) -> None:
    pid_file = tmp_path / "bash.pid"
    fake_model.set_script(
        script(
            route(
                "start work",
                reply(
                    "",
                    call(
                        "Bash",
                        {"command": f"echo $$ > {pid_file}; sleep 60", "run_in_background": True},
                    ),
                ),
                reply("Started it; now a long answer.", fault={"hang": True}),
            )
        )
    )
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        pid = server_pid(client)
        before = open_fds(pid)
        sid = await new_session(client, project, permissionMode="bypassPermissions")
        transcript = str(home / ".wave" / "sessions" / f"{sid}.jsonl")
        _msg_id, turn = client.start_request(
            "wave/chat/send", {"sessionId": sid, "text": "start work"}
        )
        shell_pid = await pid_of(pid_file)
        await wait_for(lambda: transcript in open_fds(pid), 5, "the transcript to be open")

        closed = await client.request("wave/session/close", {"sessionId": sid})
        assert closed == {"closed": True}
        result = await asyncio.wait_for(turn, 10)
        assert result["status"] == "cancelled"
        await wait_group_gone(shell_pid)
        assert not alive(shell_pid)
        assert transcript not in open_fds(pid)
        assert open_fds(pid) <= before | {p for p in open_fds(pid) if p.startswith("socket:")}

        # Closed: no longer live, refused like an unknown session, closing again is a no.
        error = await expect_error(
            client, "wave/chat/send", {"sessionId": sid, "text": "hi"}, -32602
        )
        assert sid in error
        assert await client.request("wave/session/close", {"sessionId": sid}) == {"closed": False}
        assert await client.request("wave/session/close", {"sessionId": "nope"}) == {
            "closed": False
        }
        (entry,) = await listed(client)
        assert entry["sessionId"] == sid and entry["live"] is False
        stopped = [u for u in client.updates_for(sid, "task") if u["task"]["status"] == "stopped"]
        assert stopped, "the background command's stop was reported"

        # It can be resumed: its history is back and it answers again.
        fake_model.set_script(script(route("again", reply("Back again."))))
        await client.request("wave/session/new", {"sessionId": sid})
        result = await send(client, sid, "again")
        assert (result["status"], result["text"]) == ("completed", "Back again.")


async def test_close_stops_a_background_subagent_and_keeps_nothing_running(
    fake_model: FakeModelServer, home: Path, project: Path, tmp_path: Path
) -> None:
    pid_file = tmp_path / "sub.pid"
    fake_model.set_script(
        script(
            route("survey", reply("", delegate_bg("Survey slowly")), reply("Started.")),
            route("Survey slowly", *sleeper(pid_file)),
        )
    )
    async with wave_client(
        server_env(home, fake_model.base_url), caps=capabilities(permission=True)
    ) as client:
        sid = await new_session(client, project, permissionMode="bypassPermissions")
        await send(client, sid, "survey")
        sleeper_pid = await pid_of(pid_file)
        assert await client.request("wave/session/close", {"sessionId": sid}) == {"closed": True}
        await wait_group_gone(sleeper_pid)
        tasks = [u["task"] for u in client.updates_for(sid, "task")]
        assert tasks[-1]["status"] == "stopped"


async def test_configure_switches_mode_and_model_from_the_next_round(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(
        script(
            route(
                "slow tool",
                reply("", call("Bash", {"command": "sleep 1.5"})),
                reply("done"),
            ),
            route(
                "write it",
                reply("", call("Write", {"file_path": "new.txt", "content": "x"})),
                reply("tried"),
            ),
        )
    )
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        sid = await new_session(client, project, permissionMode="bypassPermissions")
        _id, turn = client.start_request("wave/chat/send", {"sessionId": sid, "text": "slow tool"})
        await client.wait_update(
            lambda u: u.get("kind") == "toolBlock" and u.get("status") == "running"
        )
        now = await client.request(
            "wave/session/configure", {"sessionId": sid, "model": "other-model"}
        )
        assert now == {"permissionMode": "bypassPermissions", "model": "other-model"}
        assert (await turn)["status"] == "completed"
        models = [body["model"] for body in fake_model.chat_bodies()]
        assert models == ["test-model", "other-model"]  # the running round kept its model

        now = await client.request(
            "wave/session/configure", {"sessionId": sid, "permissionMode": "plan"}
        )
        assert now == {"permissionMode": "plan", "model": "other-model"}
        await send(client, sid, "write it")
        assert not (project / "new.txt").exists()
        tool_result = fake_model.chat_bodies()[-1]["messages"][-1]
        assert tool_result["role"] == "tool" and "Plan mode" in tool_result["content"]

        await expect_error(
            client, "wave/session/configure", {"sessionId": sid, "permissionMode": "yolo"}, -32602
        )
        await expect_error(
            client, "wave/session/configure", {"sessionId": "nope", "model": "m"}, -32602
        )
        await expect_error(client, "wave/session/configure", {"sessionId": sid, "model": 3}, -32602)
        await client.request("wave/session/close", {"sessionId": sid})
        # A resumed session keeps the mode and model it was configured with.
        await client.request("wave/session/new", {"sessionId": sid})
        again = await client.request("wave/session/configure", {"sessionId": sid})
        assert again == {"permissionMode": "plan", "model": "other-model"}


async def test_cancel_stops_the_running_turn_whoever_started_it(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(
        script(
            route(
                "start",
                reply("", call("Bash", {"command": "sleep 0.3", "run_in_background": True})),
                reply("Started it."),
            ),
            # The turn the session starts by itself for the notice hangs until cancelled.
            route("A background", reply("Reading the notice...", fault={"hang": True})),
            route("hello", reply("Hello.", fault={"hang": True})),
        )
    )
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        sid = await new_session(client, project, permissionMode="bypassPermissions")
        assert await client.request("wave/session/cancel", {"sessionId": sid}) == {
            "cancelled": False
        }
        await send(client, sid, "start")
        await client.wait_update(
            lambda u: bool(
                u.get("kind") == "userMessage"
                and bool((u["message"].get("meta") or {}).get("taskNotification"))
            )
        )
        assert await client.request("wave/session/cancel", {"sessionId": sid}) == {
            "cancelled": True
        }
        ended = await client.wait_update(
            lambda u: u.get("kind") == "turnEnded" and u.get("status") == "cancelled"
        )
        assert ended["sessionId"] == sid

        # A user's turn too: its wave/chat/send answers "cancelled".
        _id, turn = client.start_request("wave/chat/send", {"sessionId": sid, "text": "hello"})
        await client.wait_update(
            lambda u: u.get("kind") == "userMessage" and u["message"]["content"] == "hello"
        )
        assert (await client.request("wave/session/cancel", {"sessionId": sid}))["cancelled"]
        assert (await asyncio.wait_for(turn, 10))["status"] == "cancelled"
        await expect_error(client, "wave/session/cancel", {"sessionId": "nope"}, -32602)

        # Each tool result keeps what its block showed, for a replayed history.
        messages = (await client.request("wave/session/messages", {"sessionId": sid}))["messages"]
        (bash,) = [m for m in messages if m["role"] == "tool" and m["name"] == "Bash"]
        assert "started in background" in bash["meta"]["shortResult"]
        assert bash["meta"]["details"]


async def test_two_resumes_of_one_saved_session_at_once_give_one_live_session(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # An editor resumes its chat after a server restart while the user already sends into
    # it: both ask for the same saved session at once, and both must get it, not a second
    # session writing the same transcript (or an error that loses the message).
    fake_model.set_script(script(route("first", reply("One.")), route("again", reply("Two."))))
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        sid = await new_session(client, project)
        assert (await send(client, sid, "first"))["text"] == "One."
        assert await client.request("wave/session/close", {"sessionId": sid}) == {"closed": True}

        resumes = await asyncio.gather(
            *(client.request("wave/session/new", {"sessionId": sid}) for _ in range(3))
        )
        assert [r["sessionId"] for r in resumes] == [sid] * 3
        result = await send(client, sid, "again")
        assert (result["status"], result["text"]) == ("completed", "Two.")
        (entry,) = await listed(client)
        assert entry["sessionId"] == sid and entry["live"] is True


async def test_planted_and_oversized_transcripts_are_reported_not_read(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # issue 25 point 4: a FIFO in ~/.wave/sessions hung list, messages and resume; a link
    # to /dev/zero grew the server until the OOM killer ended it.
    fake_model.set_script(script(route("", reply("Hello."))))
    sessions = home / ".wave" / "sessions"
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        sid = await new_session(client, project)
        await send(client, sid, "hi")
        await client.request("wave/session/close", {"sessionId": sid})
        os.mkfifo(sessions / "fifo.jsonl")
        (sessions / "zero.jsonl").symlink_to("/dev/zero")
        header = json.dumps({"type": "session", "version": 1, "sessionId": "huge"})
        with (sessions / "huge.jsonl").open("wb") as huge:  # sparse: takes no disk
            huge.write(header.encode() + b"\n")
            huge.truncate(200 * 1024 * 1024)

        listing = await asyncio.wait_for(listed(client), 20)
        assert {s["sessionId"] for s in listing} == {sid, "huge"}
        assert next(s for s in listing if s["sessionId"] == "huge")["tooLarge"] is True
        assert "tooLarge" not in next(s for s in listing if s["sessionId"] == sid)
        for planted in ("fifo", "zero"):
            for method in ("wave/session/messages", "wave/session/new"):
                message = await asyncio.wait_for(
                    expect_error(client, method, {"sessionId": planted}, -32602), 10
                )
                assert "not a regular file" in message
        message = await asyncio.wait_for(
            expect_error(client, "wave/session/new", {"sessionId": "huge"}, -32602), 10
        )
        assert "200 MiB" in message and "at most 128 MiB" in message
        resumed = await client.request("wave/session/new", {"sessionId": sid})
        assert resumed == {"sessionId": sid, "resumed": True}
