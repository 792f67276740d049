"""The ``LSP`` tool asks the editor through ``wave/editor/lsp`` when the client offers it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pygls.uris import from_fs_path

from tests.support.fake_model import FakeModelServer, call, reply, route
from tests.support.lsp import capabilities, server_env, wave_client

SCRIPT = {
    "routes": [
        route(
            "where is answer defined",
            reply(
                "",
                call(
                    "LSP",
                    {
                        "operation": "goToDefinition",
                        "filePath": "src/app.py",
                        "line": 2,
                        "character": 12,
                    },
                ),
            ),
            reply("In src/app.py."),
        )
    ]
}


def tool_result(fake: FakeModelServer) -> str:
    return next(m["content"] for m in fake.chat_bodies()[-1]["messages"] if m["role"] == "tool")


async def test_a_client_with_editor_lsp_answers_the_tool(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(SCRIPT)
    target = from_fs_path(str(project / "src" / "app.py"))
    location = {
        "uri": target,
        "range": {"start": {"line": 0, "character": 4}, "end": {"line": 0, "character": 10}},
    }
    async with wave_client(
        server_env(home, fake_model.base_url), caps=capabilities(editor_lsp=True)
    ) as client:
        client.editor_lsp_answer = lambda _params: [location]
        sid = (await client.request("wave/session/new", {"cwd": str(project)}))["sessionId"]
        result = await client.request(
            "wave/chat/send", {"sessionId": sid, "text": "where is answer defined?"}
        )
        assert result["text"] == "In src/app.py."
        [asked] = client.editor_lsp_requests
    assert asked["sessionId"] == sid and asked["operation"] == "goToDefinition"
    params: dict[str, Any] = asked["params"]
    assert params["textDocument"]["uri"] == target
    assert params["position"] == {"line": 1, "character": 11}  # 0-based for the editor
    answer = tool_result(fake_model)
    assert "src/app.py:1" in answer


async def test_without_the_capability_the_tool_says_not_available(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(SCRIPT)
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        sid = (await client.request("wave/session/new", {"cwd": str(project)}))["sessionId"]
        await client.request(
            "wave/chat/send", {"sessionId": sid, "text": "where is answer defined?"}
        )
        assert client.editor_lsp_requests == []
    assert "not available" in tool_result(fake_model)
