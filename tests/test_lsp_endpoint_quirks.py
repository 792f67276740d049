"""What real inference servers do, over LSP with the offline model (issue 27, point 5): replies
cut off mid-way, the output limit, the first-token wait, bounded delegations, an endpoint
that drops the tools, and the ``model`` request settings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.fake_model import FakeModelServer, call, reply, route
from tests.support.git_repos import commit_all
from tests.support.lsp import server_env, wave_client

CUT_WRITE = '{"file_path": "notes.txt", "content": "the first part of a long fi'


def write_settings(project: Path, data: dict[str, Any]) -> None:
    folder = project / ".wave"
    folder.mkdir(exist_ok=True)
    (folder / "settings.local.json").write_text(json.dumps(data), encoding="utf-8")


async def chat(client: Any, cwd: Path, *texts: str) -> tuple[str, list[dict[str, Any]]]:
    sid = (await client.request("wave/session/new", {"cwd": str(cwd)}))["sessionId"]
    results = [await client.request("wave/chat/send", {"sessionId": sid, "text": t}) for t in texts]
    return str(sid), results


def assistant_calls(body: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        c for m in body["messages"] if m["role"] == "assistant" for c in m.get("tool_calls") or []
    ]


def tool_results(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


async def test_a_tool_call_cut_off_mid_arguments_is_never_sent_back_as_broken_json(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # llama.cpp answers every later request of a conversation holding arguments that are no
    # JSON with HTTP 500: the turn failed, and so did the next message (6 of 6 times).
    fake_model.set_script(
        {
            "routes": [
                route(
                    "write the notes",
                    reply("", call("Write", CUT_WRITE), finish_reason="length"),  # type: ignore[arg-type]
                    reply("I will write it in parts."),
                ),
                route("and now", reply("Still here.")),
            ]
        }
    )
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        _sid, (first, second) = await chat(client, project, "write the notes", "and now")
    assert first["status"] == "completed" and second == {**second, "status": "completed"}
    bodies = fake_model.chat_bodies()
    for body in bodies:
        for made in assistant_calls(body):
            assert isinstance(json.loads(made["function"]["arguments"]), dict)
    # The model is told what happened, and nothing ran.
    (told,) = tool_results(bodies[1])
    assert "cut off by the output limit" in told and "not run" in told
    assert not (project / "notes.txt").exists()


async def test_an_answer_cut_off_by_the_output_limit_goes_on_once_then_says_so(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(
        {
            "routes": [
                route(
                    "tell me everything",
                    reply("Part one, ", finish_reason="length"),
                    reply("part two, ", finish_reason="length"),
                    reply("never asked"),
                ),
                route("short please", reply("Short.", finish_reason="length"), reply(" Done.")),
            ]
        }
    )
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        _sid, (long, short) = await chat(client, project, "tell me everything", "short please")
    assert long["status"] == "failed"
    assert "cut off by the output limit (max_tokens 8192)" in long["error"]
    assert long["text"] == "part two, "
    assert short["status"] == "completed" and short["text"] == " Done."
    bodies = fake_model.chat_bodies()
    assert len(bodies) == 4
    asked = bodies[1]["messages"][-1]
    assert asked["role"] == "user" and "cut off by the output limit" in asked["content"]
    # A sane max_tokens goes with every request (a quarter of the default 32,768-token window).
    assert {body["max_tokens"] for body in bodies} == {8192}


async def test_the_model_settings_reach_the_requests(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    write_settings(
        project,
        {
            "model": {
                "maxTokens": 700,
                "temperature": 0.3,
                "toolChoice": "required",
                "byModel": {"test-model": {"maxTokens": 900}},
            }
        },
    )
    fake_model.set_script(
        {"routes": [route("look", reply("", call("Glob", {"pattern": "*.md"})), reply("Seen."))]}
    )
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        _sid, (result,) = await chat(client, project, "look")
    assert result["text"] == "Seen."
    first, second = fake_model.chat_bodies()
    assert (first["max_tokens"], first["temperature"], first["tool_choice"]) == (
        900,
        0.3,
        "required",
    )
    # A forcing tool_choice is for a turn's first request: otherwise no answer could end it.
    assert "tool_choice" not in second and second["max_tokens"] == 900


async def test_a_reply_prefix_starts_each_turns_first_reply_and_is_never_kept(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # llama.cpp continues a final assistant message: "<tool_call>" with toolChoice "required"
    # has a 135 M model call a tool at once (tests/llama). The offline model counts the
    # prefix as an assistant message: its answers are each route's second step.
    write_settings(project, {"model": {"replyPrefix": "<tool_call>\n"}})
    fake_model.set_script(
        {
            "routes": [
                route("one", reply("-"), reply("First.")),
                route("two", reply("-"), reply("Second.")),
            ]
        }
    )
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        sid, results = await chat(client, project, "one", "two")
        messages = (await client.request("wave/session/messages", {"sessionId": sid}))["messages"]
    assert [r["text"] for r in results] == ["First.", "Second."]
    first, second = fake_model.chat_bodies()
    prefix = {"role": "assistant", "content": "<tool_call>\n"}
    assert first["messages"][-1] == prefix and second["messages"][-1] == prefix
    assert second["messages"].count(prefix) == 1
    assert "<tool_call>" not in json.dumps(messages)


async def test_the_agent_tool_requires_subagent_type_in_its_schema(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # Under schema-constrained output a model leaves optional fields out: 73 of 73 Agent
    # calls did, and each was refused for the missing subagent_type.
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        await chat(client, project, "hello")
    tools = {t["function"]["name"]: t["function"] for t in fake_model.chat_bodies()[0]["tools"]}
    assert "subagent_type" in tools["Agent"]["parameters"]["required"]


async def test_the_first_token_may_take_longer_than_the_silence_between_tokens(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # llama.cpp sends its headers at once, then nothing while it reads the prompt.
    fake_model.set_script(
        {
            "routes": [
                route("a long prompt", reply("Read it all.", prompt_delay=1.5)),
                route("too slow", reply("never", prompt_delay=5)),
            ]
        }
    )
    env = server_env(
        home,
        fake_model.base_url,
        WAVE_MODEL_TIMEOUT="0.5",
        WAVE_MODEL_RETRIES="0",
        WAVE_MODEL_FIRST_TOKEN_TIMEOUT="3",
    )
    async with wave_client(env) as client:
        _sid, (read, slow) = await chat(client, project, "a long prompt", "too slow")
    assert read["status"] == "completed" and read["text"] == "Read it all."
    assert slow["status"] == "failed"
    assert "no token for 3 s" in slow["error"] and "WAVE_MODEL_FIRST_TOKEN_TIMEOUT" in slow["error"]


async def test_delegations_beyond_the_limit_wait_for_a_free_slot(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # One reply with 109 Agent calls started 109 subagents against a one-slot server.
    write_settings(project, {"agent": {"maxConcurrent": 2}})
    calls = [
        call(
            "Agent",
            {
                "subagent_type": "general-purpose",
                "description": f"task {i}",
                "prompt": f"BOUNDED TASK {i}",
            },
        )
        for i in range(5)
    ]
    fake_model.set_script(
        {
            "routes": [
                route("many at once", reply("", *calls), reply("all done")),
                *(route(f"BOUNDED TASK {i}", reply(f"result {i}", delay=0.3)) for i in range(5)),
            ]
        }
    )
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        sid, (result,) = await chat(client, project, "many at once")
        blocks = client.updates_for(sid, "toolBlock")
    assert result["text"] == "all done"
    assert sorted(tool_results(fake_model.chat_bodies()[-1])) == [f"result {i}" for i in range(5)]
    runs = [
        (r["time"], r["done_time"])
        for r in fake_model.requests()
        if r["method"] == "POST" and "BOUNDED TASK" in json.dumps(r["body"]["messages"][-1])
    ]
    assert len(runs) == 5
    most = max(sum(1 for s, e in runs if s <= t < e) for t, _ in runs)
    assert most == 2, f"{most} subagents ran at once"
    assert any(
        "Waiting" in b["shortResult"] and "maxConcurrent" in b["shortResult"] for b in blocks
    )


async def test_an_endpoint_that_drops_the_tools_is_warned_about(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # A chat template without tool support: HTTP 200, and the prompt never held the tools.
    fake_model.set_script({"routes": [route("hello", reply("Hi.", drop_tools=True))]})
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        sid, (result,) = await chat(client, project, "hello")
        notices = client.updates_for(sid, "notice")
    assert result["status"] == "completed"
    assert len(notices) == 1 and notices[0]["level"] == "warning"
    assert "ignore the tool definitions" in notices[0]["text"] and "--jinja" in notices[0]["text"]


async def test_a_tool_call_written_as_text_is_warned_about(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    text = '<tool_call>\n{"name": "Glob", "arguments": {"pattern": "*"}}\n</tool_call>'
    fake_model.set_script({"routes": [route("list", reply(text))]})
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        sid, _ = await chat(client, project, "list")
        notices = client.updates_for(sid, "notice")
    assert [n["level"] for n in notices] == ["warning"]
    assert "wrote a tool call as text (<tool_call>)" in notices[0]["text"]


async def test_a_server_that_reads_the_tools_gets_no_warning(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script({"routes": [route("hello", reply("Hi."))]})
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        sid, _ = await chat(client, project, "hello")
        assert client.updates_for(sid, "notice") == []


async def test_a_repositorys_tool_choice_waits_for_trust(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # A committed settings file could make the agent call a tool of its choosing first.
    folder = project / ".wave"
    folder.mkdir()
    model = {
        "maxTokens": 321,
        "toolChoice": {"type": "function", "function": {"name": "Bash"}},
        "replyPrefix": "<tool_call>",
    }
    (folder / "settings.json").write_text(json.dumps({"model": model}))
    commit_all(project, "settings from the repository")
    fake_model.set_script({"routes": [route("hello", reply("Hi."))]})
    async with wave_client(server_env(home, fake_model.base_url)) as client:
        await chat(client, project, "hello")
        await client.request("wave/workspace/trust", {"cwd": str(project), "trusted": True})
        await chat(client, project, "hello")
    untrusted, trusted = fake_model.chat_bodies()
    assert untrusted["max_tokens"] == 321 and "tool_choice" not in untrusted
    assert untrusted["messages"][-1]["role"] == "user"
    assert trusted["tool_choice"] == {"type": "function", "function": {"name": "Bash"}}
    assert trusted["messages"][-1] == {"role": "assistant", "content": "<tool_call>"}
