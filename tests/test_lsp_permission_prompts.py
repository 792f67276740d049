"""Permission prompts for the editor clients, end to end over LSP: the ``preview`` diff of
Write and Edit, and ``remember: "session"`` (what it covers, and that other sessions are
still asked)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.background import script, send, wave_client
from tests.support.fake_model import FakeModelServer, call, reply, route
from tests.support.lsp import WaveClient, capabilities, server_env


async def new_session(client: WaveClient, cwd: Path) -> str:
    result = await client.request("wave/session/new", {"cwd": str(cwd)})
    return str(result["sessionId"])


def allow(remember: bool = False) -> Any:
    def answer(_params: dict[str, Any]) -> dict[str, Any]:
        return {"allowed": True, **({"remember": "session"} if remember else {})}

    return answer


def asked(client: WaveClient) -> list[str]:
    return [request["summary"] for request in client.permission_requests]


async def test_write_and_edit_requests_carry_the_diff_they_would_make(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(
        script(
            route(
                "change things",
                reply("", call("Write", {"file_path": "notes/new.txt", "content": "one\ntwo\n"})),
                reply(
                    "",
                    call(
                        "Edit",
                        {
                            "file_path": str(project / "src/app.py"),
                            "old_string": "return 41",
                            "new_string": "return 42",
                        },
                    ),
                ),
                reply("", call("Write", {"file_path": "README.md", "content": "# new\n"})),
                reply("Done."),
            )
        )
    )
    async with wave_client(
        server_env(home, fake_model.base_url), caps=capabilities(permission=True)
    ) as client:
        client.permission_answer = allow()
        sid = await new_session(client, project)
        await send(client, sid, "change things")

    new_file, edit, overwrite = client.permission_requests
    assert new_file["preview"] == {
        "path": str(project / "notes/new.txt"),
        "diff": f"--- /dev/null\n+++ {project / 'notes/new.txt'}\n@@ -0,0 +1,2 @@\n+one\n+two\n",
    }
    app = project / "src/app.py"
    assert edit["preview"]["path"] == str(app)
    assert edit["preview"]["diff"] == (
        f"--- {app}\n+++ {app}\n@@ -1,2 +1,2 @@\n def answer():\n-    return 41\n+    return 42\n"
    )
    assert overwrite["preview"]["diff"].splitlines()[2:] == ["@@ -1 +1 @@", "-# demo", "+# new"]
    assert app.read_text() == "def answer():\n    return 42\n"


async def test_an_edit_that_cannot_apply_fails_without_asking(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(
        script(
            route(
                "bad edit",
                reply(
                    "",
                    call(
                        "Edit",
                        {"file_path": "src/app.py", "old_string": "nope", "new_string": "x"},
                    ),
                ),
                reply("Understood."),
            )
        )
    )
    async with wave_client(
        server_env(home, fake_model.base_url), caps=capabilities(permission=True)
    ) as client:
        client.permission_answer = allow()
        sid = await new_session(client, project)
        await send(client, sid, "bad edit")
    assert client.permission_requests == []
    tool_result = fake_model.chat_bodies()[-1]["messages"][-1]
    assert "old_string not found" in tool_result["content"]


async def test_remembered_allows_cover_their_kind_in_that_session_only(
    fake_model: FakeModelServer, home: Path, project: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    fake_model.set_script(
        script(
            route(
                "first round",
                reply(
                    "",
                    call(
                        "Edit", {"file_path": "src/app.py", "old_string": "41", "new_string": "42"}
                    ),
                ),
                reply("", call("Write", {"file_path": "src/other.py", "content": "x = 1\n"})),
                reply("", call("Write", {"file_path": str(outside), "content": "out\n"})),
                reply("", call("Bash", {"command": "touch made-1.txt"})),
                reply("", call("Bash", {"command": "touch made-2.txt"})),
                reply("", call("Bash", {"command": "rm made-2.txt"})),
                reply("Done."),
            ),
            route(
                "other session",
                reply("", call("Write", {"file_path": "b.txt", "content": "b\n"})),
                reply("Done."),
            ),
        )
    )
    async with wave_client(
        server_env(home, fake_model.base_url), caps=capabilities(permission=True)
    ) as client:
        client.permission_answer = allow(remember=True)
        sid = await new_session(client, project)
        await send(client, sid, "first round")
        # Asked once for the edits inside the project, once for the file outside it,
        # once for `touch`, once for `rm`: `touch made-2.txt` and the Write were not asked.
        assert asked(client) == [
            "Edit src/app.py",
            f"Write {outside}",
            "Bash: touch made-1.txt",
            "Bash: rm made-2.txt",
        ]
        assert (project / "src/other.py").read_text() == "x = 1\n"
        assert not (project / "made-2.txt").exists()

        # The rule is shown with the calls it allowed, in the transcript and the tool blocks.
        messages = (await client.request("wave/session/messages", {"sessionId": sid}))["messages"]
        rules = [
            m["meta"]["permission"] for m in messages if (m.get("meta") or {}).get("permission")
        ]
        assert rules[0] == f"allowed for this session: file edits in {project}"
        assert "allowed for this session: Bash commands starting with `touch`" in rules
        blocks = [u for u in client.updates_for(sid, "toolBlock") if u["status"] == "completed"]
        assert any((b.get("details") or {}).get("permission") for b in blocks)

        # Another session is asked again.
        other = await new_session(client, project)
        await send(client, other, "other session")
        assert asked(client)[-1] == "Write b.txt"
        requested = client.permission_requests[-1]
        assert requested["sessionId"] == other
        assert json.loads(json.dumps(requested))["preview"]["path"] == str(project / "b.txt")
