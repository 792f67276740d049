"""Permission prompts over ACP: ``session/request_permission``.

Asked before a call the session's mode does not allow on its own, with three options:
allow once (``allow_once``), allow for the rest of the session (``allow_always``: the
session's ``remember``, see ``runtime/allowances.py``) and reject (``reject_once``). The
request names the tool call it is about (its id, title, kind, locations, and the diff of a
Write or Edit), so the client shows the prompt on that call; a subagent's request is put
on its delegation's tool call (the one tool call the client shows for it).

``ExitPlanMode`` (approving a plan) has the same three kinds: "Yes, and accept edits"
(the session goes on in ``acceptEdits``), "Yes, and ask before edits" (``default``) and
"No, keep planning".
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Final

from acp.helpers import text_block, tool_content
from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    PermissionOption,
    PermissionOptionKind,
    RequestPermissionResponse,
    ToolCallUpdate,
)

from wave_ls.acp.tool_calls import present
from wave_ls.runtime.allowances import allowance_for
from wave_ls.runtime.core import PermissionDecision, PermissionRequest
from wave_ls.runtime.tool_names import WaveTool

log = logging.getLogger(__name__)

ALLOW_ONCE: Final = "allow_once"
ALLOW_ALWAYS: Final = "allow_always"
REJECT: Final = "reject_once"
PLAN_TOOL = WaveTool.EXIT_PLAN_MODE.value

Request = Callable[..., Awaitable[RequestPermissionResponse]]


def options_for(request: PermissionRequest, folder: Path) -> list[PermissionOption]:
    """Allow once, allow for this session (saying what that covers), reject."""
    if request.tool_name == PLAN_TOOL:
        names = ("Yes, and ask before edits", "Yes, and accept edits", "No, keep planning")
    else:
        allowance = allowance_for(request, folder)
        always = f"Allow {allowance.description} for this session" if allowance else "Always allow"
        names = ("Allow", always, "Reject")
    kinds: tuple[PermissionOptionKind, ...] = (ALLOW_ONCE, ALLOW_ALWAYS, REJECT)
    return [
        PermissionOption(option_id=k, name=n, kind=k) for k, n in zip(kinds, names, strict=True)
    ]


def tool_call_of(request: PermissionRequest, cwd: Path) -> ToolCallUpdate:
    """The tool call the prompt is about.

    The main agent's own call is the tool call the client already shows. A subagent's call
    is not a tool call there (its delegation is): the prompt is put on the delegation's
    tool call, with the subagent's call's title and kind (clients name the prompt by them)
    and content saying what the subagent asks for; the delegation's own title and kind are
    sent again once answered (``restore``).
    """
    shown = present(request.tool_name, request.arguments, request.cwd or cwd, read_old=True)
    if request.parent_tool_call_id:
        asks = tool_content(text_block(f"The subagent asks to run: {shown.title}"))
        return ToolCallUpdate(
            tool_call_id=request.parent_tool_call_id,
            title=f"Subagent: {shown.title}",
            kind=shown.kind,
            content=[asks, *shown.content],
            locations=shown.locations or None,
        )
    return ToolCallUpdate(
        tool_call_id=request.tool_call_id or f"permission-{uuid.uuid4().hex[:12]}",
        title=shown.title,
        kind=shown.kind,
        status="pending",
        content=shown.content or None,
        locations=shown.locations or None,
        raw_input=request.arguments,
    )


class AcpPermissionAsker:
    """A ``PermissionAsker`` for one session of an ACP connection."""

    def __init__(
        self,
        session_id: str,
        request: Request,
        before: Callable[[], Awaitable[None]],
        folder: Path,
        accept_edits: Callable[[], None],
        restore: Callable[[str], None] = lambda _call_id: None,
    ) -> None:
        self.session_id = session_id
        self.request = request  # the connection's request_permission
        self.before = before  # sends the updates still queued (the tool call comes first)
        self.folder = folder
        self.accept_edits = accept_edits
        self.restore = restore  # a delegation's tool call shows itself again

    async def ask(self, request: PermissionRequest) -> PermissionDecision:
        await self.before()
        try:
            response = await self.request(
                session_id=self.session_id,
                tool_call=tool_call_of(request, self.folder),
                options=options_for(request, self.folder),
            )
        except Exception as exc:  # a client error must not kill the turn
            log.warning("session/request_permission failed: %s", exc)
            return PermissionDecision(False, f"Permission to {request.summary} denied: {exc}")
        finally:
            if request.parent_tool_call_id:
                self.restore(request.parent_tool_call_id)
        return self._decision(request, response.outcome)

    def _decision(
        self, request: PermissionRequest, outcome: AllowedOutcome | DeniedOutcome
    ) -> PermissionDecision:
        if not isinstance(outcome, AllowedOutcome):
            return PermissionDecision(
                False, f"The user cancelled the request for permission to {request.summary}."
            )
        chosen = outcome.option_id
        if chosen not in (ALLOW_ONCE, ALLOW_ALWAYS):
            return PermissionDecision(False, f"The user denied permission to {request.summary}.")
        if request.tool_name == PLAN_TOOL:
            if chosen == ALLOW_ALWAYS:
                self.accept_edits()
            return PermissionDecision(True)
        return PermissionDecision(True, remember=chosen == ALLOW_ALWAYS)
