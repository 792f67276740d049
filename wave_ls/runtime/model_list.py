"""The model ids an OpenAI-compatible endpoint offers (``GET <base_url>/models``), cached.

Used by the editor features for agent files (``model`` completion and checks). Plain
``urllib`` in a worker thread: no SDK import, and never more than one request in flight per
endpoint. A list is kept for ``ttl`` seconds; a failure is remembered for ``retry_after``
seconds, so an unreachable endpoint costs one attempt, not one per keystroke.
"""

from __future__ import annotations

import asyncio
import http.client
import json
import logging
import time
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass

from wave_ls.runtime.background_work import run_task

log = logging.getLogger(__name__)

DEFAULT_BASE_URL = "https://api.openai.com/v1"
TIMEOUT_S = 3.0


def fetch_model_ids(base_url: str, api_key: str | None, timeout: float = TIMEOUT_S) -> list[str]:
    """The ``id`` of each entry of ``GET <base_url>/models``; raises ``OSError`` or
    ``ValueError`` when the endpoint cannot be asked or answers something else."""
    request = urllib.request.Request(base_url.rstrip("/") + "/models", method="GET")
    if api_key:
        request.add_header("Authorization", f"Bearer {api_key}")
    with urllib.request.urlopen(request, timeout=timeout) as response:
        body = json.loads(response.read())
    data = body.get("data") if isinstance(body, dict) else None
    if not isinstance(data, list):
        raise ValueError("the answer has no 'data' list")
    return [str(item["id"]) for item in data if isinstance(item, dict) and "id" in item]


@dataclass
class _Entry:
    models: tuple[str, ...] | None
    until: float


class ModelList:
    """Per-endpoint cache of model ids; ``known`` never waits, ``refresh`` fetches."""

    def __init__(
        self,
        ttl: float = 300.0,
        retry_after: float = 30.0,
        fetch: Callable[[str, str | None], list[str]] = fetch_model_ids,
    ) -> None:
        self.ttl = ttl
        self.retry_after = retry_after
        self._fetch = fetch
        self._entries: dict[tuple[str, str | None], _Entry] = {}
        self._inflight: dict[tuple[str, str | None], asyncio.Task[tuple[str, ...] | None]] = {}

    @staticmethod
    def endpoint(base_url: str | None, api_key: str | None) -> tuple[str, str | None] | None:
        """Which endpoint to ask: the configured base URL (or OpenAI's when only a key is
        set); None when nothing is configured."""
        if base_url:
            return base_url, api_key
        return (DEFAULT_BASE_URL, api_key) if api_key else None

    def known(self, base_url: str | None, api_key: str | None) -> tuple[str, ...] | None:
        """The last list fetched from this endpoint (even if stale), or None."""
        key = self.endpoint(base_url, api_key)
        entry = self._entries.get(key) if key else None
        return entry.models if entry else None

    def is_fresh(self, base_url: str | None, api_key: str | None) -> bool:
        key = self.endpoint(base_url, api_key)
        entry = self._entries.get(key) if key else None
        return key is None or (entry is not None and entry.until > time.monotonic())

    async def refresh(self, base_url: str | None, api_key: str | None) -> tuple[str, ...] | None:
        """Fetch the list unless a fresh one (or a recent failure) is cached; the list."""
        key = self.endpoint(base_url, api_key)
        if key is None:
            return None
        if self.is_fresh(base_url, api_key):
            return self.known(base_url, api_key)
        task = self._inflight.get(key)
        if task is None:
            task = run_task(self._load(key), f"list the models of {key[0]}", log_failure=False)
            self._inflight[key] = task
        return await asyncio.shield(task)

    async def _load(self, key: tuple[str, str | None]) -> tuple[str, ...] | None:
        try:
            models: tuple[str, ...] | None = tuple(await asyncio.to_thread(self._fetch, *key))
            until = time.monotonic() + self.ttl
        except (OSError, ValueError, http.client.HTTPException) as error:
            log.info("cannot list the models of %s: %s", key[0], error)
            previous = self._entries.get(key)
            models = previous.models if previous else None  # keep a list we had
            until = time.monotonic() + self.retry_after
        finally:
            self._inflight.pop(key, None)
        self._entries[key] = _Entry(models, until)
        return models
