"""``wave-ls run`` and workspace trust, in real subprocesses: without a terminal it runs with
what the repository holds back and says so in one stderr line; ``--trust`` trusts; on a
terminal it asks once."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

from tests.support.fake_model import FakeModelServer, reply, route
from tests.support.git_repos import IDENTITY
from tests.support.hostile_repo import HostileRepo, hostile_repo
from tests.support.lsp import server_env
from tests.test_cli import wave_ls

hostile = hostile_repo


def run_in_worktree(
    fake: FakeModelServer, home: Path, repo: Path, *extra: str
) -> subprocess.CompletedProcess[str]:
    fake.set_script({"routes": [route("hello", reply("hi"))]})
    env = server_env(home, fake.base_url, **IDENTITY)
    return wave_ls("run", "hello", "--cwd", str(repo), "-w", "cli", *extra, env=env)


def trust_file(home: Path) -> dict[str, object]:
    return json.loads((home / ".wave" / "trust.json").read_text())


def test_without_a_terminal_the_repository_waits_and_one_line_says_so(
    fake_model: FakeModelServer, home: Path, hostile: HostileRepo
) -> None:
    done = run_in_worktree(fake_model, home, hostile.repo)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "hi\n"
    [line] = [text for text in done.stderr.splitlines() if "not trusted" in text]
    assert line.startswith(f"wave-ls run: {hostile.repo} is not trusted: held back")
    assert "hooks" in line and "sandbox" in line and "--trust" in line
    assert hostile.marks_written() == []  # no WorktreeCreate hook: git made the worktree
    assert (hostile.repo / ".wave" / "worktrees" / "cli").is_dir()
    assert not (home / ".wave" / "trust.json").exists()


def test_trust_flag_trusts_the_repository(
    fake_model: FakeModelServer, home: Path, hostile: HostileRepo
) -> None:
    done = run_in_worktree(fake_model, home, hostile.repo / "src", "--trust")
    assert done.returncode == 0, done.stderr
    assert "not trusted" not in done.stderr
    assert hostile.marks_written() == ["worktree-create"]
    assert trust_file(home)["folders"][str(hostile.repo)]["trusted"] is True  # type: ignore[index]


def test_on_a_terminal_it_asks_once(
    fake_model: FakeModelServer, home: Path, hostile: HostileRepo
) -> None:
    fake_model.set_script({"routes": [route("hello", reply("hi"))]})
    env = server_env(home, fake_model.base_url, **IDENTITY)
    master, slave = pty.openpty()
    os.write(master, b"y\n")
    args = [sys.executable, "-m", "wave_ls", "run", "hello", "--cwd", str(hostile.repo), "-w"]
    try:
        done = subprocess.run(
            args, env=env, stdin=slave, capture_output=True, text=True, timeout=60
        )
    finally:
        os.close(slave)
        os.close(master)
    assert done.returncode == 0, done.stderr
    assert done.stderr.count(f"Trust {hostile.repo}? [y/N]") == 1
    assert hostile.marks_written() == ["worktree-create"]
    assert trust_file(home)["folders"][str(hostile.repo)]["trusted"] is True  # type: ignore[index]
