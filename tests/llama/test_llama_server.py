"""wave-ls against a real llama.cpp ``llama-server`` (issue 27, point 1): a streamed answer
with usage over LSP and through ``wave-ls run``, the window read from the server, a tool call
run end to end, and a request longer than the window compacted and sent again.

The tests assert on what wave-ls does, never on what a 135 M model happens to say.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.llama.conftest import LlamaServer
from tests.support.lsp import server_env, wave_client

# Two CPU threads read the main agent's first request (~7 K tokens) in about 50 s.
pytestmark = pytest.mark.timeout(900)
CUT_OFF = "cut off by the output limit"


def env_for(home: Path, llama: LlamaServer) -> dict[str, str]:
    return server_env(
        home,
        OPENAI_BASE_URL=llama.base_url,
        WAVE_MODEL=llama.model,
        # Two CPU threads read a 7 K-token prompt in 20-60 s, and send nothing meanwhile.
        WAVE_MODEL_FIRST_TOKEN_TIMEOUT="900",
        WAVE_MODEL_TIMEOUT="120",
    )


def settings(project: Path, data: dict[str, Any]) -> None:
    folder = project / ".wave"
    folder.mkdir(exist_ok=True)
    (folder / "settings.local.json").write_text(json.dumps(data), encoding="utf-8")


def ended_as_wave_ls_says(result: dict[str, Any]) -> None:
    """A turn ends with an answer, or failed saying the answer was cut off (a small model
    may ramble up to ``max_tokens`` twice): never an error of another kind."""
    assert result["status"] == "completed" or CUT_OFF in (result.get("error") or ""), result


async def test_a_streamed_answer_with_usage_and_the_servers_window(
    llama: LlamaServer, home: Path, project: Path
) -> None:
    settings(project, {"model": {"maxTokens": 48, "temperature": 0}})
    async with wave_client(env_for(home, llama)) as client:
        sid = (await client.request("wave/session/new", {"cwd": str(project)}))["sessionId"]
        result = await client.request("wave/chat/send", {"sessionId": sid, "text": "Say hello."})
        updates = client.updates_for(sid)
    ended_as_wave_ls_says(result)
    kinds = [u["kind"] for u in updates]
    assert "assistantDelta" in kinds and kinds[-1] == "turnEnded"
    usage = [u for u in updates if u["kind"] == "usage"]
    # The system prompt and the tool schemas were counted: the template kept the tools.
    assert usage and usage[0]["usage"]["prompt_tokens"] > 3_000
    assert not [u for u in updates if u["kind"] == "notice"]
    # The window is what the server runs with (its /props n_ctx).
    windows = {u["windowTokens"] for u in updates if u["kind"] == "contextUsage"}
    assert windows == {llama.n_ctx}


def test_wave_ls_run_streams_an_answer(llama: LlamaServer, home: Path, project: Path) -> None:
    settings(project, {"model": {"maxTokens": 48, "temperature": 0}})
    done = subprocess.run(
        [sys.executable, "-m", "wave_ls", "run", "Say hello.", "--cwd", str(project)],
        env=env_for(home, llama),
        capture_output=True,
        text=True,
        timeout=900,
        stdin=subprocess.DEVNULL,
    )
    if done.returncode == 0:
        assert done.stdout.strip(), done.stderr
    else:
        assert CUT_OFF in done.stderr, done.stderr
    assert "tokens" in done.stderr


async def test_a_tool_call_runs_end_to_end(llama: LlamaServer, home: Path, project: Path) -> None:
    # A 135 M model rarely calls a tool of its own accord. toolChoice "required" has llama.cpp
    # constrain the answer with a grammar from the schemas, which still lets the model write
    # text first (it rambles to max_tokens); replyPrefix starts the reply with the template's
    # "<tool_call>" (llama.cpp's prefill): the grammar then holds from the first token.
    model = {"maxTokens": 200, "temperature": 0, "toolChoice": "required"}
    settings(project, {"model": {**model, "replyPrefix": "<tool_call>\n"}})
    async with wave_client(env_for(home, llama)) as client:
        new = {"cwd": str(project), "permissionMode": "plan"}  # nothing it calls can change files
        sid = (await client.request("wave/session/new", new))["sessionId"]
        _id, turn = client.start_request(
            "wave/chat/send", {"sessionId": sid, "text": "List the files of this project."}
        )
        block = await client.wait_update(
            lambda u: (
                u.get("sessionId") == sid
                and u["kind"] == "toolBlock"
                and u["status"] in ("completed", "failed")
            ),
            timeout=900,
        )
        # Past the first round the choice is the model's: stop the turn there.
        await client.request("wave/session/cancel", {"sessionId": sid})
        await turn
        messages = (await client.request("wave/session/messages", {"sessionId": sid}))["messages"]
    calls = [c for m in messages if m["role"] == "assistant" for c in m.get("tool_calls") or []]
    assert calls and calls[0]["id"] == block["toolCallId"]
    assert isinstance(json.loads(calls[0]["function"]["arguments"]), dict)
    answered = [m for m in messages if m["role"] == "tool" and m["tool_call_id"] == calls[0]["id"]]
    assert len(answered) == 1 and answered[0]["content"] == block["result"]


async def test_a_request_longer_than_the_window_is_compacted_and_sent_again(
    llama: LlamaServer, home: Path, project: Path
) -> None:
    # The settings claim a far larger window than the server's: the request goes out, the
    # server refuses it for its length, and wave-ls compacts and sends it again once.
    settings(
        project,
        {"model": {"maxTokens": 32, "temperature": 0}, "context": {"windowTokens": 100_000}},
    )
    # ~4.5 K tokens of plain words: with the ~7 K of the system prompt and tools, more than
    # the window (numbered words would be denser than the estimate: ~4 tokens each).
    words = "The quick brown fox jumps over the lazy dog. " * 450
    async with wave_client(env_for(home, llama)) as client:
        sid = (await client.request("wave/session/new", {"cwd": str(project)}))["sessionId"]
        first = await client.request("wave/chat/send", {"sessionId": sid, "text": "Say hi."})
        ended_as_wave_ls_says(first)
        result = await client.request(
            "wave/chat/send", {"sessionId": sid, "text": f"Count these words: {words}"}
        )
        compacted = client.updates_for(sid, "compacted")
        usage = client.updates_for(sid, "contextUsage")
        messages = (await client.request("wave/session/messages", {"sessionId": sid}))["messages"]
    assert len(compacted) == 1
    assert compacted[0]["tokensAfter"] < llama.n_ctx
    # The refusal named the server's window: believed from then on.
    assert usage[-1]["windowTokens"] == llama.n_ctx
    ended_as_wave_ls_says(result)
    assert [m for m in messages if (m.get("meta") or {}).get("kind") == "compacted"]
    assert any(m["content"] == "Say hi." for m in messages)  # the transcript keeps it all
