"""How a tool call looks in an ACP client: its title, kind, locations and content.

Pure functions of the tool's name, its arguments and the working directory; the live
mapping (``updates.py``), the history replay (``history.py``) and the permission prompt
(``permissions.py``) all present a call through ``present``. A call's kind and target come
from its tool's descriptor (``runtime/tools/descriptor.py``): the live block carries them,
and a call without a block (replayed, asked about) looks its tool up by name.
"""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acp.helpers import text_block, tool_content, tool_diff_content
from acp.schema import (
    ContentToolCallContent,
    FileEditToolCallContent,
    TerminalToolCallContent,
    ToolCallLocation,
    ToolKind,
)

from wave_ls.agents.toolset import MCP_PREFIX
from wave_ls.mcp.tools import ListResourcesTool, ReadResourceTool
from wave_ls.runtime.core import expanded
from wave_ls.runtime.permissions import permission_summary
from wave_ls.runtime.regular_files import read_regular
from wave_ls.runtime.tool_names import WaveTool
from wave_ls.runtime.tools.descriptor import ToolDescriptor, describe, one_line
from wave_ls.session import session_tools
from wave_ls.subagents.agent_tool import AGENT_TOOL, AgentTool
from wave_ls.subagents.record import DelegationRecord, delegation_title

Content = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent

FILE_KINDS = frozenset({"read", "edit"})  # a ``file_path`` of theirs is a location
TITLE_LIMIT = 120
RESULT_LIMIT = 20_000  # characters of a tool's result shown in the client
OLD_TEXT_LIMIT = 1_000_000  # bytes of a file read to show what a Write replaces
PLAN_TOOL = WaveTool.EXIT_PLAN_MODE.value
FENCED = frozenset({"read", "execute", "search"})  # results shown as preformatted text


@functools.cache
def _registered() -> dict[str, ToolDescriptor]:
    """The descriptors of every tool a session registers, by name."""
    tools = [*session_tools(), AgentTool, ListResourcesTool, ReadResourceTool]
    return {described.name: described for described in map(describe, tools)}


def descriptor_of(name: str, details: dict[str, Any] | None = None) -> ToolDescriptor:
    """The descriptor of the tool ``name`` for a call that has no live block: a registered
    tool's own, an MCP tool's from its block's ``details.mcp`` (its key argument), else
    kind ``other`` with no key argument."""
    known = _registered().get(name)
    if known is not None:
        return known
    found = (details or {}).get("mcp")
    key = found.get("keyArgument") if isinstance(found, dict) else None
    return ToolDescriptor(name, "other", key if isinstance(key, str) and key else None)


@dataclass
class Presentation:
    """A tool call as the client shows it before it has a result."""

    title: str
    kind: ToolKind
    locations: list[ToolCallLocation] = field(default_factory=list)
    content: list[Content] = field(default_factory=list)


def present(
    name: str,
    args: dict[str, Any],
    cwd: Path,
    details: dict[str, Any] | None = None,
    read_old: bool = False,
    shown_as: tuple[ToolKind, str] | None = None,
) -> Presentation:
    """The title, kind, file locations and first content of a call of ``name``.

    ``shown_as``: the kind and target its live block carries (None: from ``descriptor_of``).
    ``read_old``: the call has not run yet, so a Write's diff shows the file as it is now
    (``""`` for a new file) and clients can show what it replaces.
    """
    if shown_as is None:
        described = descriptor_of(name, details)
        shown_as = (described.kind, described.target(args))
    kind, target = shown_as
    path = _file_path(args, cwd) if kind in FILE_KINDS else None
    locations = [ToolCallLocation(path=path, line=_first_line(args))] if path else []
    old = _old_text(path) if read_old and name == WaveTool.WRITE else None
    content = _diff(name, args, path, old)
    if name == PLAN_TOOL and isinstance(args.get("plan"), str) and args["plan"].strip():
        content = [tool_content(text_block(args["plan"]))]  # the plan the user approves
    return Presentation(title(name, args, details or {}, target), kind, locations, content)


def title(name: str, args: dict[str, Any], details: dict[str, Any], target: str = "") -> str:
    """``Explore: Find the tests``, ``Read src/app.py``, ``Bash: pytest -q``, ..."""
    if name == AGENT_TOOL:
        record = DelegationRecord.from_json(details)
        text = delegation_title(args, record)
        return f"{text} (background)" if record.background else text
    if name == WaveTool.TASK_CREATE and isinstance(args.get("subject"), str):
        return f"Create task: {args['subject']}"
    if name == PLAN_TOOL:
        return "Exit plan mode: the plan is ready"
    if name == WaveTool.BASH:
        return permission_summary(name, args)  # the whole command (up to 200 characters)
    if name.startswith(MCP_PREFIX):
        return mcp_title(name, args, details, target)
    argument = one_line(target, TITLE_LIMIT)
    return f"{name} {argument}" if argument else name


def mcp_title(name: str, args: dict[str, Any], details: dict[str, Any], target: str = "") -> str:
    """``<server>: <tool> <argument>`` for ``mcp__<server>__<tool>``: the server's own names
    when the call's ``details.mcp`` has them, and its target (the value of its key
    argument; else the first text argument)."""
    found = details.get("mcp")
    info: dict[str, Any] = found if isinstance(found, dict) else {}
    server, _, tool = name.removeprefix(MCP_PREFIX).partition("__")
    server = str(info.get("server") or server)
    tool = str(info.get("title") or info.get("tool") or tool or name)
    value = target or next((v for v in args.values() if isinstance(v, str) and v.strip()), "")
    text = " ".join(f"{server}: {tool} {value}".split())
    return text if len(text) <= TITLE_LIMIT else text[: TITLE_LIMIT - 1] + "…"


def final_content(
    name: str,
    args: dict[str, Any],
    cwd: Path,
    result: str,
    failed: bool,
    details: dict[str, Any] | None = None,
    presented: Presentation | None = None,
) -> list[Content]:
    """What the client shows once the call has ended.

    An ``Agent`` delegation ends with its summary (tool calls, tokens, time) and the
    subagent's answer; a Write or Edit keeps its diff (``presented``'s, read before the call
    ran); other tools show their result.
    """
    if name == AGENT_TOOL:
        summary = DelegationRecord.from_json(details).summary
        blocks = [summary] if isinstance(summary, str) and summary else []
        return [tool_content(text_block(text)) for text in [*blocks, _cut(result)] if text]
    if name in (WaveTool.WRITE, WaveTool.EDIT) and not failed:
        if presented is not None and presented.content:
            return presented.content
        return _diff(name, args, _file_path(args, cwd))
    if not result:
        return []
    shown = _cut(result)
    kind = presented.kind if presented is not None else descriptor_of(name, details).kind
    if kind in FENCED and not failed:
        shown = fenced(shown)
    return [tool_content(text_block(shown))]


def live_content(text: str) -> list[Content]:
    """A running call's progress line (an ``Agent`` block: latest tool and tokens)."""
    return [tool_content(text_block(text))] if text else []


def _file_path(args: dict[str, Any], cwd: Path) -> str | None:
    raw = args.get("file_path")
    if not isinstance(raw, str) or not raw:
        return None
    return os.path.normpath(cwd / expanded(raw))


def _first_line(args: dict[str, Any]) -> int | None:
    """The 0-based line a Read starts at (its ``offset`` is 1-based)."""
    offset = args.get("offset")
    if isinstance(offset, int) and not isinstance(offset, bool) and offset > 0:
        return offset - 1
    return None


def _old_text(path: str | None) -> str | None:
    """A file's text before a Write: ``""`` when there is no file, None when it cannot be
    shown (not a regular file, unreadable, too large, not UTF-8)."""
    if path is None:
        return None
    try:
        data = read_regular(path, OLD_TEXT_LIMIT)  # a FIFO or a device never blocks
    except FileNotFoundError:
        return ""
    except (OSError, ValueError):
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _diff(
    name: str, args: dict[str, Any], path: str | None, old_text: str | None = None
) -> list[Content]:
    """Write: the new content (and the file's text before it, when read); Edit: the
    replaced text and its replacement."""
    if path is None:
        return []
    if name == WaveTool.WRITE and isinstance(args.get("content"), str):
        return [tool_diff_content(path, args["content"], old_text)]
    if name == WaveTool.EDIT and isinstance(args.get("new_string"), str):
        old = args.get("old_string")
        return [tool_diff_content(path, args["new_string"], old if isinstance(old, str) else None)]
    return []


def _cut(text: str) -> str:
    if len(text) <= RESULT_LIMIT:
        return text
    return text[:RESULT_LIMIT] + f"\n… ({len(text) - RESULT_LIMIT:,} more characters)"


def fenced(text: str) -> str:
    """``text`` as a fenced code block no line of it can close."""
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}\n{text.rstrip()}\n{fence}"
