"""MCP servers over ACP: the ones the client gives, the approval question, the notices.

- ``session/new`` and ``session/load`` carry ``mcpServers`` (stdio ``{name, command, args,
  env: [{name, value}]}``, http/sse ``{type, name, url, headers: [{name, value}]}``): they
  become servers of scope ``acp`` of that session alone (``given_servers``), started with
  it and stopped when it ends (the runtime's ``McpHandle``).
- A project server (``.mcp.json``) waiting for approval is asked about at the session's
  first prompt, after the trust question, with ``session/request_permission`` on a tool call
  "Start MCP server <name>?": ``allow_always`` "Start it" / ``reject_always`` "Don't start
  it", kept as ``wave/mcp/approve`` keeps it (``~/.wave/mcp-approvals.json``). Asked once
  per folder and server per connection; a cancelled question keeps nothing.
- Status changes (``mcpStatus`` over LSP): a server that failed is said once, as message
  text, at the start of the session's next prompt (``McpNotices``); ``starting`` and
  ``connected`` are not said (the model is told by the runtime). A client that opts in
  (``initialize``'s ``clientCapabilities._meta: {"wave": {"mcpStatus": true}}``) also gets
  each change as the extension notification ``_wave/mcp/status`` ``{sessionId, name, scope,
  transport, status, tools, error?}`` (the ``wave/mcp/list`` item).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from wave_ls.acp import question
from wave_ls.acp.outbox import Outbox
from wave_ls.acp.tool_calls import fenced

if TYPE_CHECKING:
    from acp.schema import (
        AcpMcpServer,
        ClientCapabilities,
        HttpMcpServer,
        McpServerStdio,
        SseMcpServer,
    )

    from wave_ls.mcp.config import ServerSpec
    from wave_ls.mcp.manager import Server

log = logging.getLogger(__name__)
# ``mcpServers`` of ``session/new``, ``/load`` and ``/resume``, as the SDK gives them.
GivenServers = Sequence["HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio"]


MCP_STATUS = "wave/mcp/status"  # ``_wave/mcp/status`` on the wire (the SDK adds the ``_``)


def wants_mcp_status(client_capabilities: ClientCapabilities | None) -> bool:
    """Whether ``initialize``'s client capabilities ask for ``_wave/mcp/status``."""
    meta = getattr(client_capabilities, "field_meta", None)
    wave = meta.get("wave") if isinstance(meta, dict) else None
    return isinstance(wave, dict) and wave.get("mcpStatus") is True


def given_servers(servers: GivenServers | None) -> list[ServerSpec]:
    """The client's ``mcpServers`` as specs of scope ``acp`` (a name given twice: the last
    definition)."""
    if not servers:
        return []
    from wave_ls.mcp.config import from_acp

    by_name: dict[str, ServerSpec] = {}
    for spec in from_acp(list(servers)):
        if spec.name in by_name:
            log.warning("MCP server %r given twice; the last definition is used", spec.name)
        by_name.pop(spec.name, None)
        by_name[spec.name] = spec
    return list(by_name.values())


# Names, paths and commands come from a repository's .mcp.json and errors from a server's
# stderr: shown as code, never as Markdown of their own (a newline or a fence cannot break
# out of it).
_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")


def one_line(text: str, limit: int = 120) -> str:
    flat = " ".join(_CONTROL.sub(" ", text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def code_span(text: str, limit: int = 120) -> str:
    """``text`` on one line as a Markdown code span, whatever backticks it holds."""
    flat = one_line(text, limit)
    ticks = "`" * (max((len(run) for run in re.findall(r"`+", flat)), default=0) + 1)
    pad = " " if flat.startswith("`") or flat.endswith("`") else ""
    return f"{ticks}{pad}{flat}{pad}{ticks}"


def failed_text(row: dict[str, object]) -> str:
    error = str(row.get("error") or "no reason given").strip()
    return f"_MCP server {code_span(str(row.get('name')), 60)} failed:_\n{fenced(error)}\n\n"


class McpNotices:
    """What each session says about its MCP servers at its next prompt: the servers that
    failed since (once per server and error; one that recovered is not said)."""

    def __init__(self) -> None:
        self._pending: dict[str, dict[str, str]] = {}  # session id -> server name -> text
        self._said: dict[str, set[tuple[str, str]]] = {}  # (server, error) already said

    def heard(self, session_id: str, row: dict[str, object]) -> None:
        name = str(row.get("name"))
        pending = self._pending.setdefault(session_id, {})
        if row.get("status") != "failed":
            pending.pop(name, None)
            return
        key = (name, str(row.get("error") or ""))
        said = self._said.setdefault(session_id, set())
        if key not in said:
            said.add(key)
            pending[name] = failed_text(row)

    def take(self, session_id: str) -> str:
        return "".join(self._pending.pop(session_id, {}).values())


def question_text(server: Server, folder: Path) -> str:
    spec = server.spec
    source = spec.source
    where = source.name if source is not None and source.parent == folder else str(source)
    return "\n".join(
        [
            f"The project's {code_span(where)} defines the MCP server {code_span(spec.name, 60)}:",
            "",
            fenced(spec.describe()),
            "",
            "Starting it runs that as you (outside the command sandbox); its tools join the "
            "session once it is connected. The answer is kept for this folder and this "
            "definition (a changed definition asks again).",
        ]
    )


class ApprovalAsker:
    """Asks one ACP client whether to start a project's MCP server, as a tool call."""

    def __init__(self, request: question.Request, outbox: Outbox) -> None:
        self.request = request  # the connection's request_permission
        self.outbox = outbox

    async def ask(self, session_id: str, server: Server, folder: Path) -> bool | None:
        """True (start it), False (don't), None (cancelled or the client failed)."""
        return await question.ask(
            self.request,
            self.outbox,
            session_id,
            question.Question(
                topic="mcp-approval",
                title=f"Start MCP server {one_line(server.spec.name, 60)}?",
                text=question_text(server, folder),
                choices=("Start it", "Don't start it"),
                results=("Approved", "Not started"),
                raw_input={
                    "server": server.spec.name,
                    "transport": server.spec.transport,
                    "source": str(server.spec.source),
                },
                output_key="approved",
            ),
        )
