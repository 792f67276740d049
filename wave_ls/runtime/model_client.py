"""``OpenAIModelClient``: one streamed Chat Completions round through the ``openai`` SDK.

Any OpenAI-compatible endpoint works. Every failure becomes one ``ModelError`` whose text
names the endpoint and the model and says what to do, so the editor can show it as is.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import json
import logging
import os
import re
import socket
import time
import urllib.request
import uuid
import weakref
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from wave_ls.runtime import tls_context
from wave_ls.runtime.context.refusal import is_context_refusal, window_in
from wave_ls.runtime.core import (
    ContextLengthError,
    ModelError,
    ModelRequest,
    ModelResponse,
    ToolCall,
    Usage,
)
from wave_ls.runtime.model_settings import FIRST_TOKEN_ENV
from wave_ls.runtime.model_settings import first_token_timeout as first_token_timeout_from_env
from wave_ls.runtime.settings import (
    DEFAULT_MODEL_RETRIES,
    DEFAULT_MODEL_TIMEOUT,
    SettingNames,
)
from wave_ls.runtime.sse import SseDecoder
from wave_ls.runtime.text import encodable

if TYPE_CHECKING:
    import ssl

    import openai

DEFAULT_BASE_URL = "https://api.openai.com/v1"
# Local servers ignore the key, but the SDK refuses to start without one.
PLACEHOLDER_API_KEY = "not-needed"
CONNECT_TIMEOUT = 5.0
# After the stream's [DONE], how long the rest of the body may take (see _drain), and how
# long the round waits for it before answering anyway (the drain goes on in the background).
DRAIN_SECONDS = 1.0
DRAIN_GRACE_SECONDS = 0.0005
DEFAULT_DEADLINE = 600.0
# Parameters a request may lose when the endpoint rejects them (a subagent's ``effort``,
# ``max_tokens`` where a model wants ``max_completion_tokens``, a ``temperature`` a reasoning
# model refuses): the round is sent again without, and this client stops sending them.
OPTIONAL_PARAMS = ("reasoning_effort", "max_tokens", "temperature", "tool_choice")
# ``finish_reason`` spellings of an answer cut off by a length limit, read as ``length``.
CUT_OFF_REASONS = frozenset(
    {"length", "max_tokens", "max_output_tokens", "model_length", "model_context_window_exceeded"}
)

log = logging.getLogger(__name__)

_SDK_CLIENTS: weakref.WeakKeyDictionary[
    asyncio.AbstractEventLoop, dict[tuple[str, str, float, int], openai.AsyncOpenAI]
] = weakref.WeakKeyDictionary()


class OpenAIModelClient:
    """A ``ModelClient`` for any OpenAI-compatible Chat Completions endpoint.

    ``read_timeout`` bounds each silence between the tokens of an answer
    (``WAVE_MODEL_TIMEOUT``); ``first_token_timeout`` bounds the wait for its first token,
    headers included (the endpoint reads the prompt meanwhile;
    ``WAVE_MODEL_FIRST_TOKEN_TIMEOUT``, at least ``read_timeout``); ``max_retries`` is the
    SDK's retry budget for 408/409/429/5xx, connection errors and timeouts before the
    headers (``WAVE_MODEL_RETRIES``); ``deadline`` bounds the whole round, retries included
    (by default 600 s, or every attempt's timeout if longer).
    """

    def __init__(
        self,
        base_url: str | None,
        api_key: str | None,
        *,
        read_timeout: float = DEFAULT_MODEL_TIMEOUT,
        deadline: float | None = None,
        max_retries: int = DEFAULT_MODEL_RETRIES,
        first_token_timeout: float | None = None,
        names: SettingNames | None = None,
    ) -> None:
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or DEFAULT_BASE_URL
        self._api_key = api_key or os.environ.get("OPENAI_API_KEY") or PLACEHOLDER_API_KEY
        self.read_timeout = read_timeout
        first = (
            first_token_timeout
            if first_token_timeout is not None
            else first_token_timeout_from_env()
        )
        self.first_token_timeout = max(first, read_timeout)
        self.max_retries = max_retries
        every_attempt = self.first_token_timeout * (max_retries + 1) + CONNECT_TIMEOUT
        self.deadline = max(DEFAULT_DEADLINE, every_attempt) if deadline is None else deadline
        self.unsupported: set[str] = set()  # optional parameters the endpoint rejected
        # The last tool list sent and its encodable form: a conversation sends the same list
        # while its tools do not change (Conversation._tool_schemas).
        self._tools: tuple[list[dict[str, Any]], list[dict[str, Any]]] | None = None
        self.names = names or SettingNames()  # how the user sets a value, for the messages

    @property
    def endpoint(self) -> tuple[str, str | None]:
        """The base URL and the key (None for the placeholder), to ask about the model."""
        key = None if self._api_key == PLACEHOLDER_API_KEY else self._api_key
        return self.base_url, key

    async def complete(
        self, request: ModelRequest, on_delta: Callable[[str], None] | None = None
    ) -> ModelResponse:
        """Stream one round; ``on_delta`` gets each piece of text. Raises ``ModelError``.

        An optional parameter (``OPTIONAL_PARAMS``) that the endpoint rejects is dropped:
        logged once, the round sent again without it, and never sent by this client again.
        """
        request = self._without(request, self.unsupported)
        try:
            return await self._complete(request, on_delta)
        except ContextLengthError:
            raise
        except ModelError as error:
            rejected = rejected_param(request, error.__cause__)
            if rejected is None:
                raise
            self.unsupported.add(rejected)
            log.warning(
                "the model endpoint %s rejects %r; it is no longer sent (%s)",
                self.base_url,
                rejected,
                error,
            )
            return await self._complete(self._without(request, {rejected}), on_delta)

    @staticmethod
    def _without(request: ModelRequest, names: set[str]) -> ModelRequest:
        if not names & request.params.keys():
            return request
        params = {key: value for key, value in request.params.items() if key not in names}
        return dataclasses.replace(request, params=params)

    async def _complete(
        self, request: ModelRequest, on_delta: Callable[[str], None] | None
    ) -> ModelResponse:
        import openai

        where = _Where(self.base_url, request.model)
        started = time.monotonic()
        scope = asyncio.timeout(self.deadline)
        try:
            async with scope:
                return await self._round(request, on_delta, where, started)
        except TimeoutError as error:
            if scope.expired():
                raise ModelError(
                    f"The model round at {where} did not finish within {self.deadline:g} s; "
                    "gave up. Try again, or raise WAVE_MODEL_TIMEOUT (modelTimeout) for slow "
                    "models."
                ) from error
            raise ModelError(self._silence_message(where, started, mid_stream=False)) from error
        except openai.APITimeoutError as error:
            raise ModelError(self._silence_message(where, started, mid_stream=False)) from error
        except openai.APIConnectionError as error:
            raise ModelError(
                f"Cannot connect to the model endpoint {where}: {_root_cause(error)}. "
                "Check that the server is running and that OPENAI_BASE_URL points to it."
            ) from error
        except openai.APIStatusError as error:
            refusal = _context_refusal(error, where)
            if refusal is not None:
                raise refusal from error
            raise ModelError(self._status_message(error, where)) from error
        except openai.OpenAIError as error:
            raise ModelError(f"The model call to {where} failed: {error}.") from error

    # ------------------------------------------------------------------ internals

    async def _round(
        self,
        request: ModelRequest,
        on_delta: Callable[[str], None] | None,
        where: _Where,
        started: float,
    ) -> ModelResponse:

        # The body goes through ``extra_body`` verbatim: the SDK's own transform of
        # ``messages``/``tools`` costs ~9 ms of CPU per round, growing with the history (it
        # walked a 100-message request for ~35 ms), and our messages are already plain JSON.
        # ``params`` travel the same way, so any server-specific parameter gets through.
        # ``encodable``: text that UTF-8 cannot hold (lone surrogates) is escaped.
        body: dict[str, Any] = encodable({"messages": request.messages, **request.params})
        if request.tools:
            if self._tools is None or self._tools[0] is not request.tools:
                self._tools = (request.tools, encodable(request.tools))
            body["tools"] = self._tools[1]
        # The raw SSE lines are parsed here: building the SDK's pydantic chunk objects was a
        # third of the server's CPU per round with several subagents streaming at once.
        create = self._client().chat.completions.with_streaming_response.create
        assembly = _Assembly()
        async with contextlib.AsyncExitStack() as stack:  # closes the HTTP response on errors
            response = await stack.enter_async_context(
                create(
                    model=request.model,
                    messages=[],  # replaced by extra_body["messages"]
                    stream=True,
                    stream_options={"include_usage": True},
                    extra_body=body,
                )
            )
            content_type = response.headers.get("content-type", "")
            # llama-server drops the next request sent on a connection that carried a
            # streamed answer ("Server disconnected without sending a response"): the SDK
            # then retried it after ~0.5 s, every round. Its connections are not kept.
            keep = not response.headers.get("server", "").startswith("llama.cpp")
            if not content_type.startswith("text/event-stream"):
                raise ModelError(await _not_a_stream(response, content_type, where))
            decoder = SseDecoder()
            on_thinking = request.on_thinking
            # Bytes, split into lines by the decoder: httpx's text and line decoders cost
            # as much as the decoding itself.
            pieces = response.iter_bytes().__aiter__()
            loop = asyncio.get_running_loop()
            # Until the first token the endpoint may be reading the prompt: its own, longer
            # limit; then the silence limit between tokens.
            gap = asyncio.timeout(None)
            armed_at, armed_limit = 0.0, 0.0
            try:
                async with gap:
                    done = False
                    while not done:
                        limit = self.read_timeout if assembly.started else self.first_token_timeout
                        now = loop.time()
                        # Moved when it would move by a hundredth of the limit (a timer moved
                        # per line, two a token, cost ~20 ms of CPU on a 4,000-token answer).
                        if limit != armed_limit or now - armed_at > limit / 100:
                            armed_at, armed_limit = now, limit
                            gap.reschedule(now + limit)
                        try:
                            piece = await pieces.__anext__()
                        except StopAsyncIteration:
                            break
                        except httpx_timeout_errors() as error:
                            message = self._silence_message(
                                where, started, mid_stream=True, first_token=not assembly.started
                            )
                            raise ModelError(message) from error
                        except httpx_transport_errors() as error:
                            raise ModelError(
                                f"The connection to the model endpoint {where} was lost "
                                f"mid-stream: {_root_cause(error)}. Try again."
                            ) from error
                        for data in decoder.feed_bytes(piece):
                            if data == "[DONE]":
                                if keep:  # else the response closes unread: its connection too
                                    await _finish_body(stack.pop_all(), pieces)
                                done = True
                                break
                            text, thought = assembly.add(parse_chunk(data, where), where)
                            # Our own code below: its errors are not the endpoint's.
                            if thought and on_thinking is not None:
                                on_thinking(thought)
                            if text and on_delta is not None:
                                on_delta(text)
            except TimeoutError as error:
                if not gap.expired():
                    raise
                message = self._silence_message(
                    where, started, mid_stream=True, first_token=not assembly.started
                )
                raise ModelError(message) from error
        if assembly.finish_reason is None:
            raise ModelError(
                f"The stream from the model endpoint {where} ended early: no finish_reason "
                "arrived. Try again; if it keeps happening, check the endpoint or any proxy "
                "in between."
            )
        return assembly.response()

    def _client(self) -> openai.AsyncOpenAI:
        # Building an SDK client costs ~30 ms (TLS set-up), so clients with the same settings
        # share one; its connection pool belongs to one event loop, hence one per loop.
        # httpx's read limit is the longer one (the first token's); ``_round`` keeps the
        # silence limit between tokens itself.
        read = self.first_token_timeout
        key = (self.base_url, self._api_key, read, self.max_retries)
        clients = _SDK_CLIENTS.setdefault(asyncio.get_running_loop(), {})
        if key not in clients:
            import openai

            context = tls_context.prepared()
            verify: ssl.SSLContext | bool = True if context is None else context
            if urllib.request.getproxies():
                # httpx mounts the environment's proxies (HTTPS_PROXY, NO_PROXY) only
                # around its own transport: the SDK's default client then.
                http_client = openai.DefaultAsyncHttpxClient(verify=verify)
            else:
                from wave_ls.runtime.asyncio_network import AsyncioTransport

                # httpx's own stack on plain asyncio streams (see asyncio_network): anyio's
                # cost two epoll changes and a cancel scope a token.
                transport = AsyncioTransport(verify=verify, limits=openai.DEFAULT_CONNECTION_LIMITS)
                http_client = openai.DefaultAsyncHttpxClient(transport=transport)
            clients[key] = openai.AsyncOpenAI(
                base_url=self.base_url,
                api_key=self._api_key,
                max_retries=self.max_retries,
                timeout=openai.Timeout(read, connect=min(CONNECT_TIMEOUT, self.read_timeout)),
                http_client=http_client,
            )
        return clients[key]

    def _silence_message(
        self, where: _Where, started: float, *, mid_stream: bool, first_token: bool = True
    ) -> str:
        """What a read timeout means, with the whole time waited."""
        waited = _duration(time.monotonic() - started)
        if mid_stream and not first_token:
            what = f"sent nothing for {self.read_timeout:g} s mid-stream"
            setting = f"the silence allowed between tokens is set by {self.names.model_timeout}"
        else:
            first = self.first_token_timeout
            if mid_stream:
                what = f"started its answer but sent no token for {first:g} s"
            elif self.max_retries:
                what = f"sent nothing for {first:g} s on each of {self.max_retries + 1} attempts"
            else:
                what = f"sent nothing for {first:g} s"
            setting = (
                f"the wait for the first token (while the server reads the prompt) is set by "
                f"{FIRST_TOKEN_ENV} (never below {self.names.model_timeout}, the silence "
                f"allowed between tokens), the retries by {self.names.model_retries}"
            )
        return (
            f"The model endpoint {where} {what}; gave up after {waited} in all. Check that "
            f"the server is up and not overloaded; {setting}."
        )

    def _status_message(self, error: openai.APIStatusError, where: _Where) -> str:
        status, detail = error.status_code, _server_message(error)
        retries = "retry" if self.max_retries == 1 else "retries"
        retried = f", still after {self.max_retries} {retries}" if self.max_retries else ""
        if status in (401, 403):
            return (
                f"The model endpoint {where} rejected the API key (HTTP {status}): {detail}. "
                f"Set {self.names.api_key} to a key this endpoint accepts."
            )
        if status == 404 and (error.code == "model_not_found" or "model" in detail.lower()):
            return (
                f"Model '{where.model}' is not available at {where.url} (HTTP 404: {detail}). "
                "Set WAVE_MODEL (or the subagent's `model` field) to a model this endpoint "
                "serves."
            )
        if status == 404:
            return (
                f"The model endpoint {where} has no Chat Completions API (HTTP 404: {detail}). "
                "Check OPENAI_BASE_URL; it usually ends in /v1."
            )
        if status == 429:
            return (
                f"The model endpoint {where} is rate-limiting requests (HTTP 429{retried}): "
                f"{detail}. Wait a moment and try again, or run fewer subagents at once."
            )
        if status >= 500:
            return (
                f"The model endpoint {where} failed (HTTP {status}{retried}): {detail}. "
                "Try again later."
            )
        return (
            f"The model endpoint {where} refused the request (HTTP {status}): {detail}. "
            "Check the model name and the request parameters."
        )


def _context_refusal(error: openai.APIStatusError, where: _Where) -> ContextLengthError | None:
    """The refusal of a request too long for the window, in the endpoint's own words."""
    detail = _server_message(error)
    text = f"{detail} {error.code or ''} {error.body if isinstance(error.body, dict) else ''}"
    if error.status_code not in (400, 413, 422, 500) or not is_context_refusal(text):
        return None
    body = error.body if isinstance(error.body, dict) else {}
    inner = body.get("error", body)
    n_ctx = inner.get("n_ctx") if isinstance(inner, dict) else None  # llama.cpp says it
    window = n_ctx if isinstance(n_ctx, int) else window_in(text)
    return ContextLengthError(
        f"The model endpoint {where} refused the request: it is longer than the model's "
        f"context window (HTTP {error.status_code}: {detail}).",
        window,
    )


def rejected_param(request: ModelRequest, error: BaseException | None) -> str | None:
    """The optional parameter of ``request`` that the endpoint refused (HTTP 400 or 422
    naming it, or saying that a parameter is not supported), if that is what ``error`` is."""
    import openai

    sent = [name for name in OPTIONAL_PARAMS if name in request.params]
    if not sent or not isinstance(error, openai.APIStatusError):
        return None
    if error.status_code not in (400, 422):
        return None
    detail = f"{_server_message(error)} {getattr(error, 'param', '') or ''}".lower()
    named = [name for name in sent if name in detail]
    if named:
        return named[0]
    generic = any(word in detail for word in ("unsupported", "not supported", "unrecognized"))
    return sent[0] if generic and len(sent) == 1 and "param" in detail else None


@dataclass(frozen=True)
class _Where:
    """Names the endpoint and model in every message: ``http://host/v1 (model m)``."""

    url: str
    model: str

    def __str__(self) -> str:
        return f"{self.url} (model {self.model})"


@dataclass
class _PartialCall:
    id: str = ""
    name: str = ""
    arguments: list[str] = field(default_factory=list)


@dataclass
class _Assembly:
    """Collects a streamed round: text, tool calls by index, usage, finish reason."""

    text: list[str] = field(default_factory=list)
    thinking: list[str] = field(default_factory=list)
    calls: dict[int, _PartialCall] = field(default_factory=dict)
    usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None
    started: bool = False  # a token arrived (text, reasoning or a tool call)

    def add(self, chunk: Any, where: _Where) -> tuple[str, str]:
        """Take in one parsed ``chat.completion.chunk``; the answer's text and the
        reasoning it adds."""
        try:
            return self._add(chunk)
        except (AttributeError, TypeError, ValueError) as error:
            raise ModelError(
                _malformed(where, f"a chunk of an unexpected shape: {error}")
            ) from None

    def _add(self, chunk: dict[str, Any]) -> tuple[str, str]:
        text = thought = ""
        usage = chunk.get("usage")
        if usage:
            prompt, completion = (
                usage.get("prompt_tokens") or 0,
                usage.get("completion_tokens") or 0,
            )
            self.usage = Usage(prompt, completion, usage.get("total_tokens") or prompt + completion)
        for choice in chunk.get("choices") or []:  # the usage chunk has none
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            content = delta.get("content")
            if content:
                self.text.append(str(content))
                text += str(content)
            # Reasoning (``reasoning_content``, ``reasoning``) is no part of the answer: it
            # is shown as thinking. It is a token all the same: the model has begun.
            reasoning = _reasoning(delta)
            if reasoning:
                self.thinking.append(reasoning)
                thought += reasoning
            if content or delta.get("tool_calls") or reasoning:
                self.started = True
            for call_delta in delta.get("tool_calls") or []:
                call = self.calls.setdefault(call_delta.get("index", 0), _PartialCall())
                if call_delta.get("id"):
                    call.id = call_delta["id"]
                function = call_delta.get("function") or {}
                if function.get("name") and not call.name:
                    call.name = function["name"]
                if function.get("arguments"):
                    call.arguments.append(function["arguments"])
            if choice.get("finish_reason") is not None:
                reason = str(choice["finish_reason"])
                self.finish_reason = "length" if reason.lower() in CUT_OFF_REASONS else reason
        return text, thought

    def response(self) -> ModelResponse:
        calls = [
            ToolCall(
                id=call.id or f"call_{uuid.uuid4().hex[:24]}",
                name=call.name,
                arguments="".join(call.arguments) or "{}",
            )
            for _, call in sorted(self.calls.items())
        ]
        return ModelResponse(
            content="".join(self.text),
            tool_calls=calls,
            usage=self.usage,
            finish_reason=self.finish_reason,
            thinking="".join(self.thinking),
        )


def _reasoning(delta: dict[str, Any]) -> str:
    """The reasoning a delta carries: ``reasoning_content`` (DeepSeek, vLLM, llama.cpp) or
    ``reasoning`` (OpenRouter, Ollama's OpenAI API, newer vLLM), when it is text."""
    value = delta.get("reasoning_content") or delta.get("reasoning")
    return value if isinstance(value, str) else ""


def parse_chunk(data: str, where: _Where) -> Any:
    """One event's JSON; a ``ModelError`` for invalid JSON or an error the endpoint sent."""
    try:
        chunk = json.loads(data)
    except ValueError as error:
        raise ModelError(_malformed(where, f"invalid JSON ({error})")) from None
    if isinstance(chunk, dict) and chunk.get("error") is not None:
        said = _chunk_error(chunk["error"])
        if is_context_refusal(f"{said} {chunk['error']}"):
            raise ContextLengthError(
                f"The model endpoint {where} refused the request mid-stream: it is longer "
                f"than the model's context window ({said}).",
                window_in(f"{said} {chunk['error']}"),
            )
        raise ModelError(
            f"The model endpoint {where} reported an error mid-stream: "
            f"{_chunk_error(chunk['error'])}. Try again; if it keeps failing, check the "
            "endpoint's logs or status page."
        )
    if not isinstance(chunk, dict):
        raise ModelError(_malformed(where, f"a chunk that is not an object: {data[:80]!r}"))
    return chunk


def _malformed(where: _Where, what: str) -> str:
    return (
        f"The model endpoint {where} sent a malformed stream chunk ({what}). Check that "
        "OPENAI_BASE_URL is an OpenAI-compatible Chat Completions endpoint."
    )


async def _not_a_stream(response: Any, content_type: str, where: _Where) -> str:
    """What an answer with status 200 that is no event stream is, in plain words."""
    body = b""
    async for piece in response.iter_bytes():
        body += piece
        if len(body) >= 4096:
            break
    text = body.decode("utf-8", "replace").strip()
    kind = content_type.split(";")[0].strip() or "no Content-Type"
    if "html" in kind or text[:100].lower().startswith(("<!doctype html", "<html")):
        title = re.search(r"<title[^>]*>(.*?)</title>", text, re.I | re.S)
        named = f" titled {title.group(1).strip()[:80]!r}" if title else ""
        return (
            f"The model endpoint {where} answered with an HTML page{named} (HTTP 200, {kind}), "
            "not a Chat Completions stream. OPENAI_BASE_URL probably points at a web page or "
            "a login portal, not the API; it usually ends in /v1."
        )
    try:
        data = json.loads(text)
    except ValueError:
        data = None
    if isinstance(data, dict) and "choices" in data:
        return (
            f"The model endpoint {where} answered with one JSON completion (HTTP 200, {kind}) "
            "instead of a stream: it ignores `stream: true`. wave-ls needs streamed Chat "
            "Completions (server-sent events); enable streaming on the server or any proxy "
            "in between."
        )
    shown = text[:200] + ("..." if len(text) > 200 else "")
    return (
        f"The model endpoint {where} answered with {kind} (HTTP 200) instead of a Chat "
        f"Completions stream (text/event-stream): {shown!r}. Check OPENAI_BASE_URL."
    )


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s" if rest else f"{minutes} min"


def _chunk_error(error: Any) -> str:
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return str(error["message"]).rstrip(".")
    return str(error)


# Bodies still being read after their round answered (a reference keeps each task alive).
_FINISHING: set[asyncio.Task[None]] = set()


async def _finish_body(
    response_scope: contextlib.AsyncExitStack, pieces: AsyncIterator[bytes]
) -> None:
    """Read the rest of the body and close the response, waiting at most
    ``DRAIN_GRACE_SECONDS`` for it: a server whose end of body lags ``[DONE]`` (a keep-alive
    server whose last small write waits ~40 ms for a delayed ACK) must not hold up the
    answer, which is complete at ``[DONE]``. Normally the body ends at once and the
    connection goes back to the pool before the next request."""

    async def finish() -> None:
        async with response_scope:
            await _drain(pieces)

    task = asyncio.ensure_future(finish())
    _FINISHING.add(task)
    task.add_done_callback(_FINISHING.discard)
    task.add_done_callback(_log_failure)
    await asyncio.wait({task}, timeout=DRAIN_GRACE_SECONDS)


def _log_failure(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.debug("closing a finished model response failed", exc_info=task.exception())


async def _drain(pieces: AsyncIterator[bytes]) -> None:
    """Read what follows ``[DONE]`` (normally only the end of the body), for at most
    ``DRAIN_SECONDS``: httpx puts a connection back in its pool only once its response was
    read to the end, so otherwise every model request opened a new connection (and, to a
    real endpoint, a new TLS session: a handshake of latency and ~5 ms of CPU)."""
    with contextlib.suppress(TimeoutError, *httpx_transport_errors()):
        async with asyncio.timeout(DRAIN_SECONDS):
            async for _ in pieces:
                pass


def httpx_timeout_errors() -> tuple[type[BaseException], ...]:
    import httpx2  # the openai SDK's HTTP client (openai 3.x)

    return (httpx2.TimeoutException,)


def httpx_transport_errors() -> tuple[type[BaseException], ...]:
    import httpx2

    return (httpx2.TransportError,)


def _server_message(error: openai.APIError) -> str:
    """The server's own words: the error body's message, else the SDK's text."""
    body = error.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str):
            return str(inner["message"]).rstrip(".")
    if isinstance(body, str) and body.strip():
        return body.strip()[:200]
    return error.message.rstrip(".")


def _root_cause(error: BaseException) -> str:
    """The lowest-level reason in the exception chain, in plain words."""
    seen: set[int] = set()
    current: BaseException | None = error
    reason = str(error).rstrip(".") or type(error).__name__
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, ConnectionRefusedError):
            return "connection refused"
        if isinstance(current, socket.gaierror):
            return f"unknown host ({current})"
        if str(current):
            reason = str(current).rstrip(".")
        current = current.__cause__ or current.__context__
    return reason
