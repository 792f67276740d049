"""JSON-RPC framing over raw stdio: every broken message gets an answer where one can be
given, and the server reads on (issue 12, defect 7)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.support.raw_stdio import RawServer, frame

PING = {"jsonrpc": "2.0", "id": 99, "method": "wave/agents/list", "params": {}}


@pytest.fixture
async def server(home: Path) -> AsyncIterator[RawServer]:
    raw = await RawServer.start(home)
    await raw.initialize()
    try:
        yield raw
    finally:
        await raw.close()


async def still_answers(server: RawServer, msg_id: int = 99) -> None:
    server.send({**PING, "id": msg_id})
    reply = await server.response(msg_id)
    assert "agents" in reply["result"]


BAD_HEADERS = {
    "not-a-number": b"Content-Length: abc\r\n\r\n" + json.dumps(PING).encode(),
    "negative": b"Content-Length: -5\r\n\r\n" + json.dumps(PING).encode(),
    "missing": b"Content-Type: application/vscode-jsonrpc\r\n\r\n" + json.dumps(PING).encode(),
    "huge": b"Content-Length: 1000000000000\r\n\r\n" + json.dumps(PING).encode(),
}


@pytest.mark.parametrize("header", BAD_HEADERS.values(), ids=BAD_HEADERS.keys())
async def test_after_a_bad_header_the_next_message_is_answered(
    server: RawServer, header: bytes
) -> None:
    server.send_raw(header)
    await still_answers(server, 1)
    await still_answers(server, 2)
    assert server.process.returncode is None


async def test_a_length_shorter_than_the_body_is_a_parse_error_then_reading_resumes(
    server: RawServer,
) -> None:
    body = json.dumps({**PING, "id": 5}).encode()
    server.send_raw(b"Content-Length: %d\r\n\r\n%s" % (len(body) - 7, body))
    error = await server.receive()
    assert error["id"] is None
    assert error["error"]["code"] == -32700
    await still_answers(server, 6)


async def test_invalid_json_is_a_parse_error(server: RawServer) -> None:
    server.send_raw(frame(b'{"jsonrpc": "2.0", "id": 3, "method": '))
    error = await server.receive()
    assert error == {"jsonrpc": "2.0", "id": None, "error": error["error"]}
    assert error["error"]["code"] == -32700
    await still_answers(server)


INVALID_REQUESTS = {
    "bare-number": (b"42", [None]),
    "no-jsonrpc": (b'{"id": 7, "method": "wave/agents/list", "params": {}}', [7]),
    "old-jsonrpc": (b'{"jsonrpc": "1.0", "id": "x", "method": "wave/agents/list"}', ["x"]),
    "batch": (
        json.dumps(
            [{**PING, "id": 11}, {**PING, "id": 12}, {"jsonrpc": "2.0", "method": "n"}]
        ).encode(),
        [11, 12],
    ),
    "empty-batch": (b"[]", [None]),
    "method-not-text": (b'{"jsonrpc": "2.0", "id": 8, "method": 5}', [8]),
    "id-object": (b'{"jsonrpc": "2.0", "id": {}, "method": "wave/agents/list"}', [None]),
}


@pytest.mark.parametrize(("body", "ids"), INVALID_REQUESTS.values(), ids=INVALID_REQUESTS.keys())
async def test_a_message_that_is_no_request_is_an_invalid_request(
    server: RawServer, body: bytes, ids: list[object]
) -> None:
    server.send_raw(frame(body))
    for expected in ids:
        error = await server.receive()
        assert error["id"] == expected
        assert error["error"]["code"] == -32600
    await still_answers(server)


async def test_params_that_do_not_fit_an_lsp_request_are_invalid_params(
    server: RawServer,
) -> None:
    server.send(
        {"jsonrpc": "2.0", "id": 22, "method": "textDocument/hover", "params": {"position": 3}}
    )
    reply = await server.response(22)
    assert reply["error"]["code"] in (-32602, -32603)
    await still_answers(server)


async def test_deeply_nested_json_is_a_parse_error(server: RawServer) -> None:
    server.send_raw(frame(b"[" * 100_000 + b"]" * 100_000))
    error = await server.receive()
    assert error["error"]["code"] in (-32700, -32600)
    await still_answers(server)
