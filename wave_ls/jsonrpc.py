"""One JSON-RPC 2.0 message read from its bytes: parsed and checked, or the errors that
answer it. Shared by both protocol adapters (LSP's ``Content-Length`` framing in
``server/framing.py``, ACP's lines in ``acp/stdio.py``), so that both answer bad input the
same way: invalid JSON (also invalid UTF-8 or a raw control character) with ``-32700``
(Parse error), anything that is not one JSON-RPC 2.0 message with ``-32600`` (Invalid
Request), with the request's id when it can be read and ``null`` otherwise, as JSON-RPC 2.0
says.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass, field
from typing import Any

log = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
# Bigger messages are skipped unread (a prompt may embed whole files, but not this much).
MAX_MESSAGE_BYTES = 64 * 1024 * 1024


@dataclass(frozen=True)
class Checked:
    """A message that is one JSON-RPC 2.0 message, or the error responses to send instead."""

    message: dict[str, Any] | None
    errors: list[dict[str, Any]] = field(default_factory=list)


def check_message(body: bytes, batches: str = "the protocol has none") -> Checked:
    """``body`` parsed and checked (``batches`` says why a batch is refused)."""
    try:
        data = json.loads(body.decode("utf-8"))  # json.loads would also take UTF-16
    except (ValueError, RecursionError) as error:  # UnicodeDecodeError is a ValueError
        log.error("a message that is not valid JSON: %s", error)
        return Checked(None, [error_response(None, PARSE_ERROR, f"Parse error: {error}")])
    reason = invalid_reason(data, batches)
    if reason is None:
        return Checked(data)
    log.error("invalid message: %s", reason)
    text = f"Invalid Request: {reason}"
    return Checked(None, [error_response(i, INVALID_REQUEST, text) for i in request_ids(data)])


def error_response(msg_id: int | str | None, code: int, text: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": msg_id, "error": {"code": code, "message": text}}


def _valid_id(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int) and not isinstance(value, bool))


def invalid_reason(data: Any, batches: str = "the protocol has none") -> str | None:
    """Why ``data`` is not one JSON-RPC 2.0 message (None when it is one)."""
    if isinstance(data, list):
        return f"batch messages are not supported ({batches})"
    if not isinstance(data, dict):
        return f"a message must be a JSON object, not {type(data).__name__}"
    if data.get("jsonrpc") != "2.0":
        return 'a message needs "jsonrpc": "2.0"'
    if "id" in data and not _valid_id(data["id"]):
        return "a message id must be a string or an integer"
    if "method" in data:
        return None if isinstance(data["method"], str) else "method must be a string"
    if "id" in data and "result" in data:
        return None
    if "id" in data and "error" in data:
        error = data["error"]
        if isinstance(error, dict) and isinstance(error.get("code"), int):
            return None
        return "an error must be an object with an integer code"
    return "a message needs a method (a request or notification) or a result (a response)"


def request_ids(data: Any) -> list[int | str | None]:
    """The ids to answer an invalid message with: its request ids, else ``[None]``."""
    items = data if isinstance(data, list) else [data]
    ids: list[int | str | None] = [
        item["id"]
        for item in items
        if isinstance(item, dict) and "method" in item and _valid_id(item.get("id"))
    ]
    return ids or [None]
