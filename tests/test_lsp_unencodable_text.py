"""File names that are not UTF-8, and lone surrogates in a client's text, over LSP.

Such text cannot be written as UTF-8 as it is. It must reach the model and the editor
readably escaped (``\\xff``), a failing tool must be a tool result, a failing turn a
``{status: "failed"}``, and the session must stay usable (issue 12, defect 1).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_model import FakeModelServer, call, reply, route
from tests.support.lsp import server_env, wave_client

BAD_FILE = b"badname-\xff\xe9.txt"
BAD_DIR = b"sub-\xff"
SHOWN_FILE = "badname-\\xff\\xe9.txt"  # how the model and the editor see it
SHOWN_DIR = "src/sub-\\xff/inner.txt"


def make_bad_names(project: Path) -> None:
    root = os.fsencode(project)
    with open(os.path.join(root, BAD_FILE), "wb") as handle:
        handle.write(b"needle in a bad name\n")
    os.makedirs(os.path.join(root, b"src", BAD_DIR))
    with open(os.path.join(root, b"src", BAD_DIR, b"inner.txt"), "wb") as handle:
        handle.write(b"needle in a bad folder\n")


def tool_contents(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


SEARCHES = [
    ("Glob", {"pattern": "**/*"}),
    ("Grep", {"pattern": "needle", "output_mode": "files_with_matches"}),
    ("Grep", {"pattern": "needle", "output_mode": "content"}),
    ("Grep", {"pattern": "needle", "output_mode": "count"}),
]


@pytest.mark.parametrize(("tool", "args"), SEARCHES, ids=["glob", "files", "content", "count"])
async def test_search_results_with_bad_names_reach_the_model_readably(
    tool: str, args: dict[str, Any], fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    make_bad_names(project)
    fake_model.set_script(
        {
            "routes": [
                route("search please", reply("", call(tool, args)), reply("Searched.")),
                route("still there", reply("Yes.")),
            ]
        }
    )
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        sid = (await client.request("wave/session/new", {"cwd": str(project)}))["sessionId"]
        result = await client.request("wave/chat/send", {"sessionId": sid, "text": "search please"})
        assert result["status"] == "completed"
        assert result["text"] == "Searched."
        seen = tool_contents(fake_model.chat_bodies()[1])[0]
        assert SHOWN_FILE in seen
        assert SHOWN_DIR in seen
        blocks = client.updates_for(sid, "toolBlock")
        assert blocks[-1]["status"] == "completed"
        assert SHOWN_FILE in blocks[-1]["result"]
        messages = (await client.request("wave/session/messages", {"sessionId": sid}))["messages"]
        assert any(SHOWN_FILE in m["content"] for m in messages if m["role"] == "tool")
        # The session goes on.
        again = await client.request("wave/chat/send", {"sessionId": sid, "text": "still there?"})
        assert again["status"] == "completed"
        assert again["text"] == "Yes."


async def test_the_model_can_read_a_file_by_its_escaped_name(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    make_bad_names(project)
    fake_model.set_script(
        {
            "routes": [
                route(
                    "read the bad one",
                    reply("", call("Read", {"file_path": SHOWN_FILE})),
                    reply("Read it."),
                )
            ]
        }
    )
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        sid = (await client.request("wave/session/new", {"cwd": str(project)}))["sessionId"]
        result = await client.request(
            "wave/chat/send", {"sessionId": sid, "text": "read the bad one"}
        )
        assert result["status"] == "completed"
        assert "needle in a bad name" in tool_contents(fake_model.chat_bodies()[1])[0]


async def test_a_lone_surrogate_in_the_chat_text_is_escaped_and_the_session_goes_on(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(
        {"routes": [route("bad", reply("Got it.")), route("next one", reply("Fine."))]}
    )
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        sid = (await client.request("wave/session/new", {"cwd": str(project)}))["sessionId"]
        result = await client.request(
            "wave/chat/send", {"sessionId": sid, "text": "bad \ud83d here [@file:x\udcff.txt]"}
        )
        assert result["status"] == "completed"
        assert result["text"] == "Got it."
        sent = fake_model.chat_bodies()[0]["messages"]
        assert any(m["content"].startswith("bad \\ud83d here") for m in sent if m["role"] == "user")
        messages = (await client.request("wave/session/messages", {"sessionId": sid}))["messages"]
        assert messages[0]["content"] == "bad \\ud83d here [@file:x\\xff.txt]"
        again = await client.request("wave/chat/send", {"sessionId": sid, "text": "next one"})
        assert again["status"] == "completed"
        assert again["text"] == "Fine."


async def test_tool_arguments_with_lone_surrogates_fail_as_a_tool_result(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # The model's JSON may hold an unpaired escape; the file name cannot exist on disk.
    fake_model.set_script(
        {
            "routes": [
                route(
                    "write it",
                    reply(
                        "",
                        {
                            "name": "Write",
                            "arguments": '{"file_path": "x\\ud83d.txt", "content": "y"}',
                        },
                    ),
                    reply("Could not."),
                ),
                route("and now", reply("Still here.")),
            ]
        }
    )
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        sid = (
            await client.request(
                "wave/session/new", {"cwd": str(project), "permissionMode": "bypassPermissions"}
            )
        )["sessionId"]
        result = await client.request("wave/chat/send", {"sessionId": sid, "text": "write it"})
        assert result["status"] == "completed"
        assert result["text"] == "Could not."
        [seen] = tool_contents(fake_model.chat_bodies()[1])
        assert "\\ud83d" in seen
        blocks = client.updates_for(sid, "toolBlock")
        assert blocks[-1]["status"] == "failed"
        again = await client.request("wave/chat/send", {"sessionId": sid, "text": "and now"})
        assert again["text"] == "Still here."


async def test_a_delegation_over_bad_names_returns_the_subagents_answer(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    make_bad_names(project)
    task = "List every file of the project."
    fake_model.set_script(
        {
            "routes": [
                route(
                    "what files",
                    reply(
                        "",
                        call(
                            "Agent",
                            {"subagent_type": "Explore", "description": "list", "prompt": task},
                        ),
                    ),
                    reply("Listed."),
                ),
                route(task, reply("", call("Glob", {"pattern": "**/*"})), reply("Files: many.")),
            ]
        }
    )
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        sid = (await client.request("wave/session/new", {"cwd": str(project)}))["sessionId"]
        result = await client.request("wave/chat/send", {"sessionId": sid, "text": "what files?"})
        assert result["status"] == "completed"
        assert result["text"] == "Listed."
        assert tool_contents(fake_model.chat_bodies()[-1]) == ["Files: many."]
