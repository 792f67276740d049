"""Background subagents and Bash over LSP: BG-1 (start, poll, live output, progress) and
FAIL-4 (the ``<task-notification>``: content, exactly once, never in a subagent, the turn an
idle session starts for it, a message sent meanwhile).

A real ``wave-ls`` process and the offline model; helpers in ``tests/support/background.py``.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from tests.support.background import (
    LAST_WORD_ROUTE,
    NOTICE,
    delegate_bg,
    main_bodies,
    new_session,
    no_turn_of_its_own,
    notice_messages,
    notices,
    progress,
    request_times,
    script,
    send,
    started_task,
    sub_bodies,
    tasks_of,
    tool_results,
    wait_for,
    wait_task,
    wait_turn_after_last_notice,
    wave_client,
)
from tests.support.fake_model import FakeModelServer, call, reply, route
from tests.support.lsp import CLIENTS, capabilities, server_env
from wave_ls.runtime.core import ToolContext
from wave_ls.runtime.services import Services
from wave_ls.runtime.tools.bash import BashTool
from wave_ls.tasks import BackgroundTasks


@pytest.mark.parametrize("client_name", CLIENTS)
async def test_background_agent_returns_at_once_and_can_be_polled(
    client_name: str, fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # BG-1, FAIL-4 (the notice at the next round of a running turn)
    task_prompt = "SURVEY TASK: list the python files"
    sub_route = route(
        task_prompt,
        reply("Looking.", call("Glob", {"pattern": "**/*.py"})),
        reply("SURVEY RESULT: src/app.py is the only module.", delay=2.0),
    )
    fake_model.set_script(
        script(
            route(
                "start the survey",
                reply("", delegate_bg(task_prompt)),
                reply("Started it; I will report back."),
            ),
            sub_route,
        )
    )
    caps = capabilities(client_name)
    with_progress = client_name != "minimal"
    async with wave_client(server_env(home, fake_model.base_url), caps=caps) as client:
        sid = await new_session(client, project)
        first = await send(client, sid, "start the survey")
        assert first["text"] == "Started it; I will report back."

        # The result: task id, the subagent's own session id, a live output file.
        started = tool_results(main_bodies(fake_model)[1])[0]
        task_id, sub_session, output_file = started_task(started)
        listed = await tasks_of(client, sid)
        assert listed[task_id]["status"] == "running"
        assert listed[task_id]["subagentSessionId"] == sub_session
        assert listed[task_id]["outputFile"] == str(output_file)
        assert listed[task_id]["subagentType"] == "general-purpose"
        # Returned at once: the main agent's second request came before the subagent's
        # answer (sent 2 s after its last request).
        [main_second] = request_times(fake_model, started)
        await wait_for(lambda: request_times(fake_model, "src/app.py") != [], what="Glob round")
        sub_last = request_times(fake_model, "src/app.py")
        assert main_second < sub_last[-1] + 2.0
        # The output file grows while the subagent runs.
        await wait_for(lambda: "[Glob]" in output_file.read_text(), what="the Glob line")
        early = output_file.read_text()
        assert "--- completed ---" not in early
        token = f"wave/agent/{task_id}"
        if with_progress:
            await wait_for(lambda: token in client.progress_reports, what="the progress")
            kinds = [r.kind for r in progress(client, token)]
            assert kinds[0] == "begin" and "end" not in kinds  # open while the run goes on
            # One progress for the run: the launching call has none of its own.
            assert f"wave/agent/{listed[task_id]['toolCallId']}" not in client.progress_reports

        # A second turn polls (block: false) and then waits (block: true).
        fake_model.set_script(
            script(
                route(
                    "check on it",
                    reply("", call("TaskOutput", {"task_id": task_id, "block": False})),
                    reply("", call("TaskOutput", {"task_id": task_id, "timeout": 20000})),
                    reply("It finished."),
                ),
                sub_route,
                LAST_WORD_ROUTE,
            )
        )
        second = await send(client, sid, "check on it")
        assert second["text"] == "It finished."
        bodies = main_bodies(fake_model)
        poll = tool_results(bodies[-2])[-1]
        assert "<retrieval_status>not_ready</retrieval_status>" in poll
        assert "<status>running</status>" in poll
        assert "<progress>Glob **/*.py" in poll
        assert "[Glob]" in poll
        waited = tool_results(bodies[-1])[-1]
        assert "<retrieval_status>success</retrieval_status>" in waited
        assert "<status>completed</status>" in waited
        assert "SURVEY RESULT: src/app.py is the only module." in waited
        # The notice came with the round after the wait, inside the running turn.
        [notice] = notices(bodies[-1])
        assert f"<task-id>{task_id}</task-id>" in notice

        full = output_file.read_text()
        assert full.startswith(early)
        assert "--- completed ---\nSURVEY RESULT: src/app.py is the only module." in full
        assert (await tasks_of(client, sid))[task_id]["status"] == "completed"
        # The editor heard every change of the task as a ``task`` update.
        await wait_task(client, task_id, "completed")
        changes = [u["task"] for u in client.updates_for(sid, "task")]
        assert all(change["taskId"] == task_id for change in changes)
        assert changes[0]["status"] == "running" and changes[-1]["status"] == "completed"
        assert any(change["progress"].startswith("Glob **/*.py") for change in changes)
        if with_progress:
            await wait_for(
                lambda: progress(client, token)[-1].kind == "end", what="the progress end"
            )
            reports = progress(client, token)
            assert reports[0].title == "general-purpose: Slow survey"
            assert any(r.kind == "report" and "Glob" in (r.message or "") for r in reports)
            assert "1 tool call" in (reports[-1].message or "")
        else:  # no progress for a client that did not ask; the updates carry it all
            assert client.progress_reports == {}
        assert len(main_bodies(fake_model)) == len(bodies)
        await no_turn_of_its_own(client, fake_model, sid)  # the notice was already read


async def test_three_tasks_ending_together_wake_the_idle_session_once_each(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # FAIL-4: one notice per task (completed and failed, reason verbatim), each exactly once,
    # none in a subagent; the idle session starts a turn by itself.
    fake_model.set_script(
        script(
            route(
                "start three",
                reply(
                    "",
                    delegate_bg("TRIO TASK 0", "Trio 0"),
                    delegate_bg("TRIO TASK 1", "Trio 1"),
                    delegate_bg("TRIO TASK 2", "Trio 2"),
                    delegate_bg("LATE TASK", "Late one"),
                ),
                # Still answering when the others end: their notices wait for this turn's
                # end, while the sibling below runs rounds of its own.
                reply("Four started.", delay=2.5),
            ),
            route("TRIO TASK 0", reply("TRIO RESULT 0", delay=1.0)),
            route("TRIO TASK 1", reply("TRIO RESULT 1", delay=1.0)),
            route("TRIO TASK 2", reply("x", delay=1.0, fault={"status": 400})),
            # A sibling still running when the trio ends: its next rounds must see no notice.
            route(
                "LATE TASK",
                reply("", call("Glob", {"pattern": "*.md"}), delay=0.8),
                reply("", call("Glob", {"pattern": "*.py"}), delay=0.8),
                reply("LATE RESULT", delay=0.2),
            ),
            route(NOTICE, reply("Noted.")),
            route("anything else", reply("No.")),
        )
    )
    async with wave_client(server_env(home, fake_model.base_url), caps=capabilities()) as client:
        sid = await new_session(client, project)
        first = await send(client, sid, "start three")
        assert first["text"] == "Four started."
        ids = [started_task(text)[0] for text in tool_results(main_bodies(fake_model)[1])]
        assert len(set(ids)) == 4
        # Nobody sends anything: the server runs turns of its own for the notices.
        await wait_for(lambda: len(notice_messages(client, sid)) == 4, 20, "four notices")
        await wait_turn_after_last_notice(client, sid)
        ended = await tasks_of(client, sid)
        assert [ended[i]["status"] for i in ids] == [
            "completed",
            "completed",
            "failed",
            "completed",
        ]
        # The client saw the automatic turns: notice, the agent's answer, the end of the turn.
        kinds = [u["kind"] for u in client.updates_for(sid)]
        after = kinds[kinds.index("turnEnded") + 1 :]
        assert "userMessage" in after and "assistantMessage" in after and "turnEnded" in after
        answers = [u["message"]["content"] for u in client.updates_for(sid, "assistantMessage")]
        assert "Noted." in answers

        final = await send(client, sid, "anything else?")
        assert final["text"] == "No."

    bodies = main_bodies(fake_model)
    # Exactly one notice per task in the main conversation, in the order the tasks ended.
    delivered = notices(bodies[-1])
    assert len(delivered) == 4
    for task_id in ids:
        assert sum(f"<task-id>{task_id}</task-id>" in n for n in delivered) == 1
    # Each notice reached the model once: in the first request that carried it, then only as
    # history (never appended a second time).
    counts = [len(notices(body)) for body in bodies]
    assert counts == sorted(counts) and counts[-1] == 4
    by_id = {task_id: next(n for n in delivered if task_id in n) for task_id in ids}
    done = by_id[ids[0]]
    assert done.startswith(NOTICE + "\n<task-notification>\n")
    assert "<task-type>subagent</task-type>" in done
    assert "<status>completed</status>" in done
    assert '<summary>Agent "Trio 0" completed</summary>' in done
    assert "<result>TRIO RESULT 0</result>" in done
    assert re.search(r"<usage>total_tokens: [1-9]\d*, tool_uses: 0, duration_ms: \d+</usage>", done)
    assert "<output-file>" in done
    failed = by_id[ids[2]]
    assert "<status>failed</status>" in failed
    assert '<summary>Agent "Trio 2" failed</summary>' in failed
    reason = re.search(r"<result>(.*)</result>", failed, re.S)
    assert reason and reason.group(1).startswith("Agent delegation failed: ")
    assert "400" in reason.group(1)
    late = by_id[ids[3]]
    assert "<result>LATE RESULT</result>" in late and "tool_uses: 2" in late
    # Never delivered into a subagent, not even the sibling that ran on after the trio.
    for body in sub_bodies(fake_model):
        assert "<task-notification>" not in str(body["messages"])
    assert len([b for b in sub_bodies(fake_model) if "LATE TASK" in str(b["messages"])]) == 3


async def test_tasks_ending_a_moment_apart_share_one_automatic_turn(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # FAIL-4: while other tasks still run, the idle session gathers notices for a moment
    # (NOTICE_GATHER_SECONDS) so that tasks ending together cost one more model request, not
    # one each; the last task, with nothing else running, is answered at once.
    fake_model.set_script(
        script(
            route(
                "start three",
                reply(
                    "",
                    delegate_bg("PAIR TASK A", "Pair A"),
                    delegate_bg("PAIR TASK B", "Pair B"),
                    delegate_bg("SLOW TASK", "Slow one"),
                ),
                reply("Three started."),
            ),
            route("PAIR TASK A", reply("RESULT A", delay=0.3)),
            route("PAIR TASK B", reply("RESULT B", delay=0.35)),
            route("SLOW TASK", reply("RESULT SLOW", delay=1.5)),
            route(NOTICE, reply("Noted.")),
            LAST_WORD_ROUTE,
        )
    )
    async with wave_client(server_env(home, fake_model.base_url), caps=capabilities()) as client:
        sid = await new_session(client, project)
        assert (await send(client, sid, "start three"))["text"] == "Three started."
        await wait_for(lambda: len(notice_messages(client, sid)) == 3, 20, "three notices")
        await wait_turn_after_last_notice(client, sid)
        await no_turn_of_its_own(client, fake_model, sid)
    automatic = main_bodies(fake_model)[2:-1]
    assert [len(notices(body)) for body in automatic] == [2, 3]
    first_two = " ".join(notices(automatic[0]))
    assert "<result>RESULT A</result>" in first_two and "<result>RESULT B</result>" in first_two


async def test_a_message_sent_during_an_automatic_turn_waits_for_it(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # FAIL-4: the turn the server starts for a notice; the user's message is queued behind it
    # (one turn at a time), not refused; a further message meanwhile is refused. A notice
    # that arrives meanwhile is read by the queued turn, and starts no empty turn after it.
    fake_model.set_script(
        script(
            route(
                "start quick",
                reply(
                    "",
                    delegate_bg("QUICK TASK", "Quick"),
                    delegate_bg("LATER TASK", "Later"),
                ),
                reply("Started."),
            ),
            route("QUICK TASK", reply("QUICK RESULT", delay=0.3)),
            route("LATER TASK", reply("LATER RESULT", delay=1.0)),
            route("<result>QUICK RESULT", reply("Noted the quick result.", delay=2.0)),
            route("second question", reply("Second answer.")),
            LAST_WORD_ROUTE,
        )
    )
    async with wave_client(server_env(home, fake_model.base_url), caps=capabilities()) as client:
        sid = await new_session(client, project)
        await send(client, sid, "start quick")
        await wait_for(lambda: notice_messages(client, sid) != [], 10, "the automatic turn")
        # Sent now (start_request writes it at once), so the server reads it first: the
        # third is refused because the second one waits.
        _, queued = client.start_request(
            "wave/chat/send", {"sessionId": sid, "text": "second question"}
        )
        with pytest.raises(JsonRpcException) as refused:
            await send(client, sid, "third question")
        assert refused.value.code == -32010
        assert not queued.done()
        result = await queued
        assert result["status"] == "completed" and result["text"] == "Second answer."
        history = await client.request("wave/session/messages", {"sessionId": sid})
        await no_turn_of_its_own(client, fake_model, sid)
    contents = [m["content"] for m in history["messages"] if m["content"]]
    notice_at = next(i for i, text in enumerate(contents) if text.startswith(NOTICE))
    assert "<result>QUICK RESULT</result>" in contents[notice_at]
    assert contents[notice_at + 1 : notice_at + 3] == ["Noted the quick result.", "second question"]
    assert "<result>LATER RESULT</result>" in contents[notice_at + 3]
    assert contents[notice_at + 4 :] == ["Second answer."]
    # The model was asked one turn at a time, the queued message after the notice's answer,
    # and not once more after it (the last request is no_turn_of_its_own's).
    bodies = main_bodies(fake_model)[:-1]
    asked = bodies[-1]
    assert [m["content"] for m in asked["messages"][-3:-1]] == [
        "Noted the quick result.",
        "second question",
    ]
    assert "<result>LATER RESULT</result>" in asked["messages"][-1]["content"]
    assert sum("second question" in str(b["messages"]) for b in bodies) == 1


async def test_background_bash_notifies_when_it_ends(
    fake_model: FakeModelServer, home: Path, project: Path, tmp_path: Path
) -> None:
    # BG-1 for Bash, FAIL-4 for a shell task
    go = tmp_path / "go"
    command = f"echo build started; while [ ! -f {go} ]; do sleep 0.05; done; echo build finished"
    fake_model.set_script(
        script(
            route(
                "build it in the background",
                reply(
                    "",
                    call(
                        "Bash",
                        {"command": command, "description": "Build", "run_in_background": True},
                    ),
                ),
                reply("Build started."),
            ),
            route(NOTICE, reply("The build finished.")),
        )
    )
    async with wave_client(server_env(home, fake_model.base_url), caps=capabilities()) as client:
        sid = await new_session(client, project)
        result = await send(client, sid, "build it in the background")
        assert result["text"] == "Build started."  # the command waits for ``go``
        [started] = tool_results(main_bodies(fake_model)[1])
        match = re.search(r"\b(bash-[0-9a-f]{8})\b", started)
        assert match, started
        task_id = match.group(1)
        task = (await tasks_of(client, sid))[task_id]
        assert task["status"] == "running" and task["kind"] == "shell"
        output_file = Path(task["outputFile"])
        await wait_for(lambda: "build started" in output_file.read_text(), 5, "live output")
        assert "build finished" not in output_file.read_text()
        go.touch()
        await wait_for(lambda: notice_messages(client, sid) != [], 10, "the notice")
        ended = await wait_turn_after_last_notice(client, sid)
        assert ended["text"] == "The build finished."
        assert (await tasks_of(client, sid))[task_id]["exitCode"] == 0
    [notice] = notices(main_bodies(fake_model)[-1])
    assert f"<task-id>{task_id}</task-id>" in notice
    assert "<task-type>shell</task-type>" in notice
    assert f"<output-file>{output_file}</output-file>" in notice
    assert "<status>completed</status>" in notice
    assert '<summary>Background command "Build" completed (exit code 0)</summary>' in notice
    assert "<result>build started\nbuild finished</result>" in notice


async def test_background_bash_result_names_its_output_file(home: Path, project: Path) -> None:
    # BG-1 (reference: "a unique task id and the path of the live output file at once")
    tasks = BackgroundTasks("s1", home)
    ctx = ToolContext(cwd=project, home=home, services=Services(background=tasks))
    try:
        result = await BashTool().run({"command": "sleep 5", "run_in_background": True}, ctx)
        [info] = tasks.list()
        assert info.task_id in result.content
        assert str(info.output_file) in result.content
    finally:
        await tasks.stop_all()
