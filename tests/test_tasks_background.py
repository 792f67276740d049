"""Background tasks: shell commands and subagents, stopping them, and their notices (BG-1,
FAIL-4, WT-7, WTC-4). Real processes, real asyncio; the subagent runs are plain coroutines
written here (the input of ``start_subagent``)."""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.support.processes import alive
from tests.support.waiting import until, until_blocking
from wave_ls.runtime.core import RunUsage, Usage
from wave_ls.tasks import (
    NOTICE_PREFIX,
    BackgroundTasks,
    Notice,
    SubagentOutcome,
    TaskError,
    TaskHandle,
    TaskInfo,
)

SESSION = "main-session"


@pytest.fixture
async def tasks(home: Path) -> AsyncIterator[BackgroundTasks]:
    manager = BackgroundTasks(SESSION, home, kill_grace=0.2, stop_wait=5.0)
    yield manager
    await manager.stop_all()


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    path = tmp_path / "work"
    path.mkdir()
    return path


def texts(notices: list[Notice]) -> list[str]:
    """The ``<task-notification>`` blocks of ``take_notices()``."""
    return [notice.text for notice in notices]


def read(path: Path) -> str:
    return path.read_text() if path.exists() else ""


# --------------------------------------------------------------------------- shell tasks


async def test_shell_output_file_grows_live_and_the_task_completes(
    tasks: BackgroundTasks, workdir: Path, home: Path
) -> None:
    # BG-1: an id at once, a live output file, the run goes on until the command exits.
    command = "pwd; echo first; while [ ! -f go ]; do sleep 0.02; done; echo second"
    task_id = await tasks.start_shell(command, workdir, "Wait for go")
    assert re.fullmatch(r"bash-[0-9a-f]{8}", task_id)
    info = tasks.require(task_id)
    assert info.output_file == home / ".wave" / "tasks" / SESSION / f"{task_id}.output"
    await until(lambda: "first" in read(info.output_file), 5, "the first line")
    assert info.status == "running"
    assert "second" not in read(info.output_file)

    (workdir / "go").touch()
    info, output = await tasks.read_output(task_id, block=True, timeout=5)
    assert info.status == "completed"
    assert info.exit_code == 0
    assert output == f"{workdir}\nfirst\nsecond\n"
    [notice] = texts(tasks.take_notices())
    assert f"<task-id>{task_id}</task-id>" in notice
    assert "<status>completed</status>" in notice
    assert '<summary>Background command "Wait for go" completed (exit code 0)</summary>' in notice
    assert f"<result>{workdir}\nfirst\nsecond</result>" in notice


async def test_a_failing_command_ends_failed_with_its_exit_code(
    tasks: BackgroundTasks, workdir: Path
) -> None:
    task_id = await tasks.start_shell("echo boom >&2; exit 3", workdir, "")
    info, _ = await tasks.read_output(task_id, block=True, timeout=5)
    assert (info.status, info.exit_code) == ("failed", 3)
    [notice] = texts(tasks.take_notices())
    assert "<status>failed</status>" in notice
    assert "(exit code 3)" in notice
    assert "<result>boom</result>" in notice


async def test_a_silent_command_says_it_printed_nothing(
    tasks: BackgroundTasks, workdir: Path
) -> None:
    task_id = await tasks.start_shell("true", workdir, "Nothing")
    await tasks.read_output(task_id, block=True, timeout=5)
    [notice] = texts(tasks.take_notices())
    assert "<result>(no output)</result>" in notice


@pytest.mark.parametrize("prefix", ["", "trap '' TERM; "], ids=["term", "ignores-term"])
async def test_stop_kills_the_whole_process_group(
    tasks: BackgroundTasks, workdir: Path, prefix: str
) -> None:
    # A child that ignores SIGTERM is killed after the grace period (SIGKILL to the group).
    command = prefix + "sleep 60 & echo $! > child.pid; wait"
    task_id = await tasks.start_shell(command, workdir, "Sleep")
    await until(lambda: read(workdir / "child.pid").strip() != "", 5, "the child's pid")
    child = int(read(workdir / "child.pid"))
    shell = tasks.require(task_id).pid
    assert shell is not None and alive(child) and alive(shell)

    started = time.monotonic()
    assert await tasks.stop(task_id) is True
    assert time.monotonic() - started < 3
    info = tasks.require(task_id)
    assert info.status == "stopped"
    await until(lambda: not alive(child) and not alive(shell), 3, "the group's end")
    [notice] = texts(tasks.take_notices())
    assert "<status>stopped</status>" in notice
    assert '<summary>Background command "Sleep" was stopped</summary>' in notice
    assert "<result>Stopped on request.</result>" in notice


async def test_stop_of_an_unknown_or_ended_task_returns_false(
    tasks: BackgroundTasks, workdir: Path
) -> None:
    assert await tasks.stop("bash-00000000") is False
    task_id = await tasks.start_shell("echo done", workdir, "")
    await tasks.read_output(task_id, block=True, timeout=5)
    assert await tasks.stop(task_id) is False
    assert tasks.require(task_id).status == "completed"
    assert len(tasks.take_notices()) == 1


async def test_a_blocking_read_gives_up_after_its_timeout(
    tasks: BackgroundTasks, workdir: Path
) -> None:
    task_id = await tasks.start_shell("echo partial; sleep 30", workdir, "")
    await until(lambda: "partial" in read(tasks.require(task_id).output_file), 5, "output")
    started = time.monotonic()
    info, output = await tasks.read_output(task_id, block=True, timeout=0.2)
    assert time.monotonic() - started < 2
    assert info.status == "running"
    assert output == "partial\n"


async def test_a_missing_working_directory_is_a_readable_error(
    tasks: BackgroundTasks, tmp_path: Path
) -> None:
    with pytest.raises(TaskError, match="does not exist"):
        await tasks.start_shell("true", tmp_path / "gone", "")
    assert tasks.list() == []


# --------------------------------------------------------------------------- subagent tasks


async def test_a_subagent_task_reports_progress_and_completes_with_one_notice(
    tasks: BackgroundTasks,
) -> None:
    # FAIL-4 / WTC-4: status, summary, result verbatim, usage and worktree summary.
    seen: list[tuple[str, str]] = []
    tasks.on_change(lambda info: seen.append((info.status, info.progress)))
    woken: list[str] = []
    tasks.on_notice(lambda info: woken.append(info.task_id))

    async def run(handle: TaskHandle) -> SubagentOutcome:
        handle.write("Glob **/test_*.py")
        handle.report("Glob **/test_*.py · 120 tokens")
        handle.write("Read tests/a.py")
        return SubagentOutcome(
            "completed",
            "Found 3 test files:\ntests/a.py",
            RunUsage(Usage(total_tokens=123), 4),
            "No changes: worktree removed.",
        )

    info = tasks.start_subagent(
        run, subagent_type="Explore", description="Find tests", session_id="sub-1a2b3c4d"
    )
    assert re.fullmatch(r"agent-[0-9a-f]{8}", info.task_id)
    assert info.status == "running"
    info, log = await tasks.read_output(info.task_id, block=True, timeout=5)
    assert info.status == "completed"
    assert log == (
        "Glob **/test_*.py\nRead tests/a.py\n\n--- completed ---\nFound 3 test files:\ntests/a.py\n"
    )
    assert seen == [
        ("running", ""),
        ("running", "Glob **/test_*.py · 120 tokens"),
        ("completed", "Glob **/test_*.py · 120 tokens"),
    ]
    assert woken == [info.task_id]
    assert texts(tasks.take_notices()) == [
        "<task-notification>\n"
        f"<task-id>{info.task_id}</task-id>\n"
        "<task-type>subagent</task-type>\n"
        f"<output-file>{info.output_file}</output-file>\n"
        "<status>completed</status>\n"
        '<summary>Agent "Find tests" completed</summary>\n'
        "<result>Found 3 test files:\ntests/a.py</result>\n"
        f"<usage>total_tokens: 123, tool_uses: 4, duration_ms: {info.duration_ms}</usage>\n"
        "<worktree>No changes: worktree removed.</worktree>\n"
        "</task-notification>"
    ]
    assert texts(tasks.take_notices()) == []


async def test_a_failed_subagent_notice_carries_the_reason_verbatim(
    tasks: BackgroundTasks,
) -> None:
    # FAIL-4: status failed with the reason verbatim.
    async def fails(handle: TaskHandle) -> SubagentOutcome:
        return SubagentOutcome("failed", "Agent delegation failed: model 'nope' not found")

    async def crashes(handle: TaskHandle) -> SubagentOutcome:
        raise RuntimeError("connection refused")

    first = tasks.start_subagent(fails, subagent_type="Explore", description="A")
    second = tasks.start_subagent(crashes, subagent_type="Explore", description="B")
    await tasks.read_output(first.task_id, block=True, timeout=5)
    await tasks.read_output(second.task_id, block=True, timeout=5)
    notices = tasks.take_notices()
    by_task = {notice.task_id: notice for notice in notices}
    assert by_task[first.task_id].status == "failed"
    assert (
        "<result>Agent delegation failed: model 'nope' not found</result>"
        in by_task[first.task_id].text
    )
    assert "<result>RuntimeError: connection refused</result>" in by_task[second.task_id].text
    message = by_task[second.task_id].message()
    assert message.role == "user"
    assert message.content.startswith(NOTICE_PREFIX + "\n<task-notification>")
    assert message.meta["taskNotification"] == second.task_id


async def test_stopping_a_subagent_waits_for_its_cleanup(tasks: BackgroundTasks) -> None:
    # WT-7 / WTC-4: the run's own cleanup (worktree keep/remove) finishes before stop returns,
    # and the notice carries what it recorded.
    started = asyncio.Event()
    cleaned: list[bool] = []

    async def run(handle: TaskHandle) -> SubagentOutcome:
        try:
            started.set()
            await asyncio.Event().wait()
            raise AssertionError("not reached")
        finally:
            # A cleanup that awaits work elsewhere (counting the worktree's changes, in git).
            await asyncio.to_thread(lambda: None)
            handle.write("cleanup: worktree kept")
            handle.record(
                usage=RunUsage(Usage(total_tokens=50), 1),
                worktree_summary="Worktree kept at .wave/worktrees/agent-x (2 changed files).",
            )
            cleaned.append(True)

    info = tasks.start_subagent(run, subagent_type="general-purpose", description="Refactor")
    await started.wait()
    assert await tasks.stop(info.task_id, "Stopped by the user.") is True
    assert cleaned == [True]
    assert info.status == "stopped"
    assert "cleanup: worktree kept\n\n--- stopped ---\nStopped by the user.\n" in read(
        info.output_file
    )
    [notice] = texts(tasks.take_notices())
    assert "<status>stopped</status>" in notice
    assert '<summary>Agent "Refactor" was stopped</summary>' in notice
    assert "<result>Stopped by the user.</result>" in notice
    assert "<usage>total_tokens: 50, tool_uses: 1, duration_ms: " in notice
    assert "<worktree>Worktree kept at .wave/worktrees/agent-x (2 changed files).</worktree>" in (
        notice
    )


async def test_a_subagent_stopped_before_it_ran_still_ends_once(tasks: BackgroundTasks) -> None:
    ran: list[bool] = []

    async def run(handle: TaskHandle) -> SubagentOutcome:
        ran.append(True)
        return SubagentOutcome("completed", "done")

    info = tasks.start_subagent(run, subagent_type="Explore", description="Never")
    assert await tasks.stop(info.task_id) is True  # before the event loop ever ran it
    assert ran == []
    assert info.status == "stopped"
    assert len(tasks.take_notices()) == 1


async def test_two_stops_at_once_stop_it_once(tasks: BackgroundTasks) -> None:
    running = asyncio.Event()

    async def run(handle: TaskHandle) -> SubagentOutcome:
        running.set()
        await asyncio.Event().wait()  # until stopped
        return SubagentOutcome("completed", "late")

    info = tasks.start_subagent(run, subagent_type="Explore", description="Twice")
    await running.wait()
    results = await asyncio.gather(tasks.stop(info.task_id), tasks.stop(info.task_id))
    assert sorted(results) == [False, True]
    assert len(tasks.take_notices()) == 1


# --------------------------------------------------------------------------- notices


async def test_three_tasks_ending_together_give_three_notices_each_taken_once(
    tasks: BackgroundTasks,
) -> None:
    # Reference scenario 7: N tasks end at once -> exactly N notices, each delivered once,
    # while several consumers (coroutines and threads) take notices concurrently.
    gate = asyncio.Event()

    async def run(handle: TaskHandle) -> SubagentOutcome:
        await gate.wait()
        return SubagentOutcome("completed", f"result of {handle.task_id}")

    started = [
        tasks.start_subagent(run, subagent_type="Explore", description=f"Task {n}")
        for n in range(3)
    ]
    woken: list[str] = []
    tasks.on_notice(lambda info: woken.append(info.task_id))
    taken: list[str] = []
    stop = threading.Event()

    def thread_consumer() -> None:
        while not stop.is_set():
            taken.extend(texts(tasks.take_notices()))

    async def loop_consumer() -> None:
        for _ in range(50):
            taken.extend(notice.text for notice in tasks.take_notices())
            await asyncio.sleep(0)  # a yield, not a wait: the runs end between two takes

    threads = [threading.Thread(target=thread_consumer) for _ in range(2)]
    for thread in threads:
        thread.start()
    try:
        gate.set()
        await asyncio.gather(*(loop_consumer() for _ in range(3)))
        await until(lambda: len(taken) >= 3, 2, "three notices")
    finally:
        stop.set()
        for thread in threads:
            thread.join()
    taken.extend(texts(tasks.take_notices()))
    ids = [re.search(r"<task-id>(.*)</task-id>", text).group(1) for text in taken]  # type: ignore[union-attr]
    assert sorted(ids) == sorted(info.task_id for info in started)
    assert sorted(woken) == sorted(ids)
    assert tasks.pending_notices == 0


async def test_a_failing_listener_does_not_break_the_tasks(tasks: BackgroundTasks) -> None:
    def broken(info: TaskInfo) -> None:
        raise RuntimeError("adapter bug")

    tasks.on_change(broken)
    tasks.on_notice(broken)

    async def run(handle: TaskHandle) -> SubagentOutcome:
        return SubagentOutcome("completed", "fine")

    info = tasks.start_subagent(run, subagent_type="Explore", description="Robust")
    info, _ = await tasks.read_output(info.task_id, block=True, timeout=5)
    assert info.status == "completed"
    assert len(tasks.take_notices()) == 1


async def test_unsubscribed_listeners_hear_nothing(tasks: BackgroundTasks, workdir: Path) -> None:
    heard: list[str] = []
    unsubscribe = tasks.on_change(lambda info: heard.append(info.status))
    unsubscribe()
    task_id = await tasks.start_shell("true", workdir, "")
    await tasks.read_output(task_id, block=True, timeout=5)
    assert heard == []


# --------------------------------------------------------------------------- shutdown & list


async def test_stop_all_stops_every_running_task_and_refuses_new_ones(
    tasks: BackgroundTasks, workdir: Path
) -> None:
    async def quick(handle: TaskHandle) -> SubagentOutcome:
        return SubagentOutcome("completed", "quick")

    async def endless(handle: TaskHandle) -> SubagentOutcome:
        await asyncio.Event().wait()  # until stopped
        return SubagentOutcome("completed", "never")

    done = tasks.start_subagent(quick, subagent_type="Explore", description="Quick")
    await tasks.read_output(done.task_id, block=True, timeout=5)
    agent = tasks.start_subagent(endless, subagent_type="Explore", description="Endless")
    shell_id = await tasks.start_shell("sleep 60", workdir, "Server")
    shell_pid = tasks.require(shell_id).pid
    assert tasks.has_running

    await tasks.stop_all()
    assert not tasks.has_running
    statuses = {info.task_id: info.status for info in tasks.list()}
    assert statuses == {done.task_id: "completed", agent.task_id: "stopped", shell_id: "stopped"}
    assert shell_pid is not None
    await until(lambda: not alive(shell_pid), 3, "the shell's end")
    notices = tasks.take_notices()
    assert sorted(n.status for n in notices) == ["completed", "stopped", "stopped"]
    assert all("Stopped because the session ended." in n.text for n in notices[1:])
    with pytest.raises(TaskError, match="session has ended"):
        await tasks.start_shell("true", workdir, "")


async def test_list_items_have_the_protocol_fields(tasks: BackgroundTasks, workdir: Path) -> None:
    # PROTOCOL wave/tasks/list: {taskId, sessionId, subagentType, status, ...}
    async def run(handle: TaskHandle) -> SubagentOutcome:
        return SubagentOutcome("completed", "ok", RunUsage(Usage(total_tokens=7)))

    agent = tasks.start_subagent(
        run, subagent_type="Explore", description="Look", session_id="sub-00aa11bb"
    )
    await tasks.read_output(agent.task_id, block=True, timeout=5)
    shell_id = await tasks.start_shell("sleep 5", workdir, "Serve")
    agent_json, shell_json = (info.to_json() for info in tasks.list())
    assert agent_json["taskId"] == agent.task_id
    assert agent_json["sessionId"] == SESSION
    assert agent_json["subagentSessionId"] == "sub-00aa11bb"
    assert agent_json["subagentType"] == "Explore"
    assert agent_json["kind"] == "subagent"
    assert agent_json["status"] == "completed"
    assert agent_json["usage"] == {"total_tokens": 7, "tool_uses": 0, "duration_ms": 0}
    assert agent_json["endedAt"] >= agent_json["startedAt"]
    assert agent_json["summary"] == 'Agent "Look" completed'
    assert shell_json["taskId"] == shell_id
    assert shell_json["kind"] == "shell"
    assert shell_json["subagentType"] is None
    assert shell_json["status"] == "running"
    assert shell_json["command"] == "sleep 5"
    assert shell_json["outputFile"].endswith(f"{shell_id}.output")
    assert "endedAt" not in shell_json


def test_closing_the_event_loop_without_stop_all_leaves_no_process(
    home: Path, workdir: Path
) -> None:
    # A server killed without a clean shutdown: the loop's own cancellation still stops them.
    manager = BackgroundTasks(SESSION, home, kill_grace=0.2)
    pids: list[int] = []

    async def main() -> None:
        running = asyncio.Event()

        async def endless(handle: TaskHandle) -> SubagentOutcome:
            running.set()
            await asyncio.Event().wait()  # until the loop closes
            return SubagentOutcome("completed", "never")

        task_id = await manager.start_shell("sleep 60", workdir, "Orphan?")
        pids.append(manager.require(task_id).pid or 0)
        manager.start_subagent(endless, subagent_type="Explore", description="Endless")
        await running.wait()

    asyncio.run(main())  # returns with both tasks still running: asyncio.run cancels them
    assert [info.status for info in manager.list()] == ["stopped", "stopped"]
    assert len(manager.take_notices()) == 2
    until_blocking(lambda: not alive(pids[0]), 3, "the orphaned shell's end")
