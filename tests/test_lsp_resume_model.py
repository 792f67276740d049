"""A session saved before any model was configured, resumed over LSP once one is: its
requests name the configured model, never the placeholder it was saved with (issue 28
point 11; ``runtime/settings.session_model``)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.fake_model import FakeModelServer, reply, route
from tests.support.lsp import server_env, wave_client
from wave_ls.runtime.settings import UNCONFIGURED_MODEL


async def test_resumed_unconfigured_session_uses_the_configured_model(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    async with wave_client(server_env(home)) as client:  # no endpoint, no model
        opened = await client.request("wave/session/new", {"cwd": str(project)})
        session_id = opened["sessionId"]
        first = await client.request("wave/chat/send", {"sessionId": session_id, "text": "hi"})
        assert first["status"] == "failed" and "OPENAI_BASE_URL" in first["error"]
    [transcript] = (home / ".wave" / "sessions").glob("*.jsonl")
    header = json.loads(transcript.read_text().splitlines()[0])
    assert header["model"] == UNCONFIGURED_MODEL

    fake_model.set_script({"routes": [route("again", reply("Hello again."))]})
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        resumed = await client.request("wave/session/new", {"sessionId": session_id})
        assert resumed["resumed"] is True
        answer = await client.request("wave/chat/send", {"sessionId": session_id, "text": "again"})
        assert answer["status"] == "completed", answer
    [body] = fake_model.chat_bodies()
    assert body["model"] == "test-model"
