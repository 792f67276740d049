"""Bash: output, exit codes, stdin, output cap, timeouts and cancellation killing the group."""

from __future__ import annotations

import asyncio
import time
from dataclasses import replace
from pathlib import Path

import pytest

from tests.support.processes import alive
from tests.support.waiting import eventually, until
from wave_ls.runtime.core import ToolContext, ToolError
from wave_ls.runtime.tools import BashTool
from wave_ls.runtime.tools.bash import MAX_OUTPUT_CHARS


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path, home=tmp_path)


async def wait_gone(pid: int, seconds: float = 3.0) -> bool:
    return await eventually(lambda: not alive(pid), seconds)


async def test_runs_in_the_agent_cwd_with_combined_output(ctx: ToolContext) -> None:
    # WT-1: commands run in the agent's working directory.
    (ctx.cwd / "marker.txt").write_text("")
    result = await BashTool().run({"command": "pwd; ls; echo oops >&2"}, ctx)
    assert result.content == f"{ctx.cwd}\nmarker.txt\noops"
    assert not result.is_error
    assert result.details["exitCode"] == 0


async def test_nonzero_exit_code_is_reported(ctx: ToolContext) -> None:
    result = await BashTool().run(
        {"command": "echo failing; exit 3", "description": "Fail on purpose"}, ctx
    )
    assert result.content == "failing\n\nExit code 3"
    assert result.is_error
    assert result.short_result == "Fail on purpose: exit 3"


async def test_stdin_is_dev_null(ctx: ToolContext) -> None:
    started = time.monotonic()
    result = await BashTool().run({"command": "cat; read line; echo read=$?"}, ctx)
    assert time.monotonic() - started < 5
    assert result.content == "read=1"


async def test_git_never_waits_for_an_editor_or_a_prompt(ctx: ToolContext) -> None:
    result = await BashTool().run(
        {"command": "git var GIT_EDITOR; echo prompt=$GIT_TERMINAL_PROMPT"}, ctx
    )
    assert result.content == "true\nprompt=0"


async def test_empty_output_is_said(ctx: ToolContext) -> None:
    result = await BashTool().run({"command": "true"}, ctx)
    assert result.content == "(no output)"


async def test_long_output_keeps_head_and_tail(ctx: ToolContext) -> None:
    result = await BashTool().run({"command": "seq 1 200000"}, ctx)
    assert result.content.startswith("1\n2\n3\n")
    assert result.content.endswith("199999\n200000")
    assert "bytes of output truncated" in result.content
    assert len(result.content) < MAX_OUTPUT_CHARS + 200
    assert result.details["truncated"] is True


async def test_timeout_kills_the_whole_process_group(ctx: ToolContext) -> None:
    started = time.monotonic()
    result = await BashTool().run(
        {"command": "sleep 30 & echo child=$!; sleep 30", "timeout": 300}, ctx
    )
    assert time.monotonic() - started < 5
    assert result.is_error
    assert "timed out after 0.3 s" in result.content
    child = int(result.content.split("child=")[1].split()[0])
    assert await wait_gone(child), "the background child outlived the timeout"


async def test_timeout_kills_children_that_ignore_sigterm(ctx: ToolContext) -> None:
    result = await BashTool().run(
        {"command": "bash -c 'trap \"\" TERM; sleep 30' & echo child=$!; wait", "timeout": 300},
        ctx,
    )
    child = int(result.content.split("child=")[1].split()[0])
    assert await wait_gone(child)


async def test_cancellation_kills_the_group_and_propagates(ctx: ToolContext) -> None:
    pid_file = ctx.cwd / "pid"
    task = asyncio.create_task(
        BashTool().run({"command": f"sleep 30 & echo $! > {pid_file}; sleep 30"}, ctx)
    )
    await until(lambda: pid_file.exists() and pid_file.read_text().strip(), 5, "the pid")
    child = int(pid_file.read_text())
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await wait_gone(child)


async def test_background_leftovers_do_not_block_the_result(ctx: ToolContext) -> None:
    started = time.monotonic()
    result = await BashTool().run({"command": "(sleep 3 &) ; echo done"}, ctx)
    assert result.content == "done"
    assert time.monotonic() - started < 2


async def test_timeout_is_capped_and_validated(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="Parameter 'timeout' must be an integer"):
        await BashTool().run({"command": "true", "timeout": "soon"}, ctx)
    with pytest.raises(ToolError, match="Parameter 'timeout' must be at least 1"):
        await BashTool().run({"command": "true", "timeout": 0}, ctx)
    result = await BashTool().run({"command": "echo ok", "timeout": 10_000_000}, ctx)
    assert result.content == "ok"


async def test_missing_command(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="Missing required parameter 'command'"):
        await BashTool().run({}, ctx)


async def test_run_in_background_without_the_service(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="run_in_background is not available yet"):
        await BashTool().run({"command": "sleep 1", "run_in_background": True}, ctx)


class Shells:
    def __init__(self) -> None:
        self.started: list[tuple[str, Path, str]] = []

    async def start_shell(
        self,
        command: str,
        cwd: Path,
        description: str,
        *,
        tool_call_id: str | None = None,
        sandbox: object = None,
    ) -> str:
        self.started.append((command, cwd, description))
        return "bash-1"

    def output_file(self, task_id: str) -> Path:
        return Path("/tmp/tasks") / f"{task_id}.output"


async def test_run_in_background_uses_the_service(ctx: ToolContext) -> None:
    shells = Shells()
    ctx.services = replace(ctx.services, background=shells)
    result = await BashTool().run(
        {"command": "npm run dev", "run_in_background": True, "description": "Start dev"}, ctx
    )
    assert shells.started == [("npm run dev", ctx.cwd, "Start dev")]
    assert "bash-1" in result.content
    assert "/tmp/tasks/bash-1.output" in result.content
