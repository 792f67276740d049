"""The offline model: a real HTTP server speaking the OpenAI Chat Completions protocol.

Endpoints: ``POST /v1/chat/completions`` (SSE when ``stream: true``, JSON otherwise),
``GET /v1/models``, and the control endpoints ``POST /_script``, ``GET /_script``,
``GET /_requests``, ``POST /_reset``. Each connection runs in its own daemon thread.
"""

from __future__ import annotations

import contextlib
import json
import logging
import select
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from wave_ls.fake_model.reply import (
    Reply,
    build_reply,
    completion_body,
    error_body,
    stream_chunks,
)
from wave_ls.fake_model.script import (
    Choice,
    Fault,
    Script,
    ScriptError,
    Step,
    choose_step,
    parse_script,
)

log = logging.getLogger(__name__)

# Sent with status faults unless the script overrides it, so the SDK's retries are quick.
DEFAULT_FAULT_HEADERS = {"retry-after-ms": "10"}
RECORDED_HEADERS = ("authorization", "content-type", "user-agent", "x-stainless-retry-count")
CHAT_PATHS = ("/v1/chat/completions", "/chat/completions")
MODELS_PATHS = ("/v1/models", "/models")
PROPS_PATHS = ("/props", "/v1/props")


class _State:
    """The script, the recorded requests and the fault counters, shared by all threads."""

    def __init__(self, script_data: Any) -> None:
        self.lock = threading.Lock()
        self.script_data = script_data
        self.script: Script = parse_script(script_data)
        self.records: list[dict[str, Any]] = []
        self.fault_hits: dict[tuple[int, int], int] = {}

    def set_script(self, data: Any) -> None:
        script = parse_script(data)  # raises before anything changes
        with self.lock:
            self.script_data, self.script = data, script
            self.fault_hits.clear()

    def record(self, entry: dict[str, Any]) -> None:
        with self.lock:
            self.records.append(entry)

    def reset(self) -> None:
        with self.lock:
            self.records.clear()
            self.fault_hits.clear()

    def take_fault(self, choice: Choice) -> Fault | None:
        """The step's fault if it still applies to this request (``times`` counts hits)."""
        fault = choice.step.fault
        if fault is None:
            return None
        with self.lock:
            hits = self.fault_hits.get(choice.key, 0) + 1
            self.fault_hits[choice.key] = hits
        return fault if fault.times is None or hits <= fault.times else None


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    # The default backlog of 5 overflows when ten subagents connect at once (one then waits
    # a full second for the kernel's retry).
    request_queue_size = 128

    def __init__(self, address: tuple[str, int], state: _State) -> None:
        super().__init__(address, _Handler)
        self.state = state
        self.stopping = threading.Event()
        self._connections: set[socket.socket] = set()
        self._connections_lock = threading.Lock()

    def track(self, connection: socket.socket, open_: bool) -> None:
        with self._connections_lock:
            if open_:
                self._connections.add(connection)
            else:
                self._connections.discard(connection)

    def handle_error(self, request: Any, client_address: Any) -> None:
        # A client that goes away mid-request is normal here (cancelled rounds, timeouts).
        error = sys.exc_info()[1]
        if isinstance(error, OSError):
            log.debug("client %s went away: %s", client_address, error)
        else:
            log.exception("fake model: request from %s failed", client_address)

    def close_connections(self) -> None:
        with self._connections_lock:
            connections = list(self._connections)
        for connection in connections:
            with contextlib.suppress(OSError):
                connection.shutdown(socket.SHUT_RDWR)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer
    _entry: dict[str, Any] | None = None  # the record of the request being answered

    def setup(self) -> None:
        super().setup()
        # Many small writes per reply: without this, Nagle + delayed ACK add ~40 ms each.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.server.track(self.connection, True)

    def finish(self) -> None:
        try:
            super().finish()
        finally:
            self.server.track(self.connection, False)

    def log_message(self, format: str, *args: Any) -> None:
        log.debug("%s " + format, self.address_string(), *args)

    # ------------------------------------------------------------------ routing

    def do_GET(self) -> None:
        path = self.path.split("?", 1)[0]
        state = self.server.state
        if path in MODELS_PATHS:
            self._record(None)
            models = state.script.models or ("fake-model",)
            data = [
                {"id": m, "object": "model", "created": 0, "owned_by": "wave-ls"}
                | state.script.model_info
                for m in models
            ]
            self._send_json(200, {"object": "list", "data": data})
        elif path in PROPS_PATHS and state.script.props is not None:
            self._record(None)
            self._send_json(200, state.script.props)
        elif path == "/_requests":
            with state.lock:
                records = list(state.records)
            self._send_json(200, records)
        elif path == "/_script":
            self._send_json(200, state.script_data)
        else:
            self._not_found("GET", path)

    def do_POST(self) -> None:
        path = self.path.split("?", 1)[0]
        body = self._read_json()
        if body is _INVALID:
            return
        if path in CHAT_PATHS:
            self._chat(body)
        elif path == "/_script":
            try:
                self.server.state.set_script(body)
            except ScriptError as error:
                self._send_json(400, {"error": str(error)})
                return
            self._send_json(200, {"ok": True})
        elif path == "/_reset":
            self.server.state.reset()
            self._send_json(200, {"ok": True})
        else:
            self._not_found("POST", path)

    # ------------------------------------------------------------------ chat completions

    def _chat(self, body: Any) -> None:
        self._record(body)
        script = self.server.state.script
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            self._send_json(
                400, error_body("'messages' is required", "invalid_request_error", None)
            )
            return
        if script.api_key is not None and (
            self.headers.get("Authorization") != f"Bearer {script.api_key}"
        ):
            message = "Incorrect API key provided."
            self._send_json(401, error_body(message, "invalid_request_error", "invalid_api_key"))
            return
        model = str(body.get("model") or "")
        if script.models is not None and model not in script.models:
            message = f"The model `{model}` does not exist or you do not have access to it."
            self._send_json(404, error_body(message, "invalid_request_error", "model_not_found"))
            return
        choice = choose_step(script, body["messages"])
        step = choice.step
        fault = self.server.state.take_fault(choice)
        if step.delay and self.server.stopping.wait(step.delay):
            self.close_connection = True
            return
        if fault is not None and fault.status is not None:
            self._status_fault(fault)
        elif fault is not None and fault.hang:
            self._hang()
        elif fault is not None and fault.json_body:  # as if ``stream`` were not set
            self._complete(build_reply(step, body), None, model)
        elif fault is not None and fault.html_page:
            self._send_raw(200, HTML_PAGE, "text/html; charset=utf-8")
        elif body.get("stream"):
            options = body.get("stream_options") or {}
            include_usage = bool(options.get("include_usage"))
            self._stream(build_reply(step, body), step, fault, model, include_usage, script)
        else:
            self._complete(build_reply(step, body), fault, model)

    def _status_fault(self, fault: Fault) -> None:
        status = fault.status or 500
        body = fault.body
        if body is None:
            kind = "server_error" if status >= 500 else "invalid_request_error"
            code = "rate_limit_exceeded" if status == 429 else None
            body = error_body(f"Fake fault: status {status}.", kind, code)
        self._send_json(status, body, {**DEFAULT_FAULT_HEADERS, **fault.headers})

    def _stream(
        self,
        reply: Reply,
        step: Step,
        fault: Fault | None,
        model: str,
        include_usage: bool,
        script: Script,
    ) -> None:
        chunks = stream_chunks(
            reply, model=model, chunk_size=step.chunk_size, include_usage=include_usage
        )
        stream_fault = fault.stream_fault() if fault is not None else None
        limit = len(chunks) if stream_fault is None else min(stream_fault[1], len(chunks))
        try:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream; charset=utf-8")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            if step.prompt_delay and self.server.stopping.wait(step.prompt_delay):
                self.close_connection = True
                return
            for index, chunk in enumerate(chunks[:limit]):
                pause = _pause(step, script, chunk.chars)
                if index and pause and self.server.stopping.wait(pause):
                    self.close_connection = True
                    return
                if step.sse_multiline:  # one event, several data lines (the SSE spec)
                    self._send_event(json.dumps(chunk.data, indent=1))
                else:
                    self._send_event(json.dumps(chunk.data))
            if stream_fault is None:
                self._send_event("[DONE]")
                if self._entry is not None:  # when the answer was complete, for benchmarks
                    self._entry["done_time"] = time.time()
                if step.end_delay and self.server.stopping.wait(step.end_delay):
                    self.close_connection = True
                    return
                self._end_body()
                return
            kind = stream_fault[0]
            if kind == "error_after_chunks":
                assert fault is not None
                error = fault.body or error_body(
                    "The fake model failed mid-stream.", "server_error", None
                )
                self._send_event(json.dumps(error))
                self._end_body()
            elif kind == "malformed_after_chunks":
                self._send_event('{"id": "chatcmpl-broken", "choices": [{"delta": {"content": "')
                self._end_body()
            elif kind == "end_after_chunks":
                self._end_body()  # a complete HTTP body that never finishes the stream
            elif kind == "drop_after_chunks":
                self.close_connection = True  # cut the chunked body short
            else:  # hang_after_chunks
                self._hang()
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _complete(self, reply: Reply, fault: Fault | None, model: str) -> None:
        stream_fault = fault.stream_fault() if fault is not None else None
        kind = stream_fault[0] if stream_fault else None
        if kind is None:
            self._send_json(200, completion_body(reply, model=model))
        elif kind == "error_after_chunks":
            assert fault is not None
            body = fault.body or error_body("The fake model failed.", "server_error", None)
            self._send_json(500, body)
        elif kind in ("malformed_after_chunks", "end_after_chunks"):
            self._send_raw(200, b'{"id": "chatcmpl-broken", "choices": [', "application/json")
        elif kind == "drop_after_chunks":
            self.close_connection = True
        else:
            self._hang()

    # ------------------------------------------------------------------ helpers

    def _hang(self) -> None:
        """Send nothing until the server stops or the client goes away."""
        self.close_connection = True
        while not self.server.stopping.wait(0.05):
            readable, _, _ = select.select([self.connection], [], [], 0)
            if readable:
                try:
                    if not self.connection.recv(1, socket.MSG_PEEK):
                        return
                except OSError:
                    return

    def _record(self, body: Any) -> None:
        headers = {
            name: value
            for name in RECORDED_HEADERS
            if (value := self.headers.get(name)) is not None
        }
        self._entry = {
            "method": self.command,
            "path": self.path,
            "headers": headers,
            "time": time.time(),
            "peer": f"{self.client_address[0]}:{self.client_address[1]}",  # one per connection
            "body": body,
        }
        self.server.state.record(self._entry)

    def _read_json(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return None
        try:
            return json.loads(raw)
        except json.JSONDecodeError as error:
            body = error_body(f"Invalid JSON body: {error}", "invalid_request_error", None)
            self._send_json(400, body)
            return _INVALID

    def _not_found(self, method: str, path: str) -> None:
        body = error_body(f"Invalid URL ({method} {path})", "invalid_request_error", None)
        self._send_json(404, body)

    def _send_json(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        self._send_raw(status, json.dumps(body).encode(), "application/json", headers)

    def _send_raw(
        self,
        status: int,
        payload: bytes,
        content_type: str,
        headers: dict[str, str] | None = None,
    ) -> None:
        try:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            for name, value in (headers or {}).items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(payload)
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _send_event(self, data: str) -> None:
        lines = "".join(f"data: {line}\n" for line in data.split("\n"))
        payload = f"{lines}\n".encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(payload), payload))

    def _end_body(self) -> None:
        self.wfile.write(b"0\r\n\r\n")


_INVALID = object()
HTML_PAGE = (
    b"<!DOCTYPE html>\n<html><head><title>Welcome to the Fake Portal</title></head>"
    b"<body><h1>Sign in</h1></body></html>\n"
)


def _pause(step: Step, script: Script, chars: int) -> float:
    """Seconds to wait before a chunk: the step's ``chunk_delay``, else the script's pace."""
    if step.chunk_delay is not None:
        return step.chunk_delay
    if script.tokens_per_second:
        return (chars / 4) / script.tokens_per_second
    return 0.0


class FakeModelServer:
    """The offline model, in-process: ``with FakeModelServer(script) as server: ...``.

    ``start()`` returns the base URL (``http://127.0.0.1:<port>/v1``) to give the OpenAI SDK.
    """

    def __init__(self, script: Any = None, *, host: str = "127.0.0.1", port: int = 0) -> None:
        self._state = _State(script)
        self._host = host
        self._port = port
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    @property
    def base_url(self) -> str:
        if self._httpd is None:
            raise RuntimeError("the fake model server is not started")
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def start(self) -> str:
        """Start serving in a daemon thread; returns the base URL."""
        if self._httpd is None:
            self._httpd = _HTTPServer((self._host, self._port), self._state)
            self._thread = threading.Thread(
                target=self._httpd.serve_forever,
                kwargs={"poll_interval": 0.05},
                name="fake-model",
                daemon=True,
            )
            self._thread.start()
        return self.base_url

    def stop(self) -> None:
        """Stop serving, end hanging replies and close open connections."""
        httpd, self._httpd = self._httpd, None
        if httpd is None:
            return
        httpd.stopping.set()
        httpd.shutdown()
        httpd.server_close()
        httpd.close_connections()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def set_script(self, script: Any) -> None:
        """Replace the script (resets fault counters); raises ``ScriptError`` if invalid."""
        self._state.set_script(script)

    def requests(self) -> list[dict[str, Any]]:
        """Every recorded model request: ``{method, path, headers, time, peer, body}``
        (``peer``: the client's address and port, one per connection), and ``done_time`` once
        a streamed answer's ``[DONE]`` was sent."""
        with self._state.lock:
            return list(self._state.records)

    def chat_bodies(self) -> list[dict[str, Any]]:
        """The JSON bodies of the recorded chat completion requests, in order."""
        return [
            r["body"]
            for r in self.requests()
            if r["method"] == "POST" and isinstance(r["body"], dict)
        ]

    def reset(self) -> None:
        """Forget recorded requests and fault counters."""
        self._state.reset()

    def __enter__(self) -> FakeModelServer:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
