"""A pygls protocol that hands ``wave/*`` params to handlers as plain JSON.

pygls turns the params of methods it does not know into namedtuples (mangling some keys), and
typed params that fail to structure are dropped without a response. Our handlers take the raw
dict and validate it themselves, so every bad request gets a JSON-RPC error.
"""

from __future__ import annotations

from typing import Any

import attrs
from pygls.protocol import LanguageServerProtocol

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


def wave_message_type(method: str) -> type[Any] | None:
    """The raw message class of a ``wave/*`` method (both directions), else None."""
    if not method.startswith(WAVE_PREFIX):
        return None
    return RawNotificationMessage if method in WAVE_NOTIFICATIONS else RawRequestMessage


def wave_result_type(method: str) -> type[Any] | None:
    return RawResponseMessage if method.startswith(WAVE_PREFIX) else None


class WaveProtocol(LanguageServerProtocol):
    def get_message_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        return wave_message_type(method) or super().get_message_type(method)

    def get_result_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        return wave_result_type(method) or super().get_result_type(method)
