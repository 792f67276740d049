"""Stopping background tasks over LSP: ``TaskStop`` and ``wave/tasks/stop`` mid-tool (process
groups, the worktree keep/remove rule, the ``stopped`` notice), the foreground timeout
(BG-2), and ``shutdown`` with tasks running.

A real ``wave-ls`` process and the offline model; helpers in ``tests/support/background.py``.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

from tests.support.background import (
    ISOLATED_WORKER,
    NOTICE,
    branches,
    delegate,
    delegate_bg,
    group_alive,
    main_bodies,
    new_session,
    notice_messages,
    notices,
    pid_of,
    progress,
    script,
    send,
    sleeper,
    started_task,
    sub_bodies,
    tasks_of,
    tool_results,
    wait_for,
    wait_group_gone,
    wait_turn_after_last_notice,
    wave_client,
    worktree_of,
    write_agent,
)
from tests.support.fake_model import FakeModelServer, call, reply, route
from tests.support.lsp import capabilities, server_env


async def test_stopping_mid_tool_kills_the_command_and_applies_the_worktree_rule(
    fake_model: FakeModelServer, home: Path, project: Path, shared_dir: Path
) -> None:
    # BG-1 (TaskStop, wave/tasks/stop), FAIL-4 (status stopped), WT-7, WTC-4
    write_agent(project, "isolated-worker", ISOLATED_WORKER)
    # The pid files lie where the isolated (sandboxed) subagents may write.
    dirty_pid, clean_pid = shared_dir / "dirty.pid", shared_dir / "clean.pid"
    routes = [
        route(
            "start the workers",
            reply(
                "",
                delegate_bg("DIRTY TASK", "Dirty work", "isolated-worker"),
                delegate_bg("CLEAN TASK", "Clean work", "isolated-worker"),
            ),
            reply("Both started."),
        ),
        route(
            "DIRTY TASK",
            *sleeper(dirty_pid, call("Write", {"file_path": "notes.txt", "content": "draft\n"})),
        ),
        route("CLEAN TASK", *sleeper(clean_pid)),
        route(NOTICE, reply("Noted.")),
    ]
    fake_model.set_script(script(*routes))
    async with wave_client(server_env(home, fake_model.base_url), caps=capabilities()) as client:
        sid = await new_session(client, project)
        await send(client, sid, "start the workers")
        dirty_id, clean_id = (
            started_task(text)[0] for text in tool_results(main_bodies(fake_model)[1])
        )
        dirty_group, clean_group = await pid_of(dirty_pid), await pid_of(clean_pid)
        dirty_tree, clean_tree = worktree_of(client, dirty_id), worktree_of(client, clean_id)
        assert (dirty_tree / "notes.txt").read_text() == "draft\n"
        assert group_alive(dirty_group) and group_alive(clean_group)

        # The main agent stops the dirty one with TaskStop while its Bash sleeps.
        fake_model.set_script(
            script(
                route(
                    "halt the dirty one",
                    reply("", call("TaskStop", {"task_id": dirty_id})),
                    reply("Halted."),
                ),
                *routes,
            )
        )
        await send(client, sid, "halt the dirty one")
        await wait_group_gone(dirty_group)
        assert group_alive(clean_group)
        bodies = main_bodies(fake_model)
        [stopped] = [r for r in tool_results(bodies[-1]) if r.startswith("Stopped task")]
        assert stopped.startswith(f"Stopped task {dirty_id} (Dirty work).\nWorktree kept: ")
        [notice] = notices(bodies[-1])  # read at the round right after the TaskStop
        assert f"<task-id>{dirty_id}</task-id>" in notice
        assert "<status>stopped</status>" in notice
        assert "<result>Stopped with TaskStop.</result>" in notice
        # What the stopped run cost so far: its tokens and its two tool calls (Write, Bash).
        usage = notice.split("<usage>")[1].split("</usage>")[0]
        assert "tool_uses: 2" in usage and "total_tokens: 0" not in usage
        assert f"<worktree>Worktree kept: {dirty_tree} on branch" in notice
        assert "1 changed file" in notice
        # Kept: the folder with the change, and its branch.
        assert (dirty_tree / "notes.txt").read_text() == "draft\n"
        assert f"worktree-{dirty_tree.name}" in branches(project)

        # The user stops the clean one from the editor.
        assert await client.request("wave/tasks/stop", {"taskId": clean_id}) == {"stopped": True}
        await wait_group_gone(clean_group)
        assert await client.request("wave/tasks/stop", {"taskId": clean_id}) == {"stopped": False}
        unknown = {"taskId": "agent-00000000"}
        assert await client.request("wave/tasks/stop", unknown) == {"stopped": False}
        # Removed: nothing changed in it.
        assert not clean_tree.exists()
        assert f"worktree-{clean_tree.name}" not in branches(project)
        # The idle session hears of it in a turn of its own.
        await wait_for(lambda: len(notice_messages(client, sid)) == 2, 10, "the second notice")
        await wait_turn_after_last_notice(client, sid)
        listed = await tasks_of(client, sid)
        assert listed[dirty_id]["status"] == listed[clean_id]["status"] == "stopped"
        for task_id in (dirty_id, clean_id):
            reports = progress(client, f"wave/agent/{task_id}")
            assert reports[0].kind == "begin" and reports[-1].kind == "end"
            assert reports[-1].message == "Stopped"

    notice = notices(main_bodies(fake_model)[-1])[-1]
    assert f"<task-id>{clean_id}</task-id>" in notice
    assert "<status>stopped</status>" in notice
    assert "<result>Stopped by the user.</result>" in notice
    assert "<worktree>Worktree removed: no changes" in notice
    # Neither subagent ran another round after its stop.
    assert len([b for b in sub_bodies(fake_model) if "DIRTY TASK" in str(b["messages"])]) == 2
    assert len([b for b in sub_bodies(fake_model) if "CLEAN TASK" in str(b["messages"])]) == 1


async def test_a_foreground_run_that_times_out_is_stopped(
    fake_model: FakeModelServer, home: Path, project: Path, shared_dir: Path
) -> None:
    # BG-2 with the outcome rules: no answer yet -> a failure; an answer -> the answer.
    settings = project / ".wave" / "settings.json"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text('{"agent": {"timeoutSeconds": 1}}')
    pid_file = shared_dir / "slow.pid"  # where the sandboxed subagent may write
    fake_model.set_script(
        script(
            route(
                "try the stalled one",
                reply("", delegate("STALLED TASK", "Stalled")),
                reply("It timed out."),
            ),
            route("STALLED TASK", reply("too late", delay=4.0)),
            route(
                "try the answering one",
                reply("", delegate("ANSWERING TASK", "Answering", timeout=1)),
                reply("Got a partial answer."),
            ),
            route(
                "ANSWERING TASK",
                reply(
                    "Partial answer: answer() lives in src/app.py.",
                    call("Bash", {"command": f"echo $$ > {pid_file}; sleep 30"}),
                ),
                reply("never"),
            ),
        )
    )
    async with wave_client(server_env(home, fake_model.base_url), caps=capabilities()) as client:
        # The settings' limit (1 s) applies to a session created while it is set.
        stalled_sid = await new_session(client, project)
        settings.unlink()
        first = await send(client, stalled_sid, "try the stalled one")
        assert first["text"] == "It timed out."
        [failure] = tool_results(main_bodies(fake_model)[-1])
        assert failure == "Agent delegation failed: timed out after 1 s and was stopped"

        # The call's own timeout (the settings file is gone: the default would be 600 s).
        sid = await new_session(client, project)
        began = time.monotonic()
        second = await send(client, sid, "try the answering one")
        assert time.monotonic() - began < 15  # not the 30 s of its Bash
        assert second["text"] == "Got a partial answer."
        [answer] = tool_results(main_bodies(fake_model)[-1])
        assert answer == "Partial answer: answer() lives in src/app.py."
        await wait_group_gone(await pid_of(pid_file))  # its Bash was stopped with it
        blocks = [u for u in client.updates_for(sid, "toolBlock") if u["name"] == "Agent"]
        assert "timed out" in blocks[-1]["details"]["error"]
    # The subagent ran no round after its timeout.
    answering = [b for b in sub_bodies(fake_model) if "ANSWERING TASK" in str(b["messages"])]
    assert len(answering) == 1


async def test_shutdown_stops_every_task(
    fake_model: FakeModelServer, home: Path, project: Path, tmp_path: Path
) -> None:
    # Shutdown with a slow isolated subagent (dirty) and a background Bash running: the server
    # exits promptly, the command's process group is gone, the changed worktree is kept.
    write_agent(project, "isolated-worker", ISOLATED_WORKER)
    pid_file = tmp_path / "server.pid"
    fake_model.set_script(
        script(
            route(
                "start everything",
                reply(
                    "",
                    delegate_bg("SLOW TASK", "Slow work", "isolated-worker"),
                    call(
                        "Bash",
                        {
                            "command": f"echo $$ > {pid_file}; sleep 30",
                            "run_in_background": True,
                        },
                    ),
                ),
                reply("All started."),
            ),
            route(
                "SLOW TASK",
                reply("", call("Write", {"file_path": "draft.txt", "content": "wip\n"})),
                reply("finished", delay=30),
            ),
            route(NOTICE, reply("Noted.")),
        )
    )
    async with wave_client(server_env(home, fake_model.base_url), caps=capabilities()) as client:
        sid = await new_session(client, project)
        await send(client, sid, "start everything")
        agent_id = started_task(tool_results(main_bodies(fake_model)[1])[0])[0]
        group = await pid_of(pid_file)
        await wait_for(
            lambda: len([b for b in sub_bodies(fake_model) if "SLOW TASK" in str(b)]) == 2,
            10,
            "the slow round",
        )
        tree = worktree_of(client, agent_id)
        requests_before = len(fake_model.chat_bodies())
        began = time.monotonic()
        await asyncio.wait_for(client.shutdown_session(), 10)
        assert time.monotonic() - began < 5
        assert client._server is not None and client._server.returncode is not None
    await wait_group_gone(group)
    assert (tree / "draft.txt").read_text() == "wip\n"
    assert f"worktree-{tree.name}" in branches(project)
    # The stopped tasks' notices start no turn: the model is not asked again.
    assert len(fake_model.chat_bodies()) == requests_before
