"""``TaskOutput`` and ``TaskStop`` over a real ``BackgroundTasks`` (BG-1)."""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.support.waiting import until
from wave_ls.runtime.core import RunUsage, ToolContext, ToolError, Usage, tool_schema
from wave_ls.runtime.permissions import decide
from wave_ls.runtime.services import Services
from wave_ls.runtime.tools.bash import BashTool
from wave_ls.tasks import BackgroundTasks, SubagentOutcome, TaskHandle
from wave_ls.tasks.control import MAX_OUTPUT_CHARS, TaskOutputTool, TaskStopTool


@pytest.fixture
async def tasks(home: Path) -> AsyncIterator[BackgroundTasks]:
    manager = BackgroundTasks("main-session", home, kill_grace=0.2, stop_wait=5.0)
    yield manager
    await manager.stop_all()


@pytest.fixture
def ctx(tmp_path: Path, home: Path, tasks: BackgroundTasks) -> ToolContext:
    work = tmp_path / "work"
    work.mkdir()
    return ToolContext(cwd=work, home=home, services=Services(background=tasks))


async def wait_for_text(path: Path, text: str, seconds: float = 5.0) -> None:
    await until(lambda: path.exists() and text in path.read_text(), seconds, f"{text!r} in {path}")


async def test_bash_in_background_then_task_output_partial_then_complete(
    ctx: ToolContext, tasks: BackgroundTasks
) -> None:
    # BG-1: Bash run_in_background returns at once; TaskOutput polls, then waits.
    started = await BashTool().run(
        {
            "command": "echo first; while [ ! -f go ]; do sleep 0.02; done; echo second",
            "run_in_background": True,
            "description": "Two steps",
        },
        ctx,
    )
    task_id = started.details["taskId"]
    info = tasks.require(task_id)
    await wait_for_text(info.output_file, "first")

    partial = await TaskOutputTool().run({"task_id": task_id, "block": False}, ctx)
    assert "<retrieval_status>not_ready</retrieval_status>" in partial.content
    assert "<status>running</status>" in partial.content
    assert "<output>\nfirst\n</output>" in partial.content
    assert "a <task-notification> will tell you when it ends" in partial.content
    assert partial.short_result == "Two steps: running"

    (ctx.cwd / "go").touch()
    done = await TaskOutputTool().run({"task_id": task_id}, ctx)  # block defaults to true
    assert done.content.startswith(
        "<retrieval_status>success</retrieval_status>\n"
        f"<task_id>{task_id}</task_id>\n"
        "<task_type>shell</task_type>\n"
        "<status>completed</status>\n"
        "<description>Two steps</description>\n"
        "<exit_code>0</exit_code>\n"
    )
    assert done.content.endswith("<output>\nfirst\nsecond\n</output>")
    assert done.details["status"] == "completed"


async def test_a_blocking_read_that_times_out_says_so(
    ctx: ToolContext, tasks: BackgroundTasks
) -> None:
    task_id = await tasks.start_shell("echo partial; sleep 30", ctx.cwd, "Slow")
    await wait_for_text(tasks.require(task_id).output_file, "partial")
    started = time.monotonic()
    result = await TaskOutputTool().run({"task_id": task_id, "timeout": 100}, ctx)
    assert time.monotonic() - started < 2
    assert "<retrieval_status>timeout</retrieval_status>" in result.content
    assert "<output>\npartial\n</output>" in result.content


async def test_task_output_of_an_ended_subagent_is_its_result_verbatim(
    ctx: ToolContext, tasks: BackgroundTasks
) -> None:
    async def run(handle: TaskHandle) -> SubagentOutcome:
        handle.write("Grep def answer")
        handle.report("Grep def answer · 40 tokens")
        return SubagentOutcome(
            "completed", "answer() is in src/app.py:1", RunUsage(Usage(total_tokens=40), 1)
        )

    info = tasks.start_subagent(run, subagent_type="Explore", description="Find answer")
    result = await TaskOutputTool().run({"task_id": info.task_id, "timeout": 5000}, ctx)
    assert "<task_type>subagent</task_type>" in result.content
    assert "<status>completed</status>" in result.content
    assert "<usage>total_tokens: 40, tool_uses: 1, duration_ms: " in result.content
    assert result.content.endswith("<output>\nanswer() is in src/app.py:1\n</output>")


async def test_task_output_keeps_the_end_of_long_output(
    ctx: ToolContext, tasks: BackgroundTasks
) -> None:
    task_id = await tasks.start_shell("seq 1 20000", ctx.cwd, "Count")  # 108,894 bytes
    result = await TaskOutputTool().run({"task_id": task_id, "timeout": 5000}, ctx)
    output = result.content.split("<output>\n", 1)[1]
    marker, kept = output.split("\n", 1)
    assert marker == (
        f"[... 78,894 earlier bytes omitted; the full output is in "
        f"{tasks.require(task_id).output_file}]"
    )
    assert len(kept.removesuffix("\n</output>")) == MAX_OUTPUT_CHARS - 1  # without the last \n
    assert kept.endswith("19999\n20000\n</output>")


async def test_task_stop_stops_a_running_command(ctx: ToolContext, tasks: BackgroundTasks) -> None:
    task_id = await tasks.start_shell("sleep 60", ctx.cwd, "Serve")
    result = await TaskStopTool().run({"task_id": task_id}, ctx)
    assert result.content == f"Stopped task {task_id} (Serve)."
    assert result.details["status"] == "stopped"
    [notice] = tasks.take_notices()
    assert "<result>Stopped with TaskStop.</result>" in notice.text


async def test_task_stop_accepts_the_old_shell_id_name(
    ctx: ToolContext, tasks: BackgroundTasks
) -> None:
    task_id = await tasks.start_shell("sleep 60", ctx.cwd, "Old name")
    await TaskStopTool().run({"shell_id": task_id}, ctx)
    assert tasks.require(task_id).status == "stopped"


async def test_task_stop_of_an_unknown_task_lists_the_running_ones(
    ctx: ToolContext, tasks: BackgroundTasks
) -> None:
    running = await tasks.start_shell("sleep 60", ctx.cwd, "Watcher")
    with pytest.raises(ToolError) as error:
        await TaskStopTool().run({"task_id": "bash-deadbeef"}, ctx)
    assert str(error.value) == (
        "No background task with id 'bash-deadbeef' in this session. "
        f"Running tasks: {running} (Watcher)."
    )
    with pytest.raises(ToolError, match="bash-deadbeef"):
        await TaskOutputTool().run({"task_id": "bash-deadbeef"}, ctx)


async def test_task_stop_of_an_ended_task_says_how_it_ended(
    ctx: ToolContext, tasks: BackgroundTasks
) -> None:
    task_id = await tasks.start_shell("exit 0", ctx.cwd, "")
    await tasks.read_output(task_id, block=True, timeout=5)
    with pytest.raises(ToolError) as error:
        await TaskStopTool().run({"task_id": task_id}, ctx)
    assert str(error.value) == (
        f"Task {task_id} has already ended (completed); there is nothing to stop."
    )


async def test_without_background_tasks_both_tools_say_so(tmp_path: Path) -> None:
    ctx = ToolContext(cwd=tmp_path, home=tmp_path)
    for tool in (TaskOutputTool(), TaskStopTool()):
        with pytest.raises(ToolError, match="Background tasks are not available"):
            await tool.run({"task_id": "bash-00000000"}, ctx)


async def test_a_missing_task_id_is_named(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="Missing required parameter 'task_id'"):
        await TaskStopTool().run({}, ctx)
    with pytest.raises(ToolError, match="'block' must be a boolean"):
        await TaskOutputTool().run({"task_id": "x", "block": "soon"}, ctx)


def test_both_tools_run_in_plan_mode_without_asking() -> None:
    for tool in (TaskOutputTool(), TaskStopTool()):
        assert tool.effect == "session"
        assert decide("plan", tool.name, {}, effect=tool.effect).action == "allow"
        schema = tool_schema(tool)
        assert schema["function"]["name"] == tool.name
        assert "task_id" in schema["function"]["parameters"]["properties"]
