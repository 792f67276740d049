"""A saved session's history as the ``session/update`` notifications ``session/load`` replays.

The user's messages are ``user_message_chunk``s (reminders the session added are not: the
user never typed them), assistant text is ``agent_message_chunk``s, and each tool call is
one ``tool_call`` already in its final state (its result, or its diff for Write/Edit).
Background task notices are message lines, as they were live.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, cast

from acp.helpers import (
    update_agent_message_text,
    update_agent_thought_text,
    update_user_message_text,
)
from acp.schema import ToolCallStart

from wave_ls.acp.tool_calls import final_content, present
from wave_ls.acp.updates import notice_line
from wave_ls.runtime.core import Message, ToolKind, parsed_arguments
from wave_ls.runtime.loop import CANCELLED_TOOL_RESULT
from wave_ls.runtime.tools.descriptor import KINDS


def replay(messages: Sequence[Message], cwd: Path) -> Iterator[Any]:
    """The updates that show ``messages`` in an empty chat, in order."""
    results = {m.tool_call_id: m for m in messages if m.role == "tool" and m.tool_call_id}
    for message in messages:
        if message.role == "user":
            line = notice_line(message)
            if line:
                yield update_agent_message_text(line)
            elif not message.meta.get("reminder") and not message.meta.get("isMeta"):
                yield update_user_message_text(message.content)
        elif message.role == "assistant":
            thinking = message.meta.get("thinking")
            if isinstance(thinking, str) and thinking:
                yield update_agent_thought_text(thinking)
            if message.content:
                yield update_agent_message_text(message.content)
            for call in message.tool_calls:
                yield _tool_call(call.id, call.name, call.arguments, results.get(call.id), cwd)


def _tool_call(
    call_id: str, name: str, arguments: str, result: Message | None, cwd: Path
) -> ToolCallStart:
    args = parsed_arguments(arguments)
    details = result.meta.get("details") if result is not None else None
    details = details if isinstance(details, dict) else {}  # what the block showed at its end
    shown = present(name, args, cwd, details, shown_as=_shown_as(result))
    text = result.content if result is not None else CANCELLED_TOOL_RESULT
    failed = result is None or bool(result.meta.get("isError")) or text == CANCELLED_TOOL_RESULT
    content = final_content(name, args, cwd, text, failed, details)
    return ToolCallStart(
        session_update="tool_call",
        tool_call_id=call_id,
        title=shown.title,
        kind=shown.kind,
        status="failed" if failed else "completed",
        content=content or None,
        locations=shown.locations or None,
        raw_input=args,
    )


def _shown_as(result: Message | None) -> tuple[ToolKind, str] | None:
    """The kind and target the call's live block showed, kept in its result's ``meta``
    (None in a transcript saved before them: the registered tool's descriptor decides)."""
    meta = result.meta if result is not None else {}
    kind, target = meta.get("toolKind"), meta.get("target")
    if kind in KINDS and isinstance(target, str):
        return cast(ToolKind, kind), target
    return None
