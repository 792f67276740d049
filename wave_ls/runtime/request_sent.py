"""A model client that says when each request is on its way (``RequestSentSignal``)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from wave_ls.runtime.core import ModelClient, ModelRequest, ModelResponse


class RequestSentSignal:
    """``client``, calling ``on_sent`` once each request is on its way: the request's task
    has run to its first wait (written, or waiting for a connection) before the callback
    queued after it runs. Work started then does not compete with sending the request
    (issue 30): an isolated run's checkout and status (``Workspace.sent``), the removal of a
    returned delegation's worktree (``SubagentHost.parent_request_sent``)."""

    def __init__(self, client: ModelClient, on_sent: Callable[[], None]) -> None:
        self._client = client
        self._on_sent = on_sent

    async def complete(
        self, request: ModelRequest, on_delta: Callable[[str], None] | None = None
    ) -> ModelResponse:
        sending = asyncio.ensure_future(self._client.complete(request, on_delta))
        asyncio.get_running_loop().call_soon(self._on_sent)
        return await sending

    def __getattr__(self, name: str) -> Any:  # base_url and the like, as the client has them
        return getattr(self._client, name)
