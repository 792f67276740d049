"""Oversized and unusable params are InvalidParams, and an ``@`` word of any length is
answered at once (issue 12, defect 5)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from tests.support.lsp import server_env, wave_client

HUGE = "/" + "x" * 10_000_000


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("wave/session/new", {"cwd": HUGE}),
        ("wave/agents/list", {"cwd": HUGE}),
        ("wave/worktrees/list", {"cwd": HUGE}),
        ("wave/session/new", {"cwd": "/tmp/\0nul"}),
        ("wave/agents/list", {"cwd": "/" + "y" * 300}),  # one name over NAME_MAX
    ],
    ids=["session-new-10MB", "agents-list-10MB", "worktrees-list-10MB", "nul", "name-too-long"],
)
async def test_an_unusable_cwd_is_invalid_params(
    method: str, params: dict[str, str], home: Path
) -> None:
    async with wave_client(server_env(home)) as client:
        with pytest.raises(JsonRpcException) as raised:
            await client.request(method, params)
        assert raised.value.code == -32602
        assert len(str(raised.value)) < 2000  # the path is not echoed whole
        assert (await client.request("wave/agents/list", {}))["agents"]


async def test_an_at_word_of_any_length_is_answered_at_once(home: Path, project: Path) -> None:
    async with wave_client(server_env(home), root=project) as client:
        warm = await client.request("wave/chatInput/completion", {"text": "@src"})
        assert any(item["label"] == "src/app.py" for item in warm["items"])
        for length in (300_000, 10_000_000):
            text = "see @" + "a" * length
            started = time.perf_counter()
            result = await client.request(
                "wave/chatInput/completion", {"text": text, "cursor": len(text)}
            )
            elapsed = time.perf_counter() - started
            assert result["items"] == []
            assert elapsed < 3, f"{length:,} characters took {elapsed:.1f} s"
        text = "see @" + "b" * 256
        result = await client.request("wave/chatInput/completion", {"text": text})
        assert result["items"] == []  # a query at the cap is still searched (no match)


async def test_a_cursor_outside_the_text_is_invalid_params(home: Path) -> None:
    async with wave_client(server_env(home)) as client:
        with pytest.raises(JsonRpcException) as raised:
            await client.request("wave/chatInput/completion", {"text": "@Ex", "cursor": 4})
        assert raised.value.code == -32602


async def test_a_model_id_over_the_limit_is_invalid_params(home: Path, project: Path) -> None:
    # issue 25 point 4: a 10 MB model was kept and sent with every model request.
    huge = "m" * 10_000_000
    async with wave_client(server_env(home)) as client:
        with pytest.raises(JsonRpcException) as raised:
            await client.request("wave/session/new", {"cwd": str(project), "model": huge})
        assert raised.value.code == -32602 and "at most 1,024" in str(raised.value)
        assert len(str(raised.value)) < 2000
        sid = (await client.request("wave/session/new", {"cwd": str(project)}))["sessionId"]
        with pytest.raises(JsonRpcException) as raised:
            await client.request("wave/session/configure", {"sessionId": sid, "model": huge})
        assert raised.value.code == -32602 and "'model'" in str(raised.value)
        kept = await client.request("wave/session/configure", {"sessionId": sid})
        assert kept["model"] != huge
        longest = "m" * 1024
        changed = await client.request(
            "wave/session/configure", {"sessionId": sid, "model": longest}
        )
        assert changed["model"] == longest
