"""An approved plan survives a resume (PLAN-5): ``ExitPlanMode``'s switch out of plan mode is
kept in the transcript the way a ``wave/session/configure`` is, so a session opened again
after the approval is in ``default`` mode, not back in ``plan``.

Over LSP, a real ``wave-ls`` against the offline model, resumed by a second server."""

from __future__ import annotations

from pathlib import Path

from tests.support.fake_model import FakeModelServer, call, reply, route
from tests.support.lsp import capabilities, server_env, wave_client
from wave_ls.runtime.transcript import read_saved


async def test_a_session_resumed_after_an_approved_plan_is_out_of_plan_mode(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(
        {
            "routes": [
                route(
                    "plan it",
                    reply("", call("ExitPlanMode", {"plan": "1. Return 42."})),
                    reply("Planned."),
                ),
                route("go on", reply("Done.")),
            ]
        }
    )
    env = server_env(home, fake_model.base_url)
    async with wave_client(env, caps=capabilities(permission=True)) as client:
        client.permission_answer = lambda p: {"allowed": p["toolName"] == "ExitPlanMode"}
        params = {"cwd": str(project), "permissionMode": "plan"}
        sid = (await client.request("wave/session/new", params))["sessionId"]
        result = await client.request("wave/chat/send", {"sessionId": sid, "text": "plan it"})
        assert result["status"] == "completed", result
        assert [r["toolName"] for r in client.permission_requests] == ["ExitPlanMode"]
        now = await client.request("wave/session/configure", {"sessionId": sid})
        assert now["permissionMode"] == "default"
    saved = read_saved(home, sid)
    assert saved is not None and saved.header.permission_mode == "default"
    async with wave_client(env) as client:
        resumed = await client.request("wave/session/new", {"sessionId": sid})
        assert resumed == {"sessionId": sid, "resumed": True}
        now = await client.request("wave/session/configure", {"sessionId": sid})
        assert now["permissionMode"] == "default"
        result = await client.request("wave/chat/send", {"sessionId": sid, "text": "go on"})
        assert result["status"] == "completed", result


async def test_a_refused_plan_leaves_the_saved_session_in_plan_mode(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(
        {
            "routes": [
                route(
                    "plan it",
                    reply("", call("ExitPlanMode", {"plan": "1. Return 42."})),
                    reply("Not yet."),
                )
            ]
        }
    )
    env = server_env(home, fake_model.base_url)
    async with wave_client(env, caps=capabilities(permission=True)) as client:
        client.permission_answer = lambda p: {"allowed": False}
        params = {"cwd": str(project), "permissionMode": "plan"}
        sid = (await client.request("wave/session/new", params))["sessionId"]
        result = await client.request("wave/chat/send", {"sessionId": sid, "text": "plan it"})
        assert result["status"] == "completed", result
    async with wave_client(env) as client:
        await client.request("wave/session/new", {"sessionId": sid})
        now = await client.request("wave/session/configure", {"sessionId": sid})
        assert now["permissionMode"] == "plan"
