"""The offline model for tests: a pytest fixture and tiny script builders.

Use it as a plugin (``pytest_plugins = ["tests.support.fake_model"]``) or import the fixture::

    async def test_answer(fake_model: FakeModelServer) -> None:
        fake_model.set_script({"routes": [route("hello", reply("Hi!"))]})
        client = OpenAIModelClient(fake_model.base_url, "test-key")
        ...
        assert fake_model.chat_bodies()[0]["messages"][-1]["content"] == "hello"

For a server in a subprocess, pass ``model_env(fake_model)`` in its environment.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from wave_ls.fake_model import FakeModelServer

__all__ = ["FakeModelServer", "call", "fake_model", "model_env", "reply", "route"]

TEST_MODEL = "fake-model"


@pytest.fixture
def fake_model() -> Iterator[FakeModelServer]:
    """A started fake model server (no script: every request gets the default reply)."""
    with FakeModelServer() as server:
        yield server


def model_env(server: FakeModelServer, model: str = TEST_MODEL) -> dict[str, str]:
    """Environment variables pointing a wave-ls process at ``server``."""
    return {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "test-key", "WAVE_MODEL": model}


def call(
    name: str, arguments: dict[str, Any] | None = None, id: str | None = None
) -> dict[str, Any]:
    """A scripted tool call."""
    out: dict[str, Any] = {"name": name, "arguments": arguments or {}}
    if id is not None:
        out["id"] = id
    return out


def reply(content: str = "", *calls: dict[str, Any], **options: Any) -> dict[str, Any]:
    """A scripted step: text, tool calls, and any other step option (``fault=...``)."""
    step: dict[str, Any] = {"content": content, **options}
    if calls:
        step["tool_calls"] = list(calls)
    return step


def route(match: str, *steps: dict[str, Any], system: str | None = None) -> dict[str, Any]:
    """A scripted route: its anchor text and its steps."""
    out: dict[str, Any] = {"match": match, "steps": list(steps)}
    if system is not None:
        out["system"] = system
    return out
