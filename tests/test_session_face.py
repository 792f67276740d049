"""The session's face for the adapters (issue 29 point 2): one way to open a saved session
again (``session.open_saved``), the session's own properties instead of its conversation,
the turn limit as a typed field, and one ``close_all`` for every session at once.

The resume is checked end to end over both adapters, a real ``wave-ls`` and a real
``wave-ls acp`` each, against the offline model; the rest on the SDK, in process."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

import pytest
from acp import RequestError
from acp.helpers import text_block

import wave_ls
from tests.support.acp_client import acp_agent
from tests.support.fake_model import FakeModelServer, call, reply, route
from tests.support.lsp import server_env, wave_client
from wave_ls.runtime.core import Message
from wave_ls.runtime.settings import UNCONFIGURED_MODEL
from wave_ls.runtime.transcript import TranscriptWriter, read_saved, transcript_path
from wave_ls.session import CannotResume, Resume, close_all, open_saved

ADAPTERS = [Path(wave_ls.__file__).parent / name for name in ("server", "acp")]


def adapter_modules() -> list[Path]:
    return sorted(path for folder in ADAPTERS for path in folder.rglob("*.py"))


def names_used(path: Path) -> set[str]:
    """Every attribute and name a module uses."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.Name):
            found.add(node.id)
        elif isinstance(node, ast.alias):
            found.add(node.name)
    return found


# ------------------------------------------------------------------ the adapters' reach


def test_the_adapters_never_reach_into_the_conversation() -> None:
    reaching = [p.name for p in adapter_modules() if "conversation" in names_used(p)]
    assert reaching == [], "use the session's own properties (AgentSession.permission_mode...)"


def test_both_adapters_resume_through_open_saved_only() -> None:
    root = Path(wave_ls.__file__).parent
    for adapter in (root / "server" / "sessions_feature.py", root / "acp" / "agent.py"):
        assert "open_saved" in names_used(adapter), adapter
    readers = {"load_transcript", "read_saved", "resume_messages", "SavedHeader"}
    reading = {p.name: readers & names_used(p) for p in adapter_modules()}
    assert {name: found for name, found in reading.items() if found} == {}


def test_the_acp_turn_limit_is_read_from_the_turn_result_not_its_text() -> None:
    agent = Path(wave_ls.__file__).parent / "acp" / "agent.py"
    assert "limit_reached" in names_used(agent)
    assert "stopped after" not in agent.read_text(encoding="utf-8")


# ------------------------------------------------------------------ resume, end to end


async def save_without_a_model_over_lsp(home: Path, project: Path) -> str:
    """A session saved in plan mode by a server that had no model configured."""
    async with wave_client(server_env(home)) as client:
        opened = await client.request(
            "wave/session/new", {"cwd": str(project), "permissionMode": "plan"}
        )
        sid: str = opened["sessionId"]
        first = await client.request("wave/chat/send", {"sessionId": sid, "text": "hi"})
        assert first["status"] == "failed" and "OPENAI_BASE_URL" in first["error"]
    saved = read_saved(home, sid)
    assert saved is not None and saved.header.model == UNCONFIGURED_MODEL
    return sid


async def test_a_session_saved_without_a_model_resumes_with_the_configured_one_over_lsp_and_acp(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    sid = await save_without_a_model_over_lsp(home, project)
    fake_model.set_script(
        {"routes": [route("over lsp", reply("LSP answer.")), route("over acp", reply("ACP."))]}
    )
    env = server_env(home, fake_model.base_url)
    async with wave_client(env) as client:
        resumed = await client.request("wave/session/new", {"sessionId": sid})
        assert resumed == {"sessionId": sid, "resumed": True}
        now = await client.request("wave/session/configure", {"sessionId": sid})
        assert now == {"permissionMode": "plan", "model": "test-model"}
        answer = await client.request("wave/chat/send", {"sessionId": sid, "text": "over lsp"})
        assert answer["status"] == "completed", answer
        assert await client.request("wave/session/close", {"sessionId": sid}) == {"closed": True}
    async with acp_agent(env) as agent:
        loaded = await agent.conn.load_session(cwd=str(project), session_id=sid, mcp_servers=[])
        assert loaded.modes is not None and loaded.modes.current_mode_id == "plan"
        response = await asyncio.wait_for(
            agent.conn.prompt(session_id=sid, prompt=[text_block("over acp")]), 60
        )
        assert response.stop_reason == "end_turn"
    bodies = fake_model.chat_bodies()
    assert [body["model"] for body in bodies] == ["test-model", "test-model"]
    assert all(body["model"] != UNCONFIGURED_MODEL for body in bodies)


async def test_a_session_saved_without_a_model_over_acp_resumes_with_the_configured_one(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    async with acp_agent(server_env(home)) as agent:
        sid = (await agent.conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        with pytest.raises(RequestError, match="OPENAI_BASE_URL"):
            await agent.conn.prompt(session_id=sid, prompt=[text_block("hi")])
    fake_model.set_script({"routes": [route("again", reply("Hello again."))]})
    async with acp_agent(server_env(home, fake_model.base_url)) as agent:
        await agent.conn.resume_session(cwd=str(project), session_id=sid, mcp_servers=[])
        response = await asyncio.wait_for(
            agent.conn.prompt(session_id=sid, prompt=[text_block("again")]), 60
        )
        assert response.stop_reason == "end_turn"
    [body] = fake_model.chat_bodies()
    assert body["model"] == "test-model"


async def test_the_turn_limit_is_max_turn_requests_over_acp(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    from wave_ls.runtime.loop import DEFAULT_MAX_ROUNDS

    again = reply("", call("Glob", {"pattern": "README.md"}))
    fake_model.set_script({"routes": [route("go round", *[again] * (DEFAULT_MAX_ROUNDS + 1))]})
    async with acp_agent(server_env(home, fake_model.base_url)) as agent:
        sid = (await agent.conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        response = await asyncio.wait_for(
            agent.conn.prompt(session_id=sid, prompt=[text_block("go round")]), 120
        )
        assert response.stop_reason == "max_turn_requests"
    assert len(fake_model.chat_bodies()) == DEFAULT_MAX_ROUNDS


# ------------------------------------------------------------------ open_saved, in process


def saved_session(home: Path, cwd: Path, model: str, **extra: str) -> str:
    with TranscriptWriter(transcript_path(home, "s1"), fsync=False) as writer:
        writer.write_header(session_id="s1", cwd=cwd, model=model, **extra)
        writer.append(Message("user", "hello"))
    return "s1"


async def test_open_saved_decides_folder_model_and_mode(home: Path, project: Path) -> None:
    sid = saved_session(home, project, UNCONFIGURED_MODEL, permission_mode="acceptEdits")
    resumed = await open_saved(home, sid, lambda r: r, configured_model="configured")
    messages = [Message("user", "hello")]
    assert resumed == Resume(sid, project.resolve(), "configured", "acceptEdits", messages)
    elsewhere = (project / "src").resolve()
    chosen = await open_saved(
        home,
        sid,
        lambda r: r,
        cwd=str(elsewhere),
        model="client-model",
        permission_mode="plan",
        configured_model="configured",
    )
    assert (chosen.cwd, chosen.model, chosen.permission_mode) == (elsewhere, "client-model", "plan")
    # Nothing configured either: the placeholder, which fails the first turn with what to set.
    nothing = await open_saved(home, sid, lambda r: r)
    assert nothing.model == UNCONFIGURED_MODEL


async def test_open_saved_without_a_usable_saved_mode_takes_the_default(
    home: Path, project: Path
) -> None:
    sid = saved_session(home, project, "saved-model", permission_mode="yolo")
    resumed = await open_saved(home, sid, lambda r: r, default_mode="bypassPermissions")
    assert (resumed.model, resumed.permission_mode) == ("saved-model", "bypassPermissions")


async def test_open_saved_says_why_it_cannot(home: Path, tmp_path: Path) -> None:
    with pytest.raises(CannotResume, match=r"invalid sessionId '\.\./x'"):
        await open_saved(home, "../x", lambda r: r)
    with pytest.raises(CannotResume, match="no saved session 'nope'"):
        await open_saved(home, "nope", lambda r: r)
    gone = tmp_path / "gone"
    sid = saved_session(home, gone, "m")
    with pytest.raises(CannotResume, match="'cwd' is not a directory"):
        await open_saved(home, sid, lambda r: r)


# ------------------------------------------------------------------ close_all


async def test_close_all_ends_every_session_at_once() -> None:
    # Each ending waits for the other to have started: one after the other never ends.
    started = {name: asyncio.Event() for name in ("a", "b")}

    async def close(name: str) -> None:
        started[name].set()
        await started["b" if name == "a" else "a"].wait()

    await asyncio.wait_for(close_all(["a", "b"], close), 10)


async def test_close_all_goes_on_past_a_session_that_fails_to_close() -> None:
    closed: list[str] = []

    async def close(name: str) -> None:
        if name == "broken":
            raise RuntimeError("a broken session")
        closed.append(name)

    await close_all(["a", "broken", "b"], close)
    assert sorted(closed) == ["a", "b"]
