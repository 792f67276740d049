"""The runtime as a library (the SDK): ``AgentSession`` in-process, the real openai client,
the offline model over HTTP, real files."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_model import FakeModelServer, call, reply, route
from wave_ls.runtime.core import Event, ToolBlockUpdated, TurnEnded
from wave_ls.runtime.model_client import OpenAIModelClient
from wave_ls.session import AgentSession


class Recorder:
    def __init__(self) -> None:
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        self.events.append(event)


def session(fake: FakeModelServer, cwd: Path, home: Path, **options: Any) -> AgentSession:
    return AgentSession(
        cwd=cwd,
        home=home,
        model="test-model",
        client=OpenAIModelClient(fake.base_url, "k"),
        **options,
    )


@pytest.fixture
def slow_site() -> Iterator[str]:
    class Slow(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            time.sleep(0.8)  # the behaviour under test: slow pages, fetched side by side
            body = b"<html><body><p>slow page</p></body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Slow)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


async def test_multi_step_turn_edits_a_file(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(
        {
            "routes": [
                route(
                    "make it 42",
                    reply("", call("Read", {"file_path": "src/app.py"})),
                    reply(
                        "",
                        call(
                            "Edit",
                            {"file_path": "src/app.py", "old_string": "41", "new_string": "42"},
                        ),
                    ),
                    reply(
                        "",
                        call(
                            "Bash",
                            {"command": "cd src && python3 -c 'import app; print(app.answer())'"},
                        ),
                    ),
                    reply("Now it returns 42."),
                )
            ]
        }
    )
    recorder = Recorder()
    agent = session(
        fake_model, project, home, permission_mode="acceptEdits", sink=recorder, persist=False
    )
    # acceptEdits asks for Bash: answer yes through the asker interface
    from wave_ls.runtime.core import PermissionDecision, PermissionRequest

    asked: list[str] = []

    class Yes:
        async def ask(self, request: PermissionRequest) -> PermissionDecision:
            asked.append(request.summary)
            return PermissionDecision(True)

    agent.conversation.asker = Yes()
    result = await agent.send("make it 42")
    assert result.status == "completed" and result.text == "Now it returns 42."
    assert (project / "src/app.py").read_text() == "def answer():\n    return 42\n"
    assert asked and asked[0].startswith("Bash")
    bash_result = fake_model.chat_bodies()[3]["messages"][-1]["content"]
    assert "42" in bash_result
    finished = [
        e for e in recorder.events if isinstance(e, ToolBlockUpdated) and e.status == "completed"
    ]
    assert [e.name for e in finished] == ["Read", "Edit", "Bash"]
    assert isinstance(recorder.events[-1], TurnEnded)
    assert result.usage.total_tokens > 0


async def test_read_only_calls_of_one_message_run_concurrently(
    fake_model: FakeModelServer, home: Path, project: Path, slow_site: str
) -> None:
    fake_model.set_script(
        {
            "routes": [
                route(
                    "fetch three",
                    reply("", *(call("WebFetch", {"url": f"{slow_site}/{i}"}) for i in range(3))),
                    reply("fetched"),
                )
            ]
        }
    )
    agent = session(fake_model, project, home, persist=False)
    started = time.monotonic()
    result = await agent.send("fetch three")
    elapsed = time.monotonic() - started
    assert result.text == "fetched"
    results = [m["content"] for m in fake_model.chat_bodies()[1]["messages"] if m["role"] == "tool"]
    assert len(results) == 3 and all("slow page" in r for r in results)
    assert elapsed < 2.0, f"three 0.8 s fetches took {elapsed:.1f} s: they did not overlap"


async def test_unknown_tool_and_bad_arguments_come_back_to_the_model(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(
        {
            "routes": [
                route("try things", reply("", call("Teleport", {}), call("Read", {})), reply("ok"))
            ]
        }
    )
    await session(fake_model, project, home, persist=False).send("try things")
    results = [m["content"] for m in fake_model.chat_bodies()[1]["messages"] if m["role"] == "tool"]
    assert results[0] == "Tool 'Teleport' not found"
    assert "file_path" in results[1]


async def test_turn_limit_stops_a_looping_model(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(
        {"routes": [route("loop", *[reply("", call("Glob", {"pattern": "*"}))] * 10)]}
    )
    agent = session(fake_model, project, home, persist=False)
    agent.conversation.config.max_rounds = 3
    result = await agent.send("loop")
    assert result.status == "failed" and "turn limit" in (result.error or "")
    assert len(fake_model.chat_bodies()) == 3


async def test_memory_reaches_the_model_first(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    (project / "AGENTS.md").write_text("Always answer in French.\n")
    (home / ".wave").mkdir()
    (home / ".wave" / "AGENTS.md").write_text("The user is called Ada.\n")
    fake_model.set_script({"routes": [route("hello", reply("Bonjour"))]})
    await session(fake_model, project, home, persist=False).send("hello")
    messages = fake_model.chat_bodies()[0]["messages"]
    assert messages[0]["role"] == "system"
    assert messages[1]["role"] == "user" and "<system-reminder>" in messages[1]["content"]
    assert "Always answer in French." in messages[1]["content"]
    assert "The user is called Ada." in messages[1]["content"]
    assert messages[2] == {"role": "user", "content": "hello"}


async def test_plan_mode_allows_only_read_only_bash(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # PLAN-RO-3 in the main agent
    fake_model.set_script(
        {
            "routes": [
                route(
                    "look around",
                    reply(
                        "",
                        call("Bash", {"command": "ls src && touch hacked"}),
                        call("Bash", {"command": "git status --short"}),
                        call("Write", {"file_path": "x", "content": "y"}),
                    ),
                    reply("done"),
                )
            ]
        }
    )
    await session(fake_model, project, home, permission_mode="plan", persist=False).send(
        "look around"
    )
    results = [m["content"] for m in fake_model.chat_bodies()[1]["messages"] if m["role"] == "tool"]
    assert "read-only" in results[0].lower() and "touch" in results[0]
    assert "Exit code" not in results[1] and "read-only" not in results[1].lower()
    assert "plan mode" in results[2].lower()
    assert not (project / "hacked").exists() and not (project / "x").exists()


async def test_close_leaves_no_task_behind(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(
        {
            "routes": [
                route(
                    "start",
                    reply("", call("Bash", {"command": "sleep 60", "run_in_background": True})),
                    reply("Started; thinking a long time.", fault={"hang": True}),
                )
            ]
        }
    )
    before = set(asyncio.all_tasks())
    chat = session(fake_model, project, home, permission_mode="bypassPermissions")
    running = asyncio.Event()
    chat.tasks.on_change(lambda info: running.set() if info.running else None)
    turn = asyncio.create_task(chat.send("start"))
    await asyncio.wait_for(running.wait(), 10)
    await chat.close()
    with pytest.raises(asyncio.CancelledError):
        await turn  # the turn was cancelled (the LSP adapter answers "cancelled")
    assert not chat.tasks.has_running
    assert chat.transcript is not None and chat.transcript._file is None
    await asyncio.sleep(0)  # a yield, not a wait: the done callbacks of the ended tasks run
    left = {t for t in asyncio.all_tasks() - before if not t.done()}
    assert left == set(), left
