"""A real MCP server for the tests, written with the ``mcp`` SDK (``MCPServer``, FastMCP's
name in mcp 2): ``python tests/support/mcp_server.py [--http PORT | --sse PORT] [--start-delay S]
[--many N]``.

Tools: ``echo`` (text back), ``peek`` (annotated ``readOnlyHint: true``), ``slow``
(sleeps), ``fail`` (an ``isError`` result), ``crash`` (the process exits mid-call),
``pid`` (its process id), ``garbage`` (writes a line that is no MCP message, then answers),
``env`` (an environment variable's value), ``grow`` (adds a tool and says the list
changed), ``picture`` (an image and text). One resource: ``note://hello``. ``--many N`` adds
N more tools (``lookup_1`` ...: a path and a limit, as a typical server's), for benchmarks.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import sys
import time
from collections.abc import Callable

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ImageContent, TextContent, ToolAnnotations

server = MCPServer("wave-test")


@server.tool(description="Echo the text back")
def echo(text: str) -> str:
    return f"echo: {text}"


@server.tool(
    description="Look without changing anything", annotations=ToolAnnotations(read_only_hint=True)
)
def peek(what: str = "") -> str:
    return f"peeked {what}".strip()


@server.tool(description="Sleep, then answer")
async def slow(seconds: float) -> str:
    await asyncio.sleep(seconds)  # the behaviour this tool offers: a slow call
    return "slept"


@server.tool(description="Always fails")
def fail() -> str:
    raise ToolError("it failed on purpose")


@server.tool(description="The server process exits during the call")
def crash() -> str:
    sys.stderr.write("crashing now\n")
    sys.stderr.flush()
    os._exit(3)


@server.tool(description="The server's process id")
def pid() -> str:
    return str(os.getpid())


@server.tool(description="Writes a line that is not an MCP message, then answers")
def garbage() -> str:
    os.write(1, b"this is not json\n")
    return "answered after garbage"


@server.tool(description="An environment variable of the server")
def env(name: str) -> str:
    return os.environ.get(name, "<unset>")


@server.tool(description="Adds the tool 'grown' and tells the client the list changed")
async def grow(ctx: Context) -> str:
    def grown() -> str:
        return "I am new"

    server.add_tool(grown, name="grown", description="A tool added at run time")
    await ctx.session.send_tool_list_changed()
    return "grew"


@server.tool(description="A picture and a caption")
def picture() -> list[TextContent | ImageContent]:
    data = base64.b64encode(b"\x89PNG fake").decode()
    return [TextContent(text="a caption"), ImageContent(data=data, mime_type="image/png")]


@server.resource("note://hello", name="hello", description="A greeting", mime_type="text/plain")
def hello() -> str:
    return "hello from a resource"


def add_lookups(count: int) -> None:
    """``lookup_1`` ... ``lookup_<count>``: tools shaped like a typical server's."""
    for number in range(1, count + 1):
        description = (
            f"Look up entries of kind {number} under a path in the project's catalogue and "
            "return up to `limit` of them, newest first."
        )
        server.tool(name=f"lookup_{number}", description=description)(_lookup(number))


def _lookup(number: int) -> Callable[[str, int], str]:
    def lookup(path: str, limit: int = 20) -> str:
        return f"lookup {number}: {path} (up to {limit})"

    return lookup


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", type=int, default=None)
    parser.add_argument("--sse", type=int, default=None)
    parser.add_argument("--start-delay", type=float, default=0.0)
    parser.add_argument("--many", type=int, default=0)
    options = parser.parse_args()
    add_lookups(options.many)
    time.sleep(options.start_delay)  # the behaviour asked for: a server slow to start
    if options.http is not None:
        server.run("streamable-http", host="127.0.0.1", port=options.http)
    elif options.sse is not None:
        server.run("sse", host="127.0.0.1", port=options.sse)
    else:
        server.run()


if __name__ == "__main__":
    main()
