"""Bad ``initializationOptions`` fall back to their defaults and are shown to the user
(``window/showMessage``); the server starts and answers (issue 12, defect 4)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_model import FakeModelServer, reply, route
from tests.support.lsp import server_env, wave_client
from tests.support.waiting import until


def bad_options(tmp_path: Path) -> dict[str, tuple[dict[str, Any], str]]:
    return {
        "log-file-in-missing-dir": (
            {"logFile": str(tmp_path / "missing" / "x.log")},
            "cannot write the log file",
        ),
        "log-file-is-a-directory": ({"logFile": str(tmp_path)}, "cannot write the log file"),
        "log-level-not-a-level": ({"logLevel": "basic_format"}, "is not one of DEBUG"),
        "log-level-not-text": ({"logLevel": 3}, "logLevel must be a string"),
        "permission-mode": ({"permissionMode": "yolo"}, "permissionMode 'yolo'"),
        "not-an-object": ([1, 2], "must be an object"),  # type: ignore[dict-item]
        "model-too-long": ({"model": "m" * 100_000}, "a model id has at most 1,024"),
    }


CASES = [
    "log-file-in-missing-dir",
    "log-file-is-a-directory",
    "log-level-not-a-level",
    "log-level-not-text",
    "permission-mode",
    "not-an-object",
    "model-too-long",
]


@pytest.mark.parametrize("case", CASES)
async def test_a_bad_option_falls_back_and_is_shown(
    case: str, home: Path, project: Path, tmp_path: Path
) -> None:
    options, expected = bad_options(tmp_path)[case]
    async with wave_client(server_env(home), init_options=options) as client:
        listed = await client.request("wave/agents/list", {"cwd": str(project)})
        assert any(agent["name"] == "Explore" for agent in listed["agents"])
        await until(lambda: client.messages, 5, "a message shown")
        shown = [message.message for message in client.messages]
        assert any(expected in text for text in shown), shown
        assert all(text.startswith("wave-ls: ") for text in shown)


async def test_a_good_log_file_gets_the_logs(home: Path, tmp_path: Path) -> None:
    log_file = tmp_path / "wave.log"
    options = {"logFile": str(log_file), "logLevel": "debug"}
    async with wave_client(server_env(home), init_options=options) as client:
        await client.request("wave/agents/list", {})
        assert client.messages == []
    assert log_file.exists()


async def test_model_timeout_and_retries_come_from_the_environment(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script({"routes": [route("hello", reply("never", fault={"hang": True}))]})
    # Before any byte the wait is the first token's (issue 27): bounded the same here.
    env = server_env(
        home,
        fake_model.base_url,
        WAVE_MODEL_TIMEOUT="0.5",
        WAVE_MODEL_RETRIES="0",
        WAVE_MODEL_FIRST_TOKEN_TIMEOUT="0.5",
    )
    async with wave_client(env) as client:
        sid = (await client.request("wave/session/new", {"cwd": str(project)}))["sessionId"]
        result = await asyncio.wait_for(
            client.request("wave/chat/send", {"sessionId": sid, "text": "hello"}), 20
        )
        assert result["status"] == "failed"
        assert "sent nothing for 0.5 s; gave up after 1 s in all" in result["error"]
    assert len(fake_model.chat_bodies()) == 1


async def test_initialization_options_override_the_model_timeout(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script({"routes": [route("hello", reply("never", fault={"hang": True}))]})
    env = server_env(
        home, fake_model.base_url, WAVE_MODEL_TIMEOUT="100", WAVE_MODEL_FIRST_TOKEN_TIMEOUT="0.4"
    )
    options = {"modelTimeout": 0.4, "modelRetries": 1}
    async with wave_client(env, init_options=options) as client:
        sid = (await client.request("wave/session/new", {"cwd": str(project)}))["sessionId"]
        result = await asyncio.wait_for(
            client.request("wave/chat/send", {"sessionId": sid, "text": "hello"}), 20
        )
        assert "sent nothing for 0.4 s on each of 2 attempts" in result["error"]
    assert len(fake_model.chat_bodies()) == 2


@pytest.mark.parametrize(
    ("env", "options", "expected"),
    [
        ({"WAVE_MODEL_TIMEOUT": "soon"}, None, "WAVE_MODEL_TIMEOUT='soon' is not a number"),
        ({"WAVE_MODEL_RETRIES": "-1"}, None, "WAVE_MODEL_RETRIES='-1' is not a whole number"),
        ({}, {"modelTimeout": "60"}, "modelTimeout '60' is not a number"),
        ({}, {"modelRetries": 2.5}, "modelRetries 2.5 is not a whole number"),
    ],
)
async def test_a_bad_model_patience_setting_is_shown(
    env: dict[str, str], options: Any, expected: str, home: Path
) -> None:
    async with wave_client(server_env(home, **env), init_options=options) as client:
        await client.request("wave/agents/list", {})
        await until(lambda: client.messages, 5, "a message shown")
        assert any(expected in message.message for message in client.messages), client.messages
