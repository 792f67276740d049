"""A yes/no question to the ACP client, as a tool call of the session: the call shows what
is asked (``content``), ``session/request_permission`` asks it with two options, and the call
ends with the answer. Used for trusting a folder and for starting a project's MCP server."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Final

from acp.helpers import text_block, tool_content
from acp.schema import (
    PermissionOption,
    PermissionOptionKind,
    RequestPermissionResponse,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
)

from wave_ls.acp.outbox import Outbox
from wave_ls.acp.tool_calls import Content

log = logging.getLogger(__name__)

YES: Final = "allow_always"
NO: Final = "reject_always"

Request = Callable[..., Awaitable[RequestPermissionResponse]]


@dataclass(frozen=True)
class Question:
    """What to ask: ``topic`` names it in ids and logs; ``choices`` are the yes and no
    options' names, ``results`` the call's last line for yes and no; the answer (or None)
    is the call's ``raw_output`` under ``output_key``."""

    topic: str
    title: str
    text: str
    choices: tuple[str, str]
    results: tuple[str, str]
    raw_input: dict[str, object]
    output_key: str


def options(choices: Sequence[str]) -> list[PermissionOption]:
    kinds: tuple[PermissionOptionKind, ...] = (YES, NO)
    return [
        PermissionOption(option_id=kind, name=name, kind=kind)
        for kind, name in zip(kinds, choices, strict=True)
    ]


async def ask(request: Request, outbox: Outbox, session_id: str, question: Question) -> bool | None:
    """True (yes), False (no), None (cancelled, or the client failed: never fatal)."""
    call_id = f"{question.topic}-{uuid.uuid4().hex[:12]}"
    body: list[Content] = [tool_content(text_block(question.text))]
    outbox.put(
        session_id,
        ToolCallStart(
            session_update="tool_call",
            tool_call_id=call_id,
            title=question.title,
            kind="other",
            status="pending",
            content=body,
            raw_input=question.raw_input,
        ),
    )
    await outbox.drain()  # the tool call first, then the question on it
    try:
        response = await request(
            session_id=session_id,
            tool_call=ToolCallUpdate(
                tool_call_id=call_id, title=question.title, kind="other", status="pending"
            ),
            options=options(question.choices),
        )
    except Exception as exc:  # a client error must not kill the turn
        log.warning("session/request_permission (%s) failed: %s", question.topic, exc)
        answer = None
    else:
        outcome = response.outcome
        chosen = outcome.option_id if outcome.outcome == "selected" else None
        answer = {YES: True, NO: False}.get(chosen) if chosen else None
    yes, no = question.results
    result = {True: yes, False: no, None: "Not answered"}[answer]
    outbox.put(
        session_id,
        ToolCallProgress(
            session_update="tool_call_update",
            tool_call_id=call_id,
            status="completed" if answer is not None else "failed",
            content=[*body, tool_content(text_block(result))],
            raw_output={question.output_key: answer},
        ),
    )
    return answer
