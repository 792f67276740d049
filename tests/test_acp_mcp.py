"""MCP servers over ACP (issue 26): a real ``wave-ls acp``, the ``acp`` package's client, the
offline model and a real MCP server written with the ``mcp`` SDK (``tests/support/
mcp_server.py``). Servers given in ``session/new`` / ``session/load`` are the session's own;
a project's ``.mcp.json`` server is asked about at the first prompt."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from acp.schema import EnvVariable, HttpHeader, HttpMcpServer, McpServerStdio

from tests.support.acp_client import AcpAgent, acp_agent
from tests.support.fake_model import FakeModelServer, call, reply, route
from tests.support.lsp import server_env
from tests.support.mcp_helpers import SERVER_SCRIPT, http_server, project_servers, stdio_server
from tests.support.processes import alive
from tests.test_lsp_delegation import tool_names, tool_results
from tests.test_lsp_mcp import wait_gone

WANTS_STATUS = {"wave": {"mcpStatus": True}}  # clientCapabilities._meta: _wave/mcp/status


def given_stdio(name: str = "srv", *args: str, **env: str) -> McpServerStdio:
    return McpServerStdio(
        name=name,
        command=sys.executable,
        args=[str(SERVER_SCRIPT), *args],
        env=[EnvVariable(name=k, value=v) for k, v in env.items()],
    )


def statuses(agent: AcpAgent, session_id: str, name: str) -> list[dict[str, Any]]:
    return [
        params
        for method, params in agent.client.notifications
        if method == "wave/mcp/status"
        and params.get("sessionId") == session_id
        and params.get("name") == name
    ]


async def reached(
    agent: AcpAgent, session_id: str, name: str, status: str, timeout: float = 30
) -> dict[str, Any]:
    """The ``_wave/mcp/status`` notification saying ``name`` reached ``status``."""

    def found() -> dict[str, Any] | None:
        return next((p for p in statuses(agent, session_id, name) if p["status"] == status), None)

    result: dict[str, Any] = await agent.client.wait_for(found, timeout)
    return result


async def open_session(agent: AcpAgent, cwd: Path, servers: list[Any], mode: str = "") -> str:
    response = await agent.conn.new_session(cwd=str(cwd), mcp_servers=servers)
    if mode:
        await agent.conn.set_session_mode(session_id=response.session_id, mode_id=mode)
    return response.session_id


async def say(agent: AcpAgent, session_id: str, text: str) -> str:
    from acp.helpers import text_block

    response = await asyncio.wait_for(
        agent.conn.prompt(session_id=session_id, prompt=[text_block(text)]), 60
    )
    return response.stop_reason


def mcp_tools(body: dict[str, Any]) -> list[str]:
    return [name for name in tool_names(body) if name.startswith("mcp__")]


def approval_requests(agent: AcpAgent) -> list[dict[str, Any]]:
    return [
        r
        for r in agent.client.permission_requests
        if r["toolCall"]["toolCallId"].startswith("mcp-approval-")
    ]


def kept_approvals(home: Path) -> dict[str, Any]:
    path = home / ".wave" / "mcp-approvals.json"
    return json.loads(path.read_text())["projects"] if path.exists() else {}


async def test_servers_given_in_session_new_give_the_model_their_tools_and_stop_with_the_connection(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(
        {
            "routes": [
                route(
                    "use the server",
                    reply(
                        "",
                        call("mcp__srv__echo", {"text": "hi"}),
                        call("mcp__srv__env", {"name": "WAVE_GIVEN"}),
                        call("mcp__srv__pid"),
                    ),
                    reply("all done"),
                )
            ]
        }
    )
    async with acp_agent(server_env(home, fake_model.base_url), meta=WANTS_STATUS) as agent:
        caps = agent.init.agent_capabilities
        assert caps is not None and caps.mcp_capabilities is not None
        assert caps.mcp_capabilities.http is True and caps.mcp_capabilities.sse is True
        server = given_stdio(WAVE_GIVEN="from the client")
        sid = await open_session(agent, project, [server], mode="bypassPermissions")
        connected = await reached(agent, sid, "srv", "connected")
        assert connected["scope"] == "acp" and connected["transport"] == "stdio"
        assert "mcp__srv__echo" in connected["tools"]
        assert await say(agent, sid, "use the server") == "end_turn"
        first, second = fake_model.chat_bodies()
        pid = int(tool_results(second)[2])
        running = alive(pid)
        calls = agent.client.tool_calls(sid)
        assert agent.client.text(sid) == "all done"  # no notice about the servers
    echo = next(t for t in first["tools"] if t["function"]["name"] == "mcp__srv__echo")
    assert echo["function"]["description"] == "Echo the text back"
    assert echo["function"]["parameters"]["properties"]["text"]["type"] == "string"
    assert tool_results(second)[:2] == ["echo: hi", "from the client"]
    titles = [events[0]["title"] for events in calls.values()]
    assert "srv: echo hi" in titles
    assert all(events[-1]["status"] == "completed" for events in calls.values())
    # The connection ended: the session closed, and the server's process with it.
    assert running and await asyncio.to_thread(wait_gone, pid)


async def test_a_streamable_http_server_given_with_headers(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(
        {
            "routes": [
                route("over http", reply("", call("mcp__web__echo", {"text": "x"})), reply("ok"))
            ]
        }
    )
    with http_server() as url:
        async with acp_agent(server_env(home, fake_model.base_url), meta=WANTS_STATUS) as agent:
            server = HttpMcpServer(
                type="http",
                name="web",
                url=url,
                headers=[HttpHeader(name="X-Wave-Test", value="1")],
            )
            sid = await open_session(agent, project, [server], mode="bypassPermissions")
            connected = await reached(agent, sid, "web", "connected")
            assert await say(agent, sid, "over http") == "end_turn"
    assert connected["transport"] == "http" and connected["scope"] == "acp"
    first, second = fake_model.chat_bodies()
    assert "mcp__web__echo" in mcp_tools(first)
    assert tool_results(second) == ["echo: x"]


async def test_servers_given_in_session_load_belong_to_the_loaded_session(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(
        {
            "routes": [
                route("hello", reply("hi")),
                route("again", reply("", call("mcp__later__echo", {"text": "back"})), reply("ok")),
            ]
        }
    )
    env = server_env(home, fake_model.base_url)
    async with acp_agent(env) as agent:
        sid = await open_session(agent, project, [])
        assert await say(agent, sid, "hello") == "end_turn"
    assert mcp_tools(fake_model.chat_bodies()[0]) == []
    async with acp_agent(env, meta=WANTS_STATUS) as agent:
        await agent.conn.load_session(
            cwd=str(project), session_id=sid, mcp_servers=[given_stdio("later")]
        )
        await agent.conn.set_session_mode(session_id=sid, mode_id="bypassPermissions")
        await reached(agent, sid, "later", "connected")
        assert await say(agent, sid, "again") == "end_turn"
    _, first, second = fake_model.chat_bodies()
    assert "mcp__later__echo" in mcp_tools(first)
    assert tool_results(second)[-1] == "echo: back"


async def test_a_given_server_that_cannot_start_is_said_once_and_the_session_goes_on(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script({"routes": [route("one", reply("first")), route("two", reply("second"))]})
    broken = McpServerStdio(name="broken", command=str(project / "no-such-server"), args=[], env=[])
    async with acp_agent(server_env(home, fake_model.base_url), meta=WANTS_STATUS) as agent:
        sid = await open_session(agent, project, [broken, given_stdio("fine")])
        failed = await reached(agent, sid, "broken", "failed")
        await reached(agent, sid, "fine", "connected")
        assert await say(agent, sid, "one") == "end_turn"
        first_text = agent.client.text(sid)
        assert await say(agent, sid, "two") == "end_turn"
        all_text = agent.client.text(sid)
    assert failed["error"]
    assert first_text.startswith("_MCP server `broken` failed:_\n```\nthe server exited")
    assert first_text.endswith("first") and "fine" not in first_text
    assert all_text == first_text + "second"  # said once
    bodies = fake_model.chat_bodies()
    assert "mcp__fine__echo" in mcp_tools(bodies[0])
    assert not any(name.startswith("mcp__broken") for name in mcp_tools(bodies[0]))


def answering(approval: str | None, trust: str | None = None) -> Any:
    """Answer the MCP approval question with ``approval`` (None: cancelled), the trust
    question with ``trust``, anything else with ``allow_once``."""

    def answer(request: dict[str, Any]) -> str | None:
        call_id = request["toolCall"]["toolCallId"]
        if call_id.startswith("mcp-approval-"):
            return approval
        if call_id.startswith("trust-"):
            return trust
        return "allow_once"

    return answer


async def test_a_project_server_is_asked_about_at_the_first_prompt_and_the_answer_is_kept(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    project_servers(project, proj=stdio_server())  # untracked: approval only, no trust
    fake_model.set_script(
        {
            "routes": [
                route("first", reply("one")),
                route("second", reply("", call("mcp__proj__peek", {"what": "x"})), reply("two")),
            ]
        }
    )
    env = server_env(home, fake_model.base_url)
    async with acp_agent(env, meta=WANTS_STATUS) as agent:
        agent.client.permission_answer = answering(None)  # cancelled: nothing kept
        sid = await open_session(agent, project, [])
        assert await say(agent, sid, "first") == "end_turn"
        cancelled = approval_requests(agent)
        assert await say(agent, sid, "first") == "end_turn"
        asked_again_in_session = len(approval_requests(agent)) > 1
    assert kept_approvals(home) == {}
    assert len(cancelled) == 1 and not asked_again_in_session
    (request,) = cancelled
    assert request["toolCall"]["title"] == "Start MCP server proj?"
    assert [o["optionId"] for o in request["options"]] == ["allow_always", "reject_always"]
    assert mcp_tools(fake_model.chat_bodies()[0]) == []

    async with acp_agent(env, meta=WANTS_STATUS) as agent:
        agent.client.permission_answer = answering("allow_always")
        sid = await open_session(agent, project, [])
        assert await say(agent, sid, "first") == "end_turn"
        await reached(agent, sid, "proj", "connected")
        assert await say(agent, sid, "second") == "end_turn"
        asked = approval_requests(agent)
        shown = agent.client.tool_calls(sid)
    assert len(asked) == 1
    question = next(events for events in shown.values() if events[0]["title"].startswith("Start"))
    body = question[0]["content"][0]["content"]["text"]
    assert "`.mcp.json`" in body and str(SERVER_SCRIPT) in body
    assert question[-1]["status"] == "completed"
    assert question[-1]["rawOutput"] == {"approved": True}
    (kept,) = kept_approvals(home).values()
    assert kept["proj"]["approved"] is True
    *_, with_tools, result = fake_model.chat_bodies()
    assert "mcp__proj__peek" in mcp_tools(with_tools)  # read-only: runs in default mode
    assert tool_results(result) == ["peeked x"]

    async with acp_agent(env) as agent:  # kept: a new connection does not ask
        agent.client.permission_answer = answering(None)
        sid = await open_session(agent, project, [])
        assert await say(agent, sid, "first") == "end_turn"
        assert approval_requests(agent) == []


async def test_a_committed_mcp_json_asks_for_trust_then_for_the_server(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    project_servers(project, proj=stdio_server())
    subprocess.run(["git", "add", ".mcp.json"], cwd=project, check=True)
    subprocess.run(["git", "commit", "-qm", "mcp"], cwd=project, check=True)
    fake_model.set_script({"routes": [route("first", reply("one"))]})
    async with acp_agent(server_env(home, fake_model.base_url), meta=WANTS_STATUS) as agent:
        agent.client.permission_answer = answering("reject_always", trust="allow_always")
        sid = await open_session(agent, project, [])
        assert await say(agent, sid, "first") == "end_turn"
        order = [
            r["toolCall"]["toolCallId"].split("-")[0] for r in agent.client.permission_requests
        ]
        disabled = await reached(agent, sid, "proj", "disabled")
    assert order == ["trust", "mcp"]  # trusting lets the server be asked about
    assert "turned off by the user" in disabled["error"]
    (kept,) = kept_approvals(home).values()
    assert kept["proj"]["approved"] is False
