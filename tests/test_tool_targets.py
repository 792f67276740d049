"""One descriptor per tool (issue 29 point 3): each tool declares its kind and key argument
beside its effect, every tool-block update carries the target computed from them (over LSP
``target`` and ``toolKind``), and ACP and a delegation's activity line read that target.
A real ``wave-ls`` over LSP, the offline model and a real MCP server."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.fake_model import FakeModelServer, call, reply, route
from tests.support.lsp import capabilities, server_env, wave_client
from tests.support.mcp_helpers import stdio_server, user_servers, wait_status
from tests.test_lsp_delegation import delegate
from wave_ls.acp.tool_calls import present
from wave_ls.agents.toolset import ALL_TOOL_NAMES
from wave_ls.runtime.core import Tool, ToolBlockUpdated
from wave_ls.runtime.tools import GrepTool
from wave_ls.runtime.tools.descriptor import KINDS, describe
from wave_ls.session import session_tools
from wave_ls.subagents.activity import ActivityTracker
from wave_ls.subagents.agent_tool import AgentTool

CWD = Path("/w")


def registered() -> list[type[Tool]]:
    """The classes of a session's tools."""
    return [*(type(tool) for tool in session_tools()), AgentTool]


def test_every_registered_tool_declares_its_kind_and_key_argument() -> None:
    for tool in registered():
        assert "kind" in vars(tool) and "key_argument" in vars(tool), tool
        described = describe(tool)
        assert described.kind in KINDS
        if described.key_argument is not None:  # an argument the tool takes
            assert described.key_argument in tool.parameters["properties"]


def test_the_agents_list_of_tool_names_is_the_registered_tools() -> None:
    assert sorted(ALL_TOOL_NAMES) == sorted(describe(tool).name for tool in registered())


def test_a_target_is_the_key_argument_on_one_line_whatever_its_place() -> None:
    grep = describe(GrepTool)
    assert grep.target('{"path": "src", "pattern": "def  answer\\n"}') == "def answer"
    assert grep.target({"path": "src"}) == "" and grep.target("not json") == ""
    assert len(grep.target({"pattern": "x" * 500})) == 200


def test_acp_titles_and_kinds_come_from_the_block_or_the_descriptor() -> None:
    live = present(
        "mcp__docs__search", {"limit": "5", "q": "hooks"}, CWD, {}, False, ("read", "hooks")
    )
    assert (live.kind, live.title) == ("read", "docs: search hooks")
    # A call without a live block (replayed, asked about): its tool's descriptor.
    replayed = present("TaskOutput", {"block": False, "task_id": "bash-1"}, CWD)
    assert (replayed.kind, replayed.title) == ("other", "TaskOutput bash-1")
    lsp = present("LSP", {"operation": "hover", "filePath": "src/app.py"}, CWD)
    assert (lsp.kind, lsp.title) == ("search", "LSP src/app.py")


def test_a_delegations_activity_line_reads_the_blocks_target() -> None:
    tracker = ActivityTracker()
    block = ToolBlockUpdated("c1", "LSP", '{"operation": "hover"}', "pending", target="a.py")
    assert tracker.observe(block)
    assert tracker.short_result().startswith("LSP a.py · ")


def blocks(updates: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [u for u in updates if u.get("kind") == "toolBlock" and u.get("name") == name]


async def test_tool_block_updates_carry_the_target_and_kind_over_lsp(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    user_servers(home, srv=stdio_server())
    task = "Look at the answer."
    fake_model.set_script(
        {
            "routes": [
                route(
                    "show the targets",
                    reply(
                        "",
                        # ``path`` first: a renderer guessing from the arguments shows it.
                        call("Grep", {"path": "src", "pattern": "def answer"}),
                        call("TaskOutput", {"block": False, "task_id": "bash-nope"}),
                        call("mcp__srv__echo", {"text": "hi there"}),
                        call("mcp__srv__peek", {"what": "calc.py"}),
                    ),
                    reply("", delegate("Explore", task, "Look around")),
                    reply("Targets shown."),
                ),
                route(
                    task,
                    reply("", call("LSP", {"operation": "hover", "filePath": "src/app.py"})),
                    reply("It answers 41.", delay=0.2),  # after the 30/s coalescing
                ),
            ]
        }
    )
    env = server_env(home, fake_model.base_url)
    async with wave_client(env, caps=capabilities()) as client:
        result = await client.request(
            "wave/session/new", {"cwd": str(project), "permissionMode": "bypassPermissions"}
        )
        sid = result["sessionId"]
        await wait_status(client, "srv", "connected")
        answer = await client.request(
            "wave/chat/send", {"sessionId": sid, "text": "show the targets"}
        )
    assert answer["text"] == "Targets shown."
    updates = client.updates_for(sid)
    for name, target, kind in (
        ("Grep", "def answer", "search"),
        ("TaskOutput", "bash-nope", "other"),
        ("mcp__srv__echo", "hi there", "other"),  # its first required text parameter
        ("mcp__srv__peek", "calc.py", "other"),  # none required: its first text one
        ("Agent", "Look around", "think"),
    ):
        shown = blocks(updates, name)
        assert shown and all((u["target"], u["toolKind"]) == (target, kind) for u in shown), name
    # The fields the protocol had stay as they were.
    grep = blocks(updates, "Grep")[-1]
    assert grep["arguments"] == '{"path": "src", "pattern": "def answer"}'
    assert grep["status"] == "completed" and isinstance(grep["shortResult"], str)
    # The subagent's latest tool, in its block's live activity: the LSP call's file.
    activity = [u["shortResult"] for u in blocks(updates, "Agent") if u["status"] == "running"]
    assert any(line.startswith("LSP src/app.py · ") for line in activity), activity
