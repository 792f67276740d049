"""How large the model's context window is.

In order: a setting (``{"context": {"windowTokens": N}}`` in the settings files,
``initializationOptions.contextWindow``, ``WAVE_CONTEXT_WINDOW``), what the endpoint says
(its ``/v1/models`` entry: vLLM's ``max_model_len``, ``context_length``, ``context_window``,
``max_context_length``; llama.cpp's ``/props`` ``n_ctx``, else its ``meta.n_ctx`` or
``meta.n_ctx_train``),
else ``DEFAULT_WINDOW_TOKENS``. A refusal that names the window (``refusal.window_in``)
lowers it for the rest of the process.
"""

from __future__ import annotations

import asyncio
import json
import logging
from dataclasses import dataclass
from typing import Any

log = logging.getLogger(__name__)

DEFAULT_WINDOW_TOKENS = 32_768
MIN_WINDOW_TOKENS = 1_024
MAX_WINDOW_TOKENS = 100_000_000
PROBE_TIMEOUT = 3.0
# ``/v1/models`` entry fields naming the serving window, in the order they are believed.
MODEL_FIELDS = ("max_model_len", "context_length", "context_window", "max_context_length")

# What each endpoint and model said, for the whole process: (base_url, model) -> (tokens, how).
_PROBED: dict[tuple[str, str], tuple[int | None, str]] = {}
_INFLIGHT: dict[tuple[str, str], asyncio.Task[tuple[int | None, str]]] = {}


def check_window(value: object) -> int | None:
    """A window size in tokens (a whole number 1024-100000000), or None."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if MIN_WINDOW_TOKENS <= value <= MAX_WINDOW_TOKENS else None


WINDOW_RULE = f"a whole number of tokens from {MIN_WINDOW_TOKENS} to {MAX_WINDOW_TOKENS}"


@dataclass
class Window:
    """The window of one session's model: its size, where the size came from, and the
    endpoint to ask when no setting gives it."""

    tokens: int = DEFAULT_WINDOW_TOKENS
    source: str = "default"
    explicit: bool = False  # a setting gave it: the endpoint is never asked
    base_url: str | None = None
    api_key: str | None = None
    _model: str | None = None  # the model whose window ``tokens`` is

    async def ensure(self, model: str) -> None:
        """Ask the endpoint once per model (at most ``PROBE_TIMEOUT`` seconds)."""
        if self.explicit or self.base_url is None or self._model == model:
            return
        tokens, how = await probe(self.base_url, self.api_key, model)
        self._model = model
        if tokens is not None:
            self.tokens, self.source = tokens, how
        else:
            self.tokens, self.source = DEFAULT_WINDOW_TOKENS, "default"

    def start_probe(self, model: str) -> None:
        """Begin asking the endpoint now (a session opening), without waiting."""
        if self.explicit or self.base_url is None:
            return
        try:
            asyncio.get_running_loop()
        except RuntimeError:
            return
        _probe_task(self.base_url, self.api_key, model)

    def learn(self, tokens: int | None) -> None:
        """An endpoint refused a request and named its window: believe it when smaller."""
        if tokens is not None and MIN_WINDOW_TOKENS <= tokens < self.tokens:
            self.tokens, self.source = tokens, "the endpoint's refusal"
            if self.base_url is not None and self._model is not None:
                _PROBED[(self.base_url, self._model)] = (tokens, self.source)


async def probe(base_url: str, api_key: str | None, model: str) -> tuple[int | None, str]:
    """The window the endpoint reports for ``model`` and how it said so; ``(None, why)``
    when it reports none. Cached for the process; never raises."""
    key = (base_url, model)
    if key in _PROBED:
        return _PROBED[key]
    task = _probe_task(base_url, api_key, model)
    try:
        return await asyncio.wait_for(asyncio.shield(task), PROBE_TIMEOUT + 0.5)
    except TimeoutError:
        return None, "the endpoint did not answer in time"


def _probe_task(
    base_url: str, api_key: str | None, model: str
) -> asyncio.Task[tuple[int | None, str]]:
    from wave_ls.runtime.background_work import run_task

    key = (base_url, model)
    task = _INFLIGHT.get(key)
    if task is None:
        task = run_task(_probe(base_url, api_key, model), f"context window of {model}")
        _INFLIGHT[key] = task
    return task


async def _probe(base_url: str, api_key: str | None, model: str) -> tuple[int | None, str]:
    key = (base_url, model)
    try:
        found = await asyncio.to_thread(endpoint_window, base_url, api_key, model)
    finally:
        _INFLIGHT.pop(key, None)
    _PROBED[key] = found
    if found[0] is not None:
        log.info("context window of %s at %s: %d tokens (%s)", model, base_url, *found)
    return found


def endpoint_window(
    base_url: str, api_key: str | None, model: str, timeout: float = PROBE_TIMEOUT
) -> tuple[int | None, str]:
    """Ask ``/models``, then llama.cpp's ``/props``; blocking."""
    entry = _model_entry(_get_json(base_url.rstrip("/") + "/models", api_key, timeout), model)
    for name in MODEL_FIELDS:
        tokens = _positive(entry.get(name))
        if tokens:
            return tokens, f"the endpoint's /models {name}"
    props = _get_json(_server_root(base_url) + "/props", api_key, timeout)
    settings = props.get("default_generation_settings")
    n_ctx = _positive(settings.get("n_ctx")) if isinstance(settings, dict) else None
    n_ctx = n_ctx or _positive(props.get("n_ctx"))
    if n_ctx:
        return n_ctx, "the endpoint's /props n_ctx"
    found = entry.get("meta")
    meta: dict[str, Any] = found if isinstance(found, dict) else {}
    for name in ("n_ctx", "n_ctx_train"):  # llama.cpp: the window it runs with, its model's
        tokens = _positive(meta.get(name))
        if tokens:
            return tokens, f"the endpoint's /models meta.{name}"
    return None, "the endpoint does not say"


def _model_entry(listing: dict[str, Any], model: str) -> dict[str, Any]:
    data = listing.get("data")
    if not isinstance(data, list):
        return {}
    entries = [item for item in data if isinstance(item, dict)]
    named = [item for item in entries if item.get("id") == model]
    if named:
        return named[0]
    return entries[0] if len(entries) == 1 else {}  # a one-model server names it its own way


def _server_root(base_url: str) -> str:
    root = base_url.rstrip("/")
    return root[: -len("/v1")] if root.endswith("/v1") else root


def _get_json(url: str, api_key: str | None, timeout: float) -> dict[str, Any]:
    # Here, in the worker thread: http.client is ~30 ms of imports on the server's start.
    import http.client
    import urllib.request

    request = urllib.request.Request(url, method="GET")
    if api_key:
        request.add_header("Authorization", f"Bearer {api_key}")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = json.loads(response.read(1_000_000))
    except (OSError, ValueError, http.client.HTTPException) as error:
        log.debug("context window: %s: %s", url, error)
        return {}
    return body if isinstance(body, dict) else {}


def _positive(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < MIN_WINDOW_TOKENS:
        return None
    return int(value)
