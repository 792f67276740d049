"""Model tiers end to end over LSP: the real server, the offline fake model; what the
subagent's requests carried and what the client was told (issue 24 point 3; PROTOCOL.md
"Added for Claude Code users": the ``model`` field of the subagent's requests is the
resolved id)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.fake_model import FakeModelServer, call, reply, route
from tests.support.lsp import capabilities, progress_settled, server_env, wave_client

REVIEWER = """\
---
name: reviewer
description: Reviews code.
model: {model}
---
You review.
"""


def setup(project: Path, model: str, fake: FakeModelServer) -> None:
    wave = project / ".wave" / "agents"
    wave.mkdir(parents=True, exist_ok=True)
    (wave / "reviewer.md").write_text(REVIEWER.format(model=model), encoding="utf-8")
    args = {"description": "Review", "prompt": "REVIEW TASK", "subagent_type": "reviewer"}
    fake.set_script(
        {
            "routes": [
                route("please review", reply("", call("Agent", args)), reply("main done")),
                route("REVIEW TASK", reply("looks fine")),
            ]
        }
    )


async def delegate(
    fake: FakeModelServer, home: Path, project: Path, **env: str
) -> tuple[list[str], dict[str, Any], Any]:
    """One turn that delegates to ``reviewer``: the models of the subagent's requests, the
    last details of its block, and the client."""
    async with wave_client(server_env(home, fake.base_url, **env), caps=capabilities()) as client:
        sid = (await client.request("wave/session/new", {"cwd": str(project)}))["sessionId"]
        result = await client.request("wave/chat/send", {"sessionId": sid, "text": "please review"})
        assert result["status"] == "completed", result
        await progress_settled(client)
    models = [
        body["model"]
        for body in fake.chat_bodies()
        if any("REVIEW TASK" in (m.get("content") or "") for m in body["messages"][1:2])
    ]
    blocks = [u for u in client.updates if u["kind"] == "toolBlock" and u["name"] == "Agent"]
    assert blocks[-1]["status"] == "completed"
    return models, blocks[-1]["details"], client


def begin_titles(client: Any) -> list[str]:
    return [
        report.title
        for token, reports in client.progress_reports.items()
        if str(token).startswith("wave/agent/")
        for report in reports
        if report.kind == "begin"
    ]


async def test_a_mapped_tier_sends_the_mapped_id(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    setup(project, "sonnet", fake_model)
    (project / ".wave" / "settings.json").write_text(
        json.dumps({"models": {"sonnet": "mapped-sonnet"}}), encoding="utf-8"
    )
    models, details, client = await delegate(fake_model, home, project)
    assert models == ["mapped-sonnet"]
    assert details["model"] == "mapped-sonnet"
    assert details["modelNote"] == "sonnet -> mapped-sonnet (settings: models.sonnet)"
    assert begin_titles(client) == [
        "reviewer: Review (sonnet -> mapped-sonnet (settings: models.sonnet))"
    ]
    main = [b for b in fake_model.chat_bodies() if "please review" in str(b["messages"][1:2])]
    assert {body["model"] for body in main} == {"test-model"}  # the session's own is unchanged


async def test_an_unmapped_tier_runs_on_the_sessions_model(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    setup(project, "sonnet", fake_model)
    models, details, client = await delegate(fake_model, home, project)
    assert models == ["test-model"]
    assert details["model"] == "test-model"
    assert details["modelNote"] == "sonnet -> inherit: no model set for this tier"
    assert begin_titles(client) == [
        "reviewer: Review (sonnet -> inherit: no model set for this tier)"
    ]


async def test_the_environment_wins_and_claude_ids_map_by_their_tier(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    setup(project, "claude-sonnet-4-5-20250929", fake_model)
    (project / ".wave" / "settings.json").write_text(
        json.dumps({"models": {"sonnet": "from-settings"}}), encoding="utf-8"
    )
    models, details, _ = await delegate(fake_model, home, project, WAVE_MODEL_SONNET="from-env")
    assert models == ["from-env"]
    assert details["modelNote"] == (
        "claude-sonnet-4-5-20250929 (sonnet) -> from-env (env: WAVE_MODEL_SONNET)"
    )


async def test_haiku_falls_back_to_wave_fast_model(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    setup(project, "haiku", fake_model)
    models, details, _ = await delegate(fake_model, home, project, WAVE_FAST_MODEL="quick")
    assert models == ["quick"]
    assert details["modelNote"] == "haiku -> quick (env: WAVE_FAST_MODEL)"


async def test_an_id_the_endpoint_does_not_serve_still_fails_clearly(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # SPEC section 1: a model the endpoint does not serve fails the delegation, with why.
    setup(project, "fable", fake_model)
    args = {"description": "Review", "prompt": "REVIEW TASK", "subagent_type": "reviewer"}
    fake_model.set_script(
        {
            "models": ["test-model"],
            "routes": [
                route("please review", reply("", call("Agent", args)), reply("main done")),
                route("REVIEW TASK", reply("looks fine")),
            ],
        }
    )
    env = server_env(home, fake_model.base_url)
    async with wave_client(env, caps=capabilities()) as client:
        sid = (await client.request("wave/session/new", {"cwd": str(project)}))["sessionId"]
        await client.request("wave/chat/send", {"sessionId": sid, "text": "please review"})
    blocks = [u for u in client.updates if u["kind"] == "toolBlock" and u["name"] == "Agent"]
    assert blocks[-1]["status"] == "failed"
    assert blocks[-1]["details"]["model"] == "fable"
    assert "modelNote" not in blocks[-1]["details"]
    assert "Agent delegation failed" in blocks[-1]["result"]
    assert "fable" in blocks[-1]["result"]
