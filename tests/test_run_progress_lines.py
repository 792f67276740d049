"""``wave-ls run``'s progress lines on stderr: plain writes, coloured on a terminal only, and
no rich on the path of the first answer (its import was 20-60 ms of a delegation's launch,
issue 30)."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path
from typing import Literal

import pytest

from tests.support.fake_model import FakeModelServer, call, reply, route
from tests.support.lsp import server_env
from wave_ls.cli.terminal import TerminalProgress, colors
from wave_ls.runtime.core import ToolBlockUpdated, Usage, UsageUpdated


def block(
    status: Literal["running", "completed", "failed"], short_result: str = "", arguments: str = "{}"
) -> ToolBlockUpdated:
    return ToolBlockUpdated("call-1", "Bash", arguments, status, short_result)


def test_lines_off_a_terminal_are_plain_and_keep_brackets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    out = io.StringIO()
    progress = TerminalProgress(out)
    progress.emit(block("running", arguments='{"command": "ls [a-z]* [red]x[/]"}'))
    progress.emit(block("completed", short_result="2 lines"))
    progress.emit(UsageUpdated(Usage(total_tokens=5), Usage(total_tokens=12345)))
    assert out.getvalue().splitlines() == [
        '→ Bash {"command": "ls [a-z]* [red]x[/]"}',
        "  ✓ Bash: 2 lines",
        "  tokens so far: 12,345",
    ]
    assert progress.total_tokens == 12345


def test_colour_follows_the_terminal_and_the_usual_variables(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    leader, follower = os.openpty()
    try:
        with open(follower, "w", closefd=False) as tty:
            for name in ("FORCE_COLOR", "NO_COLOR", "TERM"):
                monkeypatch.delenv(name, raising=False)
            assert colors(tty) and not colors(io.StringIO())
            monkeypatch.setenv("NO_COLOR", "1")
            assert not colors(tty)
            monkeypatch.delenv("NO_COLOR")
            monkeypatch.setenv("TERM", "dumb")
            assert not colors(tty)
            monkeypatch.setenv("FORCE_COLOR", "1")
            assert colors(io.StringIO())
            out = io.StringIO()
            TerminalProgress(out).emit(block("failed", short_result="exit 1"))
            assert out.getvalue() == "  \x1b[31m✗\x1b[0m Bash: exit 1\n"
    finally:
        os.close(leader)
        os.close(follower)


def test_run_prints_its_progress_without_importing_rich(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(
        {
            "routes": [
                route(
                    "list the files",
                    reply("", call("Bash", {"command": "ls"})),
                    reply("Two files."),
                )
            ]
        }
    )
    command = [sys.executable, "-X", "importtime", "-m", "wave_ls", "run", "list the files"]
    done = subprocess.run(
        [*command, "--cwd", str(project), "--permission-mode", "bypassPermissions"],
        env=server_env(home, fake_model.base_url),
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout == "Two files.\n"
    lines = done.stderr.splitlines()
    imported = {line.rsplit("|", 1)[-1].strip() for line in lines if line.startswith("import time")}
    assert "wave_ls.cli.terminal" in imported
    assert not any(name == "rich" or name.startswith("rich.") for name in imported)
    shown = [line for line in lines if not line.startswith("import time")]
    assert '→ Bash {"command": "ls"}' in shown
    assert any(line.startswith("  ✓ Bash:") for line in shown), shown
    assert any(line.startswith("  tokens so far: ") for line in shown), shown
