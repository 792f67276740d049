"""The sandbox's helper process (``runtime/sandbox/spawner.py``, ``zygote.py``): commands
it starts are confined, report their exit codes and signals, stop with their process group,
and survive (or report) the helper's own end. Real processes only."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path

import pytest

from tests.support.waiting import until
from wave_ls.runtime.processes import spawn_bash, stop_group
from wave_ls.runtime.sandbox import confinement
from wave_ls.runtime.sandbox.bubblewrap import bwrap_path
from wave_ls.runtime.sandbox.landlock import abi_version
from wave_ls.runtime.sandbox.spawner import UNKNOWN_EXIT, SpawnedProcess

MECHANISMS = [
    pytest.param("landlock", marks=pytest.mark.skipif(abi_version() < 1, reason="no Landlock")),
    pytest.param("bubblewrap", marks=pytest.mark.skipif(bwrap_path() is None, reason="no bwrap")),
]


async def run(command: str, cwd: Path, box: object, **env: str) -> tuple[int, str]:
    read_fd, write_fd = os.pipe()
    try:
        process = await spawn_bash(
            command,
            cwd,
            output=write_fd,
            env={**os.environ, **env},
            sandbox=box,  # type: ignore[arg-type]
        )
    finally:
        os.close(write_fd)
    code = await process.wait()
    with os.fdopen(read_fd, "rb") as pipe:
        return code, pipe.read().decode()


@pytest.mark.parametrize("mechanism", MECHANISMS)
async def test_commands_run_confined_with_their_exit_codes(
    mechanism: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WAVE_SANDBOX", mechanism)
    inside, outside = tmp_path / "in", tmp_path / "out"
    inside.mkdir()
    outside.mkdir()
    box = confinement([inside], private_tmp=True)
    code, out = await run(
        f'echo "$GREETING" from "$(pwd)"; echo x > {outside}/f; echo y > f; echo "$TMPDIR"; exit 3',
        inside,
        box,
        GREETING="hello",
    )
    assert code == 3
    lines = out.splitlines()
    assert lines[0] == f"hello from {inside}" and "f: " in lines[1]  # refused outside
    assert lines[2] == box.env["TMPDIR"]
    assert (inside / "f").read_text() == "y\n" and not (outside / "f").exists()
    spawner = box.spawner()
    assert spawner is not None and spawner.helper_pid is not None
    # A signal reads as Popen shows it; the big environment goes through whole.
    assert (await run("kill -9 $$", inside, box))[0] == -signal.SIGKILL
    big = "x" * 120_000  # several reads of the socket (the kernel allows 128 KiB a value)
    code, out = await run('echo "${#BIG}"', inside, box, BIG=big)
    assert (code, out) == (0, "120000\n")
    box.close()


async def test_stop_group_stops_what_the_command_started(tmp_path: Path) -> None:
    box = confinement([tmp_path])
    read_fd, write_fd = os.pipe()
    process = await spawn_bash("sleep 30 & sleep 30", tmp_path, output=write_fd, sandbox=box)
    os.close(write_fd)
    assert isinstance(process, SpawnedProcess) == box.confined
    started = time.monotonic()
    await stop_group(process, grace=0.2)
    assert await process.wait() == -signal.SIGTERM and time.monotonic() - started < 5
    # The background sleep went too: nobody holds the pipe any more.
    assert os.read(read_fd, 10) == b""
    os.close(read_fd)
    box.close()


async def test_a_missing_working_directory_is_an_os_error(tmp_path: Path) -> None:
    box = confinement([tmp_path])
    with pytest.raises(OSError):
        await run("true", tmp_path / "gone", box)
    assert (await run("true", tmp_path, box))[0] == 0  # the helper still serves
    box.close()


@pytest.mark.skipif(abi_version() < 1, reason="no Landlock")
async def test_the_helper_killed_or_closed(tmp_path: Path) -> None:
    box = confinement([tmp_path])
    spawner = box.spawner()
    assert spawner is not None
    read_fd, write_fd = os.pipe()
    process = await spawn_bash("sleep 0.5", tmp_path, output=write_fd, sandbox=box)
    os.close(write_fd)
    first_helper = spawner.helper_pid
    assert first_helper is not None
    os.kill(first_helper, signal.SIGKILL)
    # Its command goes on; once it has ended, its exit code is unknown (and said so).
    assert await asyncio.wait_for(process.wait(), 10) == UNKNOWN_EXIT
    os.close(read_fd)
    assert (await run("echo again", tmp_path, box)) == (0, "again\n")
    assert spawner.helper_pid not in (None, first_helper)
    # Closed: no new commands; the helper ends once its commands have ended.
    read_fd, write_fd = os.pipe()
    last = await spawn_bash("sleep 0.3", tmp_path, output=write_fd, sandbox=box)
    os.close(write_fd)
    helper = spawner.helper_pid
    assert helper is not None
    box.close()
    with pytest.raises(OSError, match="closed"):
        await run("true", tmp_path, box)
    os.kill(helper, 0)  # still there for its command
    assert await last.wait() == 0
    os.close(read_fd)
    await until(lambda: not Path(f"/proc/{helper}").exists(), 5, "the helper's end")
