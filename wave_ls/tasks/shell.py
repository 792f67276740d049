"""Starting a background shell command and stopping its whole process group."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from wave_ls.runtime.processes import RunningCommand, spawn_bash
from wave_ls.tasks.model import TaskError

if TYPE_CHECKING:
    from wave_ls.runtime.sandbox import Confinement


async def spawn_shell(
    command: str, cwd: Path, output_file: Path, sandbox: Confinement | None = None
) -> RunningCommand:
    """``bash -c command`` in its own process group, stdin /dev/null, stdout and stderr
    appended straight to ``output_file`` (so the file grows while the command runs, and
    nothing of ours has to stay alive to carry the output); confined by ``sandbox`` when
    given (the output file is opened here, outside it)."""
    if not cwd.is_dir():
        raise TaskError(f"The working directory {cwd} does not exist")
    output_file.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(output_file, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    try:
        return await spawn_bash(command, cwd, output=fd, sandbox=sandbox)
    except OSError as exc:
        raise TaskError(f"Could not start the background command: {exc}") from exc
    finally:
        os.close(fd)
