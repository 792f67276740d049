"""MCP servers (issue 26): wave-ls's side of one MCP tool call over stdio, and the first model
request's delay when a server takes 5 s to start.

1. In-process, against the test server of ``tests/support/mcp_server.py`` over stdio: the
   SDK's own ``ClientSession.call_tool`` round trip (the reference), the same call through
   wave-ls's tool (``McpTool.run``: connection, timeout, result text), and whole loop rounds
   whose model (in-process, answering at once) calls the tool each round. wave-ls's side is
   the loop round minus the SDK round trip: from the model's tool call to the request
   written, and from the answer read to the next model request. Interleaved batches, the
   median of the paired differences.
2. Over LSP (a real ``wave-ls``, the offline model in its own process): from
   ``wave/chat/send`` to the model's first request, with a server defined that takes 5 s to
   start and with none, interleaved; the difference is the delay (target: none).
3. Over LSP (issue 30): the main agent's request with a server of 50 tools (the test
   server's 10 and ``--many 40``) against none, in KB; and the first request of a subagent
   whose ``tools`` names no MCP tool: none of their schemas (checked), <= 7 KB.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import (
    FakeModelProcess,
    check,
    figure,
    heading,
    model_script,
    note,
    parse_options,
    run_async,
    server_env,
    wave_server,
    write_agent,
)

from wave_ls.runtime.core import (
    ModelRequest,
    ModelResponse,
    ToolCall,
    ToolContext,
    Usage,
)

SERVER = Path(__file__).resolve().parent.parent / "tests" / "support" / "mcp_server.py"
STDIO = {"command": sys.executable, "args": [str(SERVER)]}


class CallingModel:
    """A model that asks for one MCP call per round, ``rounds`` times, at once."""

    def __init__(self, rounds: int, on_round: Callable[[], None]) -> None:
        self.rounds = rounds
        self.on_round = on_round
        self.seen = 0

    async def complete(self, request: ModelRequest, on_delta: Any = None) -> ModelResponse:
        self.on_round()
        self.seen += 1
        if self.seen > self.rounds:
            return ModelResponse("done", [], Usage())
        call = ToolCall(f"call-{self.seen}", "mcp__srv__echo", json.dumps({"text": "x"}))
        return ModelResponse("", [call], Usage())


async def call_overhead(batches: int, per_batch: int) -> None:
    from mcp import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    from wave_ls.mcp.config import parse_server
    from wave_ls.mcp.manager import McpManager
    from wave_ls.runtime.loop import AgentConfig, Conversation

    heading("one MCP tool call over stdio")
    home = Path(tempfile.mkdtemp(prefix="wave-bench-mcp-"))
    manager = McpManager()
    handle = manager.open(home, home, "bench", [parse_server("srv", STDIO, "acp")])
    handle.start()
    await handle.wait_for(None)
    tool = next(t for t in handle.tools() if t.name == "mcp__srv__echo")
    context = ToolContext(cwd=home, home=home)
    parameters = StdioServerParameters(command=sys.executable, args=[str(SERVER)])
    raw_ms: list[float] = []
    tool_ms: list[float] = []
    loop_ms: list[float] = []
    async with stdio_client(parameters) as (read, write), ClientSession(read, write) as sdk:
        await sdk.initialize()
        await sdk.list_tools()
        for _ in range(3):  # warm both paths
            await sdk.call_tool("echo", {"text": "x"})
            await tool.run({"text": "x"}, context)
        for _batch in range(batches):
            started = time.perf_counter()
            for _ in range(per_batch):
                await sdk.call_tool("echo", {"text": "x"})
            raw_ms.append((time.perf_counter() - started) * 1000 / per_batch)
            started = time.perf_counter()
            for _ in range(per_batch):
                await tool.run({"text": "x"}, context)
            tool_ms.append((time.perf_counter() - started) * 1000 / per_batch)
            config = AgentConfig(
                "bench", "m", tools=handle.tools(), permission_mode="bypassPermissions"
            )
            model = CallingModel(per_batch, lambda: None)
            conversation = Conversation(config, model, context)
            started = time.perf_counter()
            await conversation.run_turn([])
            loop_ms.append((time.perf_counter() - started) * 1000 / (per_batch + 1))
    await handle.close()
    raw = statistics.median(raw_ms)
    side = statistics.median(loop - r for loop, r in zip(loop_ms, raw_ms, strict=True))
    figure(
        "wave-ls's side of one MCP tool call (loop round minus the SDK's round trip)",
        side,
        "ms",
        2.0,
        note=f"median of {batches} paired batches of {per_batch} calls",
    )
    note(f"the SDK's own call_tool round trip to the server: {raw:.2f} ms")
    note(f"through wave-ls's MCP tool (McpTool.run): {statistics.median(tool_ms):.2f} ms")
    note(
        f"a whole loop round with that call (model answers at once): "
        f"{statistics.median(loop_ms):.2f} ms"
    )


async def first_request_delay(pairs: int) -> None:
    heading("the first model request with a server that takes 5 s to start")
    script = model_script([{"match": "hello", "steps": [{"content": "hi"}]}])
    with FakeModelProcess(script) as model:
        delays: dict[bool, list[float]] = {True: [], False: []}
        for _pair in range(pairs):
            for slow in (False, True):
                home = Path(tempfile.mkdtemp(prefix="wave-bench-mcp-home-"))
                project = Path(tempfile.mkdtemp(prefix="wave-bench-mcp-project-"))
                if slow:
                    settings = {
                        "mcpServers": {
                            "slow": {**STDIO, "args": [str(SERVER), "--start-delay", "5"]}
                        }
                    }
                    (home / ".wave").mkdir()
                    (home / ".wave" / "settings.json").write_text(json.dumps(settings))
                async with wave_server(server_env(home, **model.env())) as client:
                    session = await client.request("wave/session/new", {"cwd": str(project)})
                    model.reset()
                    sent = time.time()
                    await client.request(
                        "wave/chat/send", {"sessionId": session["sessionId"], "text": "hello"}
                    )
                    first = model.records()[0]
                    delays[slow].append((first["time"] - sent) * 1000)
                    body = first["body"]
                    told = any("still starting" in str(m.get("content")) for m in body["messages"])
                    if slow and not told:
                        note("the model was not told the server is still starting")
                    await client.request("wave/session/close", {"sessionId": session["sessionId"]})
    with_server = statistics.median(delays[True])
    without = statistics.median(delays[False])
    figure(
        "first model request's delay with a server still starting (5 s)",
        max(0.0, with_server - without),
        "ms",
        50.0,
        note=f"median of {pairs} interleaved pairs",
    )
    note(
        f"wave/chat/send -> first model request: {without:.1f} ms without a server, "
        f"{with_server:.1f} ms with one starting"
    )


MANY_TOOLS = 50  # the test server's 10 and 40 lookups
LISTER_SYSTEM = "You list files for the bench."


async def fifty_tools_cost(tries: int) -> None:
    """Over LSP: the main agent's request with a server of 50 tools against none, and the
    first request of a subagent whose ``tools`` list names none of them."""
    heading(f"what {MANY_TOOLS} MCP tools cost a request")
    agent = {"subagent_type": "lister", "description": "list", "prompt": "list-task: files"}
    routes: list[dict[str, Any]] = [
        {
            "match": "delegate-now",
            "steps": [
                {"content": "", "tool_calls": [{"name": "Agent", "arguments": agent}]},
                {"content": "done"},
            ],
        },
        {"match": "list-task", "system": LISTER_SYSTEM, "steps": [{"content": "listed"}]},
        {"match": "hello", "steps": [{"content": "hi"}]},
    ]
    sizes: dict[bool, float] = {}
    with FakeModelProcess(model_script(routes)) as model:
        for many in (False, True):
            home = Path(tempfile.mkdtemp(prefix="wave-bench-mcp-home-"))
            project = Path(tempfile.mkdtemp(prefix="wave-bench-mcp-project-"))
            write_agent(
                home / ".wave" / "agents", "lister", "Lists files.", LISTER_SYSTEM, "Read, Grep"
            )
            if many:
                args = [str(SERVER), "--many", str(MANY_TOOLS - 10)]
                settings = {"mcpServers": {"many": {**STDIO, "args": args}}}
                (home / ".wave" / "settings.json").write_text(json.dumps(settings))
            async with wave_server(server_env(home, **model.env())) as client:
                session = await client.request("wave/session/new", {"cwd": str(project)})
                sid = session["sessionId"]
                body: dict[str, Any] = {}
                for _ in range(tries):  # until the server's tools are in (it starts meanwhile)
                    model.reset()
                    await client.request("wave/chat/send", {"sessionId": sid, "text": "hello"})
                    body = model.records()[0]["body"]
                    mcp = [t for t in body.get("tools", []) if _name(t).startswith("mcp__")]
                    if len(mcp) == MANY_TOOLS or not many:
                        break
                    await asyncio.sleep(0.1)
                sizes[many] = len(json.dumps(body).encode()) / 1000
                if many:
                    check(
                        f"the main agent's request holds the {MANY_TOOLS} MCP tools",
                        len(mcp) == MANY_TOOLS,
                        f"{len(mcp)} of them",
                    )
                    model.reset()
                    await client.request(
                        "wave/chat/send", {"sessionId": sid, "text": "delegate-now"}
                    )
                    subs = [
                        r["body"]
                        for r in model.records()
                        if LISTER_SYSTEM in str(r["body"]["messages"][0].get("content"))
                    ]
                    if not check("the subagent ran", bool(subs)):
                        continue  # a miss, never a crash
                    names = [_name(t) for t in subs[0].get("tools", [])]
                    check(
                        "a subagent whose tools name no MCP tool gets none of their schemas",
                        not any(name.startswith("mcp__") for name in names),
                        f"its tools: {', '.join(names)}",
                    )
                    figure(
                        "that subagent's first request",
                        len(json.dumps(subs[0]).encode()) / 1000,
                        "KB",
                        7.0,
                    )
                await client.request("wave/session/close", {"sessionId": sid})
    figure(f"the main agent's request with {MANY_TOOLS} MCP tools", sizes[True], "KB")
    note(
        f"{sizes[False]:.1f} KB without: the {MANY_TOOLS} schemas add "
        f"{sizes[True] - sizes[False]:.1f} KB (~{(sizes[True] - sizes[False]) * 250:.0f} tokens "
        "at 4 characters a token); Claude Code 2.1 sends 78.3 KB before any"
    )


def _name(tool: dict[str, Any]) -> str:
    return str(tool.get("function", {}).get("name", ""))


async def main() -> int:
    options = parse_options(__doc__)
    await call_overhead(batches=4 if options.quick else 10, per_batch=20 if options.quick else 50)
    await first_request_delay(pairs=1 if options.quick else 3)
    await fifty_tools_cost(tries=100)
    return 0


if __name__ == "__main__":
    run_async(main())
