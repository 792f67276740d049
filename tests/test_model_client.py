"""The OpenAI model client, through the real SDK over real HTTP to the offline model."""

from __future__ import annotations

import asyncio
import json
import socket
import time

import pytest

from tests.support.fake_model import FakeModelServer, call, reply, route
from wave_ls.runtime.core import ModelError, ModelRequest, Usage
from wave_ls.runtime.model_client import OpenAIModelClient

MODEL = "m1"


def ask(text: str, model: str = MODEL, **extra: object) -> ModelRequest:
    return ModelRequest(model=model, messages=[{"role": "user", "content": text}], **extra)  # type: ignore[arg-type]


def client_for(server: FakeModelServer, **options: float) -> OpenAIModelClient:
    options.setdefault("max_retries", 0)
    return OpenAIModelClient(server.base_url, "test-key", **options)  # type: ignore[arg-type]


async def failure(client: OpenAIModelClient, request: ModelRequest) -> str:
    with pytest.raises(ModelError) as caught:
        await client.complete(request)
    return str(caught.value)


def script(*steps: dict[str, object], **top: object) -> dict[str, object]:
    return {"models": [MODEL], "routes": [route("go", *steps)], **top}


# --------------------------------------------------------------------------- success


async def test_text_streams_as_deltas_with_usage(fake_model: FakeModelServer) -> None:
    fake_model.set_script(
        script(
            reply(
                "Hello there, friend!",
                chunk_size=4,
                usage={"prompt_tokens": 11, "completion_tokens": 7},
            )
        )
    )
    deltas: list[str] = []
    response = await client_for(fake_model).complete(ask("go"), deltas.append)
    assert response.content == "Hello there, friend!"
    assert "".join(deltas) == response.content
    assert len(deltas) == 5
    assert response.tool_calls == []
    assert response.finish_reason == "stop"
    assert response.usage == Usage(11, 7, 18)


async def test_rounds_reuse_one_connection(fake_model: FakeModelServer) -> None:
    # The stream is read to its end after [DONE], so httpx keeps the connection: no new TCP
    # (and, to a real endpoint, no new TLS) set-up per round.
    fake_model.set_script(script(reply("Done.")))
    client = client_for(fake_model)
    answers = [(await client.complete(ask("go"))).content for _ in range(3)]
    assert answers == ["Done."] * 3
    peers = {record["peer"] for record in fake_model.requests()}
    assert len(peers) == 1, peers


async def test_a_body_that_lags_done_does_not_hold_the_answer(
    fake_model: FakeModelServer,
) -> None:
    # A keep-alive server whose last write waits for a delayed ACK ends the body ~40 ms after
    # [DONE]; the answer is complete at [DONE], so the round does not wait for the body (that
    # wait was the 48 ms "return gap" of a delegation; issue 30).
    fake_model.set_script(script(reply("Done.", end_delay=0.9)))  # under DRAIN_SECONDS
    client = client_for(fake_model)
    started = time.monotonic()
    response = await client.complete(ask("go"))
    assert response.content == "Done." and response.finish_reason == "stop"
    assert time.monotonic() - started < 0.6  # the body was still open
    assert (await client.complete(ask("go"))).content == "Done."  # the client still works


async def test_two_tool_calls_in_one_round_are_assembled(fake_model: FakeModelServer) -> None:
    fake_model.set_script(
        script(
            reply(
                "Looking.",
                call("Read", {"file_path": "src/app.py", "limit": 20}, id="call_a"),
                call("Grep", {"pattern": "def main", "path": "."}),
                chunk_size=3,
            )
        )
    )
    response = await client_for(fake_model).complete(ask("go"))
    assert response.content == "Looking."
    assert response.finish_reason == "tool_calls"
    assert [c.name for c in response.tool_calls] == ["Read", "Grep"]
    assert json.loads(response.tool_calls[0].arguments) == {"file_path": "src/app.py", "limit": 20}
    assert json.loads(response.tool_calls[1].arguments) == {"pattern": "def main", "path": "."}
    assert response.tool_calls[0].id == "call_a"
    assert response.tool_calls[1].id and response.tool_calls[1].id != "call_a"
    assert response.usage.total_tokens > 0


async def test_request_carries_tools_params_and_usage_option(fake_model: FakeModelServer) -> None:
    fake_model.set_script(script(reply("ok")))
    tool = {"type": "function", "function": {"name": "Read", "parameters": {"type": "object"}}}
    client = client_for(fake_model)
    await client.complete(ask("go", tools=[tool], params={"temperature": 0.2, "top_k": 5}))
    await client.complete(ask("go"))
    with_tools, without_tools = fake_model.chat_bodies()
    assert with_tools["stream"] is True
    assert with_tools["stream_options"] == {"include_usage": True}
    assert with_tools["tools"] == [tool]
    assert with_tools["temperature"] == 0.2
    assert with_tools["top_k"] == 5  # unknown to the SDK, still passed through
    assert "tools" not in without_tools


async def test_missing_api_key_is_fine_for_a_local_server(
    fake_model: FakeModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    fake_model.set_script(script(reply("ok")))
    response = await OpenAIModelClient(fake_model.base_url, None).complete(ask("go"))
    assert response.content == "ok"


async def test_a_server_error_is_retried(fake_model: FakeModelServer) -> None:
    fake_model.set_script(script(reply("after retry", fault={"status": 500, "times": 1})))
    response = await client_for(fake_model, max_retries=1).complete(ask("go"))
    assert response.content == "after retry"
    assert len(fake_model.chat_bodies()) == 2


# --------------------------------------------------------------------------- failures


async def test_connection_refused_names_endpoint_and_model() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/v1"
    client = OpenAIModelClient(url, "k", max_retries=0)
    message = await failure(client, ask("go"))
    assert url in message and "model m1" in message
    assert "connection refused" in message
    assert "OPENAI_BASE_URL" in message


async def test_wrong_api_key(fake_model: FakeModelServer) -> None:
    fake_model.set_script(script(reply("ok"), api_key="right-key"))
    message = await failure(client_for(fake_model), ask("go"))
    assert fake_model.base_url in message and "model m1" in message
    assert "HTTP 401" in message and "OPENAI_API_KEY" in message


async def test_unknown_model(fake_model: FakeModelServer) -> None:
    fake_model.set_script(script(reply("ok")))
    message = await failure(client_for(fake_model), ask("go", model="no-such-model"))
    assert "Model 'no-such-model' is not available at " + fake_model.base_url in message
    assert "WAVE_MODEL" in message


async def test_wrong_path_says_to_check_the_base_url(fake_model: FakeModelServer) -> None:
    url = fake_model.base_url.removesuffix("/v1") + "/v2"
    message = await failure(OpenAIModelClient(url, "k", max_retries=0), ask("go"))
    assert url in message and "HTTP 404" in message and "OPENAI_BASE_URL" in message


async def test_rate_limit_after_retries(fake_model: FakeModelServer) -> None:
    fake_model.set_script(script(reply("ok", fault={"status": 429})))
    message = await failure(client_for(fake_model, max_retries=1), ask("go"))
    assert fake_model.base_url in message and "model m1" in message
    assert "HTTP 429, still after 1 retry" in message
    assert len(fake_model.chat_bodies()) == 2


async def test_read_timeout_before_any_byte(fake_model: FakeModelServer) -> None:
    fake_model.set_script(script(reply("ok", fault={"hang": True})))
    # Before the first byte the wait is the first token's (the server may be reading the
    # prompt), not the silence allowed between tokens.
    client = client_for(fake_model, read_timeout=0.1, first_token_timeout=0.3)
    message = await failure(client, ask("go"))
    assert fake_model.base_url in message and "model m1" in message
    assert "sent nothing for 0.3 s" in message and "WAVE_MODEL_FIRST_TOKEN_TIMEOUT" in message


async def test_read_timeout_mid_stream(fake_model: FakeModelServer) -> None:
    fake_model.set_script(script(reply("some text", fault={"hang_after_chunks": 2})))
    message = await failure(client_for(fake_model, read_timeout=0.3), ask("go"))
    assert "sent nothing for 0.3 s" in message and "model m1" in message


async def test_overall_deadline(fake_model: FakeModelServer) -> None:
    fake_model.set_script(script(reply("x" * 100, chunk_size=1, chunk_delay=0.05)))
    client = client_for(fake_model, read_timeout=5, deadline=0.4)
    started = time.monotonic()
    message = await failure(client, ask("go"))
    assert time.monotonic() - started < 2
    assert fake_model.base_url in message and "model m1" in message
    assert "did not finish within 0.4 s" in message


async def test_error_chunk_mid_stream(fake_model: FakeModelServer) -> None:
    body = {"error": {"message": "The engine is overloaded", "type": "server_error"}}
    fake_model.set_script(
        script(reply("partial text", fault={"error_after_chunks": 2, "body": body}))
    )
    message = await failure(client_for(fake_model), ask("go"))
    assert fake_model.base_url in message and "model m1" in message
    assert "error mid-stream: The engine is overloaded" in message


async def test_malformed_chunk(fake_model: FakeModelServer) -> None:
    fake_model.set_script(script(reply("partial text", fault={"malformed_after_chunks": 2})))
    message = await failure(client_for(fake_model), ask("go"))
    assert fake_model.base_url in message and "model m1" in message
    assert "malformed stream chunk" in message


async def test_stream_that_ends_without_finishing(fake_model: FakeModelServer) -> None:
    fake_model.set_script(script(reply("partial text", fault={"end_after_chunks": 2})))
    message = await failure(client_for(fake_model), ask("go"))
    assert fake_model.base_url in message and "model m1" in message
    assert "ended early" in message


async def test_connection_dropped_mid_stream(fake_model: FakeModelServer) -> None:
    fake_model.set_script(script(reply("partial text", fault={"drop_after_chunks": 2})))
    message = await failure(client_for(fake_model), ask("go"))
    assert fake_model.base_url in message and "model m1" in message
    assert "lost mid-stream" in message


async def test_cancelling_a_round_stops_it_and_the_client_stays_usable(
    fake_model: FakeModelServer,
) -> None:
    fake_model.set_script(
        {
            "routes": [
                route("slow", reply("x" * 200, chunk_size=1, chunk_delay=0.02)),
                route("fast", reply("done")),
            ]
        }
    )
    client = client_for(fake_model)
    first_delta = asyncio.Event()
    task = asyncio.create_task(client.complete(ask("slow"), lambda _d: first_delta.set()))
    await asyncio.wait_for(first_delta.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert (await client.complete(ask("fast"))).content == "done"


# --------------------------------------------------------------------------- issue 12, defect 8


async def test_a_hanging_endpoint_message_states_the_whole_wait(
    fake_model: FakeModelServer,
) -> None:
    fake_model.set_script(script(reply("never", fault={"hang": True})))
    client = client_for(fake_model, read_timeout=0.3, first_token_timeout=0.3, max_retries=2)
    started = time.monotonic()
    message = await failure(client, ask("go"))
    elapsed = time.monotonic() - started
    assert 0.9 <= elapsed < 10
    assert "sent nothing for 0.3 s on each of 3 attempts" in message
    assert "gave up after 1 s in all" in message or "gave up after 2 s in all" in message
    assert "WAVE_MODEL_TIMEOUT" in message and "WAVE_MODEL_RETRIES" in message
    assert len(fake_model.chat_bodies()) == 3


async def test_a_json_body_instead_of_a_stream_says_so(fake_model: FakeModelServer) -> None:
    fake_model.set_script(script(reply("whole answer", fault={"json_body": True})))
    message = await failure(client_for(fake_model), ask("go"))
    assert "answered with one JSON completion" in message
    assert "ignores `stream: true`" in message
    assert "finish_reason" not in message


async def test_an_html_page_with_status_200_says_so(fake_model: FakeModelServer) -> None:
    fake_model.set_script(script(reply("x", fault={"html_page": True})))
    message = await failure(client_for(fake_model), ask("go"))
    assert "answered with an HTML page titled 'Welcome to the Fake Portal'" in message
    assert "/v1" in message
    assert "finish_reason" not in message


async def test_events_with_several_data_lines_are_decoded_by_the_sse_spec(
    fake_model: FakeModelServer,
) -> None:
    fake_model.set_script(
        script(reply("Spread over lines.", call("Read", {"file_path": "a"}), sse_multiline=True))
    )
    deltas: list[str] = []
    response = await client_for(fake_model).complete(ask("go"), deltas.append)
    assert response.content == "Spread over lines."
    assert "".join(deltas) == "Spread over lines."
    assert json.loads(response.tool_calls[0].arguments) == {"file_path": "a"}


async def test_an_error_in_our_own_delta_callback_is_not_blamed_on_the_endpoint(
    fake_model: FakeModelServer,
) -> None:
    fake_model.set_script(script(reply("Hello")))

    def broken(_delta: str) -> None:
        raise TypeError("a bug in the caller")

    with pytest.raises(TypeError, match="a bug in the caller"):
        await client_for(fake_model).complete(ask("go"), broken)


def test_the_tls_context_built_at_start_verifies_like_the_sdks_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # ``wave-ls run`` builds the HTTP client's TLS context beside its imports: it must be
    # the SDK's default (certificates and host names checked, the system's CAs loaded),
    # never a weaker one, and the client must get it.
    import ssl

    import httpx2

    from wave_ls.runtime import tls_context

    monkeypatch.setattr(tls_context, "_started", False)
    monkeypatch.setattr(tls_context, "_done", type(tls_context._done)())
    assert tls_context.client_options() == {}  # nothing prepared: the SDK builds its own
    tls_context.prepare()
    context = tls_context.prepared()
    assert context is not None
    default = httpx2.create_ssl_context()
    assert context.verify_mode == default.verify_mode == ssl.CERT_REQUIRED
    assert context.check_hostname is default.check_hostname is True
    assert context.cert_store_stats() == default.cert_store_stats()
    client = tls_context.client_options()["http_client"]
    assert isinstance(client, httpx2.AsyncClient)
    assert client.follow_redirects is True  # the SDK's defaults stay
