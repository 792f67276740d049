"""The offline model server: routing, streaming shape, faults, recording, the CLI."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_model import FakeModelServer, call, reply, route
from tests.support.waiting import until_blocking
from wave_ls.fake_model import ScriptError, parse_script


def http(url: str, body: Any = None, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(
        url, data=data, headers={"Content-Type": "application/json", **(headers or {})}
    )
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def chat(base_url: str, messages: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
    status, raw = http(
        f"{base_url}/chat/completions", {"model": "m", "messages": messages, **extra}
    )
    assert status == 200, raw
    return dict(json.loads(raw))


def answer(base_url: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The assistant message of a non-streamed reply."""
    return dict(chat(base_url, messages)["choices"][0]["message"])


def events(base_url: str, messages: list[dict[str, Any]], **extra: Any) -> list[str]:
    """The raw ``data:`` payloads of a streamed reply."""
    body = {"model": "m", "messages": messages, "stream": True, **extra}
    status, raw = http(f"{base_url}/chat/completions", body)
    assert status == 200
    return [line[6:] for line in raw.decode().splitlines() if line.startswith("data: ")]


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def system(text: str) -> dict[str, Any]:
    return {"role": "system", "content": text}


def follow_up(messages: list[dict[str, Any]], message: dict[str, Any]) -> list[dict[str, Any]]:
    """The conversation after the assistant ``message`` and a result for each tool call."""
    results = [
        {"role": "tool", "tool_call_id": c["id"], "content": "ok"}
        for c in message.get("tool_calls") or []
    ]
    return [*messages, message, *results]


# --------------------------------------------------------------------------- routing


def test_interleaved_conversations_each_follow_their_own_route(fake_model: FakeModelServer) -> None:
    delegate = {
        "subagent_type": "test-runner",
        "prompt": "Run the tests and fix them",
        "description": "fix",
    }
    fake_model.set_script(
        {
            "routes": [
                route(
                    "fix the failing tests",
                    reply("", call("Agent", delegate)),
                    reply("All tests pass now."),
                ),
                route(
                    "Run the tests",
                    reply("", call("Bash", {"command": "pytest -q"})),
                    reply("Fixed 2 tests."),
                    system="test runner",
                ),
            ]
        }
    )
    url = fake_model.base_url
    main = [system("You are wave."), user("please fix the failing tests")]
    sub = [system("You are a test runner."), user("Run the tests and fix them")]

    first = answer(url, main)
    assert first["tool_calls"][0]["function"]["name"] == "Agent"
    main = follow_up(main, first)
    sub_first = answer(url, sub)
    assert json.loads(sub_first["tool_calls"][0]["function"]["arguments"]) == {
        "command": "pytest -q"
    }
    sub = follow_up(sub, sub_first)
    assert answer(url, main)["content"] == "All tests pass now."
    assert answer(url, sub)["content"] == "Fixed 2 tests."


def test_the_latest_anchor_wins_and_steps_count_from_it(fake_model: FakeModelServer) -> None:
    fake_model.set_script(
        {"routes": [route("hello", reply("Hi!")), route("bye", reply("Bye!"), reply("Gone."))]}
    )
    url = fake_model.base_url
    conversation = [user("hello"), {"role": "assistant", "content": "Hi!"}, user("bye")]
    assert answer(url, conversation)["content"] == "Bye!"
    conversation += [{"role": "assistant", "content": "Bye!"}, user("still there?")]
    assert answer(url, conversation)["content"] == "Gone."
    conversation += [{"role": "assistant", "content": "Gone."}, user("hello again")]
    assert answer(url, conversation)["content"] == "Hi!"


def test_past_the_last_step(fake_model: FakeModelServer) -> None:
    fake_model.set_script(
        {
            "routes": [
                route("text", reply("Only text.")),
                route("tools", reply("", call("Read", {"file_path": "a"}))),
            ]
        }
    )
    url = fake_model.base_url
    done = {"role": "assistant", "content": "x"}
    assert answer(url, [user("text"), done])["content"] == "Only text."
    finished = answer(url, [user("tools"), done])
    assert finished["content"] == "(script finished)"
    assert "tool_calls" not in finished


def test_system_filter_and_default_reply(fake_model: FakeModelServer) -> None:
    fake_model.set_script({"routes": [route("task", reply("planner reply"), system="You plan.")]})
    url = fake_model.base_url
    assert answer(url, [system("You plan."), user("task")])["content"] == "planner reply"
    assert (
        "no script route matched" in answer(url, [system("You explore."), user("task")])["content"]
    )
    fake_model.set_script({"routes": [], "default": {"content": "fallback"}})
    assert answer(url, [user("anything")])["content"] == "fallback"


def test_echo_step_answers_with_the_last_user_text(fake_model: FakeModelServer) -> None:
    fake_model.set_script({"routes": [route("", {"echo": True})]})
    parts = [{"type": "text", "text": "part one"}, {"type": "text", "text": "part two"}]
    assert (
        answer(fake_model.base_url, [{"role": "user", "content": parts}])["content"]
        == "part one\npart two"
    )


# --------------------------------------------------------------------------- wire shape


def test_stream_shape_matches_openai(fake_model: FakeModelServer) -> None:
    fake_model.set_script(
        {
            "routes": [
                route(
                    "go",
                    reply(
                        "Two calls.",
                        call("Read", {"file_path": "a.py"}),
                        call("Glob", {"pattern": "**/*.py"}),
                        usage={"prompt_tokens": 10, "completion_tokens": 5},
                    ),
                )
            ]
        }
    )
    data = events(fake_model.base_url, [user("go")], stream_options={"include_usage": True})
    assert data[-1] == "[DONE]"
    chunks = [json.loads(d) for d in data[:-1]]
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    assert chunks[-1]["choices"] == []
    assert chunks[-1]["usage"] == {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    assert chunks[-2]["choices"][0]["finish_reason"] == "tool_calls"
    deltas = [c["choices"][0]["delta"] for c in chunks[:-1]]
    text = "".join(d.get("content") or "" for d in deltas)
    assert text == "Two calls."
    calls = [tc for d in deltas for tc in d.get("tool_calls") or []]
    for index, name in enumerate(["Read", "Glob"]):
        pieces = [tc for tc in calls if tc["index"] == index]
        assert pieces[0]["id"] and pieces[0]["type"] == "function"
        assert pieces[0]["function"]["name"] == name
        assert len(pieces) >= 3  # the first delta plus at least two argument fragments
        assert all("id" not in p and "name" not in p["function"] for p in pieces[1:])
    arguments = "".join(tc["function"].get("arguments", "") for tc in calls if tc["index"] == 1)
    assert json.loads(arguments) == {"pattern": "**/*.py"}


def test_no_usage_chunk_unless_asked(fake_model: FakeModelServer) -> None:
    fake_model.set_script({"routes": [route("go", reply("hi"))]})
    chunks = [json.loads(d) for d in events(fake_model.base_url, [user("go")])[:-1]]
    assert all(c["choices"] for c in chunks)


def test_models_api_key_and_unknown_model(fake_model: FakeModelServer) -> None:
    fake_model.set_script({"models": ["m1", "m2"], "api_key": "secret"})
    url = fake_model.base_url
    status, raw = http(f"{url}/models")
    assert status == 200 and [m["id"] for m in json.loads(raw)["data"]] == ["m1", "m2"]
    body = {"model": "m1", "messages": [user("hi")]}
    status, raw = http(f"{url}/chat/completions", body, {"Authorization": "Bearer wrong"})
    assert status == 401 and json.loads(raw)["error"]["code"] == "invalid_api_key"
    body["model"] = "m3"
    status, raw = http(f"{url}/chat/completions", body, {"Authorization": "Bearer secret"})
    assert status == 404 and json.loads(raw)["error"]["code"] == "model_not_found"


def test_tokens_per_second_paces_the_stream(fake_model: FakeModelServer) -> None:
    fake_model.set_script({"tokens_per_second": 400, "routes": [route("go", reply("x" * 400))]})
    started = time.monotonic()
    events(fake_model.base_url, [user("go")])
    assert time.monotonic() - started >= 0.2  # 100 tokens at 400 per second


# --------------------------------------------------------------------------- faults and recording


def test_status_fault_applies_n_times_then_reset_rearms_it(fake_model: FakeModelServer) -> None:
    fake_model.set_script({"routes": [route("go", reply("ok", fault={"status": 503, "times": 1}))]})
    url = f"{fake_model.base_url}/chat/completions"
    body = {"model": "m", "messages": [user("go")]}
    assert http(url, body)[0] == 503
    assert http(url, body)[0] == 200
    assert len(fake_model.requests()) == 2
    assert http(f"{fake_model.base_url.removesuffix('/v1')}/_reset", {})[0] == 200
    assert fake_model.requests() == []
    assert http(url, body)[0] == 503


def test_requests_are_recorded_and_served(fake_model: FakeModelServer) -> None:
    root = fake_model.base_url.removesuffix("/v1")
    chat(fake_model.base_url, [user("first")], temperature=0)
    status, raw = http(f"{root}/_requests")
    records = json.loads(raw)
    assert status == 200 and len(records) == 1
    assert records[0]["path"] == "/v1/chat/completions"
    assert records[0]["body"]["messages"] == [user("first")]
    assert records[0]["body"]["temperature"] == 0
    assert records[0]["headers"]["content-type"] == "application/json"
    assert fake_model.chat_bodies()[0]["messages"] == [user("first")]


def test_script_posted_at_runtime_is_validated(fake_model: FakeModelServer) -> None:
    root = fake_model.base_url.removesuffix("/v1")
    status, raw = http(f"{root}/_script", {"routes": [{"match": "a", "steps": [{"contnet": "x"}]}]})
    assert status == 400
    assert "routes[0].steps[0]: unknown key(s) contnet" in json.loads(raw)["error"]
    assert http(f"{root}/_script", {"routes": [route("a", reply("posted"))]})[0] == 200
    assert answer(fake_model.base_url, [user("a")])["content"] == "posted"


def test_parse_script_names_the_bad_place() -> None:
    with pytest.raises(ScriptError, match=r"routes\[0\]\.steps\[1\]\.fault: expected exactly one"):
        parse_script(
            {"routes": [route("a", reply("x"), reply("y", fault={"hang": True, "status": 500}))]}
        )
    with pytest.raises(ScriptError, match=r"routes\[0\]\.steps: expected a non-empty list"):
        parse_script({"routes": [{"match": "a", "steps": []}]})


def test_stop_ends_a_hanging_reply() -> None:
    server = FakeModelServer({"routes": [route("go", reply("never", fault={"hang": True}))]})
    url = server.start()
    outcome: list[object] = []

    def request() -> None:
        try:
            outcome.append(
                http(f"{url}/chat/completions", {"model": "m", "messages": [user("go")]})
            )
        except Exception as error:  # the connection is closed under it
            outcome.append(error)

    thread = threading.Thread(target=request)
    thread.start()
    until_blocking(server.requests, 5, "the request")  # recorded, then held: it hangs now
    started = time.monotonic()
    server.stop()
    thread.join(5)
    assert not thread.is_alive() and outcome
    assert time.monotonic() - started < 2


# --------------------------------------------------------------------------- CLI


def test_cli_prints_its_url_and_answers(tmp_path: Path) -> None:
    script_file = tmp_path / "script.json"
    script_file.write_text(json.dumps({"routes": [route("ping", reply("pong"))]}))
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "wave_ls",
            "fake-model",
            "--port",
            "0",
            "--script",
            str(script_file),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        first_line = process.stdout.readline().strip()
        found = re.fullmatch(r"listening on (http://127\.0\.0\.1:\d+/v1)", first_line)
        assert found, first_line
        assert answer(found.group(1), [user("ping")])["content"] == "pong"
    finally:
        process.terminate()
        process.wait(5)


def test_cli_rejects_an_invalid_script(tmp_path: Path) -> None:
    script_file = tmp_path / "script.json"
    script_file.write_text(json.dumps({"routs": []}))
    result = subprocess.run(
        [sys.executable, "-m", "wave_ls", "fake-model", "--script", str(script_file)],
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2
    assert result.stdout == ""
    assert "unknown key(s) routs" in result.stderr
