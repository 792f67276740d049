"""The JSON-RPC protocol of wave-ls: pygls's, with what an editor may rely on made firm.

- ``wave/*`` params reach handlers as plain JSON: pygls turns the params of methods it does
  not know into namedtuples (mangling some keys), and typed params that fail to structure
  are dropped without a response. Our handlers take the raw dict and validate it
  themselves, so every bad request gets a JSON-RPC error.
- Every outgoing message encodes: text with lone surrogates (file names that are not
  UTF-8) is made readable on the way out (``runtime.text.json_dumps``).
- A request after ``shutdown`` is answered with InvalidRequest (pygls drops it).

This module is the only one that touches pygls's private members (``_shutdown``,
``_send_data`` and what it uses): the rest of the server uses ``shutting_down`` and
``send_payload``, so a pygls upgrade is checked here.
"""

from __future__ import annotations

import logging
from typing import Any

import attrs
from lsprotocol import types
from pygls.exceptions import JsonRpcInternalError, JsonRpcInvalidRequest
from pygls.protocol import LanguageServerProtocol

from wave_ls.runtime.text import json_dumps

log = logging.getLogger(__name__)

WAVE_PREFIX = "wave/"


# No field has a default: the converter leaves fields at their default out of the JSON, and
# a message without ``jsonrpc`` (or a response without ``result``) is not a message;
# only ``params`` may be left out.
@attrs.define
class RawRequestMessage:
    id: int | str
    method: str
    jsonrpc: str
    params: Any = None  # may be absent


@attrs.define
class RawNotificationMessage:
    method: str
    jsonrpc: str
    params: Any = None


@attrs.define
class RawResponseMessage:
    id: int | str
    result: Any
    jsonrpc: str


# The ``wave/*`` methods that are notifications; every other ``wave/*`` method is a request.
WAVE_NOTIFICATIONS = frozenset({"wave/session/update"})


def wave_message_type(method: str) -> type[RawRequestMessage | RawNotificationMessage] | None:
    """The raw message class of a ``wave/*`` method (both directions), else None."""
    if not method.startswith(WAVE_PREFIX):
        return None
    return RawNotificationMessage if method in WAVE_NOTIFICATIONS else RawRequestMessage


def wave_result_type(method: str) -> type[RawResponseMessage] | None:
    return RawResponseMessage if method.startswith(WAVE_PREFIX) else None


class WaveProtocol(LanguageServerProtocol):
    def get_message_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        return wave_message_type(method) or super().get_message_type(method)

    def get_result_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        return wave_result_type(method) or super().get_result_type(method)

    @property
    def shutting_down(self) -> bool:
        """Whether the client sent ``shutdown`` (the LSP exit code depends on it)."""
        return bool(self._shutdown)

    def send_payload(self, data: object) -> None:
        """Write one message as it is given (a plain dict: lsprotocol's message classes
        would leave a null ``id`` out of an error response)."""
        self._send_data(data)

    def handle_message(self, message: Any) -> None:
        method = getattr(message, "method", None)
        if self._shutdown and method != types.EXIT and hasattr(message, "id") and method:
            error = JsonRpcInvalidRequest(f"{method}: the server is shutting down")
            self._send_response(message.id, error=error.to_response_error())
            return
        super().handle_message(message)

    def _send_data(self, data: Any) -> None:
        # pygls's own, except that the body always encodes (and is not logged at INFO).
        if not data:
            return
        if self.writer is None:
            log.error("Unable to send data, no available transport!")
            return
        try:
            body = json_dumps(data, default=self._serialize_message).encode("utf-8")
            if self._include_headers:
                header = (
                    f"Content-Length: {len(body)}\r\n"
                    f"Content-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
                )
                body = header.encode("ascii") + body
            # stdio and TCP writers write at once (no websockets here)
            self.writer.write(body)
        except BrokenPipeError:
            log.exception("Error sending data. BrokenPipeError")
            raise
        except Exception as error:
            log.exception("Error sending data")
            self._server._report_server_error(error, JsonRpcInternalError)
