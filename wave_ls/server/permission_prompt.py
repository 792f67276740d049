"""Permission prompts over LSP: the ``wave/permission/request`` server-to-client request.

Only a client that declared ``capabilities.experimental.wave.permissionRequest: true`` is
asked; Write and Edit requests carry a ``preview`` (the diff the call would make), and an
answer with ``remember: "session"`` becomes a session rule (``runtime/allowances.py``).
Any other client never gets the request; the call is denied with a message the model reads,
which tells the user how to allow changes instead.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from wave_ls.runtime.core import PermissionDecision, PermissionRequest

if TYPE_CHECKING:
    from wave_ls.server.app import WaveServer

log = logging.getLogger(__name__)

PERMISSION_METHOD = "wave/permission/request"
CAPABILITY = "permissionRequest"
NO_PROMPT_MESSAGE = (
    "Permission to {summary} was denied: this editor cannot show permission prompts. "
    "Do not retry; tell the user that the session's permissionMode must be 'acceptEdits' or "
    "'bypassPermissions' for this."
)


class LspPermissionAsker:
    """Asks the editor whether a tool call may run."""

    def __init__(self, server: WaveServer, session_id: Callable[[], str]) -> None:
        self.server = server
        self.session_id = session_id

    async def ask(self, request: PermissionRequest) -> PermissionDecision:
        if not self.server.client_experimental(CAPABILITY):
            return PermissionDecision(False, NO_PROMPT_MESSAGE.format(summary=request.summary))
        params: dict[str, object] = {
            "sessionId": self.session_id(),
            "toolName": request.tool_name,
            "arguments": request.arguments,
            "summary": request.summary,
        }
        if request.preview is not None:
            params["preview"] = request.preview
        try:
            answer: object = await self.server.protocol.send_request_async(
                PERMISSION_METHOD, params
            )
        except Exception as exc:  # a client error must not kill the turn
            log.warning("permission request failed: %s", exc)
            return PermissionDecision(False, f"Permission to {request.summary} denied: {exc}")
        answer = answer if isinstance(answer, dict) else {}
        allowed = answer.get("allowed") is True
        message = answer.get("message")
        if allowed:
            return PermissionDecision(True, remember=answer.get("remember") == "session")
        if not isinstance(message, str) or not message.strip():
            message = f"The user denied permission to {request.summary}."
        return PermissionDecision(False, message)
