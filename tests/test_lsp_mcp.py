"""MCP servers end to end over LSP (issue 26): a real ``wave-ls``, the offline model and a real
MCP server written with the ``mcp`` SDK (``tests/support/mcp_server.py``), over stdio and
streamable HTTP. Each test asserts on what the model received and what the client saw."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcInvalidParams

from tests.support.fake_model import FakeModelServer, call, reply, route
from tests.support.git_repos import commit_all
from tests.support.lsp import WaveClient, capabilities, server_env, wave_client
from tests.support.mcp_helpers import (
    http_server,
    project_servers,
    stdio_server,
    user_servers,
    wait_status,
)
from tests.support.processes import alive
from tests.support.waiting import eventually_blocking
from tests.test_lsp_delegation import bodies_for, delegate, tool_names, tool_results, write_agents


@asynccontextmanager
async def server(
    fake: FakeModelServer, home: Path, permission: bool = False, **env: str
) -> AsyncIterator[WaveClient]:
    caps = capabilities(permission=permission)
    async with wave_client(server_env(home, fake.base_url, **env), caps=caps) as client:
        yield client


async def open_session(client: WaveClient, cwd: Path, mode: str = "bypassPermissions") -> str:
    result = await client.request("wave/session/new", {"cwd": str(cwd), "permissionMode": mode})
    return str(result["sessionId"])


async def send(client: WaveClient, sid: str, text: str) -> dict[str, Any]:
    result: dict[str, Any] = await client.request(
        "wave/chat/send", {"sessionId": sid, "text": text}
    )
    return result


async def servers(client: WaveClient, cwd: Path) -> dict[str, dict[str, Any]]:
    listed = await client.request("wave/mcp/list", {"cwd": str(cwd)})
    return {item["name"]: item for item in listed["servers"]}


def mcp_tools(body: dict[str, Any]) -> list[str]:
    return [name for name in tool_names(body) if name.startswith("mcp__")]


def wait_gone(pid: int, timeout: float = 15) -> bool:
    """Whether the process ended within ``timeout`` (the session's close stops it)."""
    return eventually_blocking(lambda: not alive(pid), timeout)


async def test_the_model_calls_mcp_tools_and_reads_their_results(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    user_servers(home, srv=stdio_server())
    fake_model.set_script(
        {
            "routes": [
                route(
                    "use the server",
                    reply(
                        "",
                        call("mcp__srv__echo", {"text": "hi"}),
                        call("mcp__srv__fail"),
                        call("mcp__srv__picture"),
                        call("mcp__srv__garbage"),
                        call("ReadMcpResource", {"server": "srv", "uri": "note://hello"}),
                    ),
                    reply("", call("mcp__srv__grow")),
                    reply("", call("mcp__srv__grown")),
                    reply("all done"),
                )
            ]
        }
    )
    async with server(fake_model, home) as client:
        sid = await open_session(client, project)
        connected = await wait_status(client, "srv", "connected")
        assert "mcp__srv__echo" in connected["tools"] and connected["scope"] == "user"
        result = await send(client, sid, "use the server")
        listed = await servers(client, project)
    assert result["status"] == "completed" and result["text"] == "all done"
    first, second, third, last = fake_model.chat_bodies()
    echo = next(t for t in first["tools"] if t["function"]["name"] == "mcp__srv__echo")
    assert echo["function"]["description"] == "Echo the text back"
    assert echo["function"]["parameters"]["properties"]["text"]["type"] == "string"
    results = tool_results(second)
    assert results[0] == "echo: hi"
    assert "it failed on purpose" in results[1]
    assert results[2] == "a caption\n[image (image/png, 9 bytes): not shown to the model]"
    assert results[3] == "answered after garbage"  # a line that is no MCP message is skipped
    assert results[4] == "hello from a resource"
    # notifications/tools/list_changed: the new tool is there from the next request.
    assert "mcp__srv__grown" not in tool_names(second)
    assert "mcp__srv__grown" in tool_names(third)
    assert tool_results(last)[-1] == "I am new"
    failed = [m for m in second["messages"] if m["role"] == "tool"][1]
    assert failed["content"].startswith("Error executing tool fail")
    assert listed["srv"]["status"] == "connected" and listed["srv"]["transport"] == "stdio"
    assert "mcp__srv__grown" in listed["srv"]["tools"]


async def test_a_slow_server_never_delays_the_first_request_and_the_model_is_told(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    user_servers(home, slow=stdio_server("--start-delay", "3"))
    fake_model.set_script({"routes": [route("hello", reply("hi"))]})
    async with server(fake_model, home) as client:
        sid = await open_session(client, project)
        await send(client, sid, "hello")
        starting = (await servers(client, project))["slow"]["status"]
        await wait_status(client, "slow", "connected")
        await send(client, sid, "hello again")
    first, second = fake_model.chat_bodies()
    assert starting == "starting"
    assert mcp_tools(first) == []
    notes = [
        m["content"] for m in first["messages"] if "MCP servers still starting" in m["content"]
    ]
    assert len(notes) == 1 and "slow" in notes[0]
    assert "mcp__slow__echo" in mcp_tools(second)
    # Told once: the second turn carries the first note in its history, and no new one.
    assert sum("still starting" in m["content"] for m in second["messages"]) == 1


async def test_no_server_configured_leaves_the_first_request_as_it_was(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script({"routes": [route("hello", reply("hi"))]})
    async with server(fake_model, home) as client:
        sid = await open_session(client, project)
        await send(client, sid, "hello")
        assert await servers(client, project) == {}
    (body,) = fake_model.chat_bodies()
    assert [m["role"] for m in body["messages"]] == ["system", "user"]
    assert mcp_tools(body) == [] and "ListMcpResources" not in tool_names(body)


async def test_a_project_server_stays_stopped_until_approved(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    project_servers(project, proj=stdio_server())  # not committed: approval is enough
    fake_model.set_script({"routes": [route("hello", reply("hi"))]})
    async with server(fake_model, home) as client:
        sid = await open_session(client, project)
        before = (await servers(client, project))["proj"]
        await send(client, sid, "hello")
        with pytest.raises(JsonRpcInvalidParams):
            await client.request(
                "wave/mcp/approve", {"cwd": str(project), "name": "nope", "approved": True}
            )
        answer = await client.request(
            "wave/mcp/approve", {"cwd": str(project), "name": "proj", "approved": True}
        )
        await wait_status(client, "proj", "connected")
        await send(client, sid, "hello again")
        refused = await client.request(
            "wave/mcp/approve", {"cwd": str(project), "name": "proj", "approved": False}
        )
        after = (await servers(client, project))["proj"]
    assert before["status"] == "needs-approval" and before["scope"] == "project"
    assert before["tools"] == [] and "approve" in before["error"]
    assert answer == {"status": "starting"}
    first, second = fake_model.chat_bodies()
    assert mcp_tools(first) == []
    assert any("waits for the user's approval" in m["content"] for m in first["messages"])
    assert "mcp__proj__echo" in mcp_tools(second)
    assert refused == {"status": "disabled"} and after["status"] == "disabled"
    # The answers are kept under ~/.wave, for that definition.
    kept = json.loads((home / ".wave" / "mcp-approvals.json").read_text())
    assert kept["projects"][str(project.resolve())]["proj"]["approved"] is False
    # Kept across restarts: a new server process lists it disabled at once.
    async with server(fake_model, home) as client:
        assert (await servers(client, project))["proj"]["status"] == "disabled"
        # A changed definition asks again.
        project_servers(project, proj=stdio_server("--start-delay", "0"))
        assert (await servers(client, project))["proj"]["status"] == "needs-approval"


async def test_a_committed_mcp_json_never_starts_in_a_folder_not_trusted(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    project_servers(project, repo=stdio_server())
    commit_all(project, "add .mcp.json")
    fake_model.set_script({"routes": [route("hello", reply("hi"))]})
    async with server(fake_model, home) as client:
        sid = await open_session(client, project)
        answer = await client.request(
            "wave/mcp/approve", {"cwd": str(project), "name": "repo", "approved": True}
        )
        listed = (await servers(client, project))["repo"]
        await send(client, sid, "hello")
        await client.request("wave/workspace/trust", {"cwd": str(project), "trusted": True})
        await send(client, sid, "hello again")  # the decision applies from the next round
        await wait_status(client, "repo", "connected")
    assert answer == {"status": "disabled"}
    assert listed["status"] == "disabled" and "not trusted" in listed["error"]
    assert not any(u.get("status") in ("starting", "connected") for u in _before_trust(client))
    assert mcp_tools(fake_model.chat_bodies()[0]) == []


def _before_trust(client: WaveClient) -> list[dict[str, Any]]:
    out = []
    for update in client.updates:
        if update.get("kind") == "workspaceTrust" and update.get("trusted"):
            break
        if update.get("kind") == "mcpStatus":
            out.append(update)
    return out


async def test_subagents_get_the_mcp_tools_their_lists_name(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    user_servers(home, srv=stdio_server())
    write_agents(
        project,
        one=("---\nname: one\ndescription: Uses one MCP tool.\ntools: mcp__srv__echo\n---\nOne.\n"),
        whole=("---\nname: whole\ndescription: Uses the server.\ntools: mcp__srv\n---\nWhole.\n"),
        minus=(
            "---\nname: minus\ndescription: No echo.\ndisallowedTools: mcp__srv__echo, Bash\n"
            "---\nMinus.\n"
        ),
    )
    fake_model.set_script(
        {
            "routes": [
                route(
                    "delegate all",
                    reply(
                        "",
                        delegate("one", "ONE TASK"),
                        delegate("whole", "WHOLE TASK"),
                        delegate("minus", "MINUS TASK"),
                        delegate("Explore", "EXPLORE TASK"),
                    ),
                    reply("delegated"),
                ),
                route("ONE TASK", reply("", call("mcp__srv__echo", {"text": "sub"})), reply("1")),
                route("WHOLE TASK", reply("2")),
                route("MINUS TASK", reply("3")),
                route("EXPLORE TASK", reply("4")),
            ]
        }
    )
    async with server(fake_model, home) as client:
        sid = await open_session(client, project)
        await wait_status(client, "srv", "connected")
        await send(client, sid, "delegate all")
    every = set(mcp_tools(bodies_for(fake_model, "delegate all")[0]))
    one = bodies_for(fake_model, "ONE TASK")
    assert tool_names(one[0]) == ["mcp__srv__echo"]  # that tool and no other
    assert tool_results(one[1]) == ["echo: sub"]
    assert set(tool_names(bodies_for(fake_model, "WHOLE TASK")[0])) == every
    minus = tool_names(bodies_for(fake_model, "MINUS TASK")[0])
    assert set(mcp_tools({"tools": [{"function": {"name": n}} for n in minus]})) == every - {
        "mcp__srv__echo"
    }
    assert "Bash" not in minus and "Read" in minus
    explore = bodies_for(fake_model, "EXPLORE TASK")[0]
    assert mcp_tools(explore) == ["mcp__srv__peek"]  # the one annotated readOnlyHint
    description = next(
        t["function"]["description"]
        for t in bodies_for(fake_model, "delegate all")[0]["tools"]
        if t["function"]["name"] == "Agent"
    )
    assert "- one: Uses one MCP tool. (Tools: mcp__srv__echo)" in description


async def test_a_subagent_waits_for_the_server_its_tools_name_in_their_spelling(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # "my.srv" is spelled my_srv in tool names (Claude Code's rule): a subagent listing
    # mcp__my_srv__echo waits for that server before its first round, and gets the tool.
    user_servers(home, **{"my.srv": stdio_server("--start-delay", "1")})
    write_agents(
        project,
        dotted="---\nname: dotted\ndescription: Echoes.\ntools: mcp__my_srv__echo\n---\nEcho.\n",
    )
    fake_model.set_script(
        {
            "routes": [
                route("go", reply("", delegate("dotted", "DOT TASK")), reply("done")),
                route("DOT TASK", reply("echoed")),
            ]
        }
    )
    async with server(fake_model, home) as client:
        sid = await open_session(client, project)
        await send(client, sid, "go")  # at once: the server is still starting
    assert tool_names(bodies_for(fake_model, "DOT TASK")[0]) == ["mcp__my_srv__echo"]


async def test_a_subagents_own_server_runs_for_it_alone(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    definition = json.dumps(stdio_server())
    write_agents(
        project,
        owner=(
            "---\nname: owner\ndescription: Has its own server.\ntools: mcp__mine__pid\n"
            f"mcpServers:\n  - mine: {definition}\n---\nOwner.\n"
        ),
    )
    user_servers(home, srv=stdio_server())  # a session server beside the subagent's own
    # A project agent's inline server asks first, like .mcp.json's: enabled for all here.
    settings = json.loads((home / ".wave" / "settings.json").read_text())
    settings["mcp"] = {"enableProjectServers": True}
    (home / ".wave" / "settings.json").write_text(json.dumps(settings))
    fake_model.set_script(
        {
            "routes": [
                route("run owner", reply("", delegate("owner", "OWNER TASK")), reply("ok")),
                route("OWNER TASK", reply("", call("mcp__mine__pid")), reply("pid said")),
            ]
        }
    )
    async with server(fake_model, home) as client:
        sid = await open_session(client, project)
        await send(client, sid, "run owner")
        main = bodies_for(fake_model, "run owner")
        owner = bodies_for(fake_model, "OWNER TASK")
        pid = int(tool_results(owner[1])[0])
        gone = await asyncio.to_thread(wait_gone, pid)
        agent_updates = [u for u in client.updates_for(sid, "mcpStatus") if u["name"] == "mine"]
    assert tool_names(owner[0]) == ["mcp__mine__pid"]
    assert "mcp__mine__pid" not in tool_names(main[0])  # not the session's
    assert gone, "the subagent's server outlived the subagent"
    assert {u["scope"] for u in agent_updates} == {"agent"}
    assert [u["status"] for u in agent_updates][:2] == ["starting", "connected"]


async def test_a_crash_mid_call_is_a_tool_error_and_the_next_call_starts_it_again(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    user_servers(home, srv=stdio_server())
    fake_model.set_script(
        {
            "routes": [
                route(
                    "crash it",
                    reply("", call("mcp__srv__pid")),
                    reply("", call("mcp__srv__crash")),
                    reply("", call("mcp__srv__pid")),
                    reply("survived"),
                )
            ]
        }
    )
    async with server(fake_model, home) as client:
        sid = await open_session(client, project)
        await wait_status(client, "srv", "connected")
        result = await send(client, sid, "crash it")
        failed = [u for u in client.updates_for(sid, "mcpStatus") if u["status"] == "failed"]
    assert result["status"] == "completed" and result["text"] == "survived"
    bodies = fake_model.chat_bodies()
    first_pid = int(tool_results(bodies[1])[-1])
    crash = tool_results(bodies[2])[-1]
    second_pid = int(tool_results(bodies[3])[-1])
    assert "stopped during the call" in crash and "crashing now" in crash
    assert second_pid != first_pid and not alive(first_pid)
    assert failed and "starts again at its next use" in failed[0]["error"]


async def test_a_call_that_gets_no_answer_times_out_as_a_tool_error(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    user_servers(home, srv=stdio_server())
    fake_model.set_script(
        {
            "routes": [
                route(
                    "hang",
                    reply("", call("mcp__srv__slow", {"seconds": 60})),
                    reply("", call("mcp__srv__echo", {"text": "still here"})),
                    reply("fine"),
                )
            ]
        }
    )
    async with server(fake_model, home, MCP_TOOL_TIMEOUT="1000") as client:
        sid = await open_session(client, project)
        await wait_status(client, "srv", "connected")
        result = await send(client, sid, "hang")
    assert result["text"] == "fine"
    bodies = fake_model.chat_bodies()
    assert "gave no answer within 1 s" in tool_results(bodies[1])[-1]
    assert tool_results(bodies[2])[-1] == "echo: still here"


async def test_closing_the_last_session_of_a_folder_stops_its_server(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    user_servers(home, srv=stdio_server())
    fake_model.set_script({"routes": [route("pid", reply("", call("mcp__srv__pid")), reply("ok"))]})
    async with server(fake_model, home) as client:
        first = await open_session(client, project)
        second = await open_session(client, project)
        await wait_status(client, "srv", "connected")
        await send(client, first, "pid")
        pid = int(tool_results(fake_model.chat_bodies()[1])[-1])
        await client.request("wave/session/close", {"sessionId": first})
        shared = alive(pid)  # the other session still uses it
        await client.request("wave/session/close", {"sessionId": second})
        gone = await asyncio.to_thread(wait_gone, pid)
        listed = await servers(client, project)
    assert shared and gone
    assert listed["srv"]["status"] == "stopped"


async def test_a_streamable_http_server_with_variables_in_its_url(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(
        {
            "routes": [
                route("web", reply("", call("mcp__web__echo", {"text": "over http"})), reply("ok"))
            ]
        }
    )
    with http_server() as url:
        port = url.split(":")[2].split("/")[0]
        user_servers(
            home,
            web={"type": "http", "url": "http://127.0.0.1:${TEST_MCP_PORT}/mcp"},
            broken={"type": "http", "url": "${NO_SUCH_VARIABLE}/mcp"},
        )
        async with server(fake_model, home, TEST_MCP_PORT=port) as client:
            sid = await open_session(client, project)
            await wait_status(client, "web", "connected")
            await send(client, sid, "web")
            listed = await servers(client, project)
    assert listed["web"]["transport"] == "http" and listed["web"]["status"] == "connected"
    assert listed["web"]["command"].startswith("http http://127.0.0.1:")  # where it connects
    assert listed["broken"]["status"] == "failed"
    assert "NO_SUCH_VARIABLE" in listed["broken"]["error"]
    assert tool_results(fake_model.chat_bodies()[1]) == ["echo: over http"]


async def test_an_sse_server(fake_model: FakeModelServer, home: Path, project: Path) -> None:
    fake_model.set_script(
        {"routes": [route("sse", reply("", call("mcp__old__echo", {"text": "sse"})), reply("ok"))]}
    )
    with http_server(transport="sse") as url:
        user_servers(home, old={"type": "sse", "url": url})
        async with server(fake_model, home) as client:
            sid = await open_session(client, project)
            connected = await wait_status(client, "old", "connected")
            await send(client, sid, "sse")
    assert connected["transport"] == "sse"
    assert tool_results(fake_model.chat_bodies()[1]) == ["echo: sse"]


async def test_a_server_that_cannot_start_is_reported_and_the_session_goes_on(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    user_servers(home, missing={"command": "no-such-mcp-server-here"})
    fake_model.set_script({"routes": [route("hello", reply("hi"))]})
    async with server(fake_model, home) as client:
        sid = await open_session(client, project)
        failed = await wait_status(client, "missing", "failed")
        result = await send(client, sid, "hello")
    assert result["text"] == "hi"
    assert "no-such-mcp-server-here" in failed["error"]
    (body,) = fake_model.chat_bodies()
    assert any("MCP server missing failed to start" in m["content"] for m in body["messages"])


async def test_mcp_tools_ask_in_default_mode_unless_read_only_and_allow_for_session_is_per_tool(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    user_servers(home, srv=stdio_server())
    fake_model.set_script(
        {
            "routes": [
                route(
                    "ask me",
                    reply("", call("mcp__srv__peek")),
                    reply("", call("mcp__srv__echo", {"text": "a"})),
                    reply("", call("mcp__srv__echo", {"text": "b"})),
                    reply("", call("mcp__srv__pid")),
                    reply("asked"),
                )
            ]
        }
    )
    async with server(fake_model, home, permission=True) as client:
        client.permission_answer = lambda request: (
            {"allowed": True, "remember": "session"}
            if request["toolName"] == "mcp__srv__echo"
            else {"allowed": False}
        )
        sid = await open_session(client, project, mode="default")
        await wait_status(client, "srv", "connected")
        await send(client, sid, "ask me")
        asked = [request["toolName"] for request in client.permission_requests]
    bodies = fake_model.chat_bodies()
    assert tool_results(bodies[1])[-1] == "peeked"  # readOnlyHint: never asked
    assert tool_results(bodies[2])[-1] == "echo: a"
    assert tool_results(bodies[3])[-1] == "echo: b"  # allowed for this session: not asked
    assert "denied" in tool_results(bodies[4])[-1].lower()  # another tool asks on its own
    assert asked == ["mcp__srv__echo", "mcp__srv__pid"]
