"""A repository that tracks a bare repository as plain files: its config cannot run a
program through a command that reads as read-only (``git -C evil diff``)."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from wave_ls.runtime.bash_safety import is_read_only_command
from wave_ls.runtime.core import ToolContext
from wave_ls.runtime.tools import BashTool


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A checkout holding ``evil/``, a bare repository with two commits whose config sets
    ``diff.external`` to a program that leaves a mark."""
    project = tmp_path / "project"
    project.mkdir()
    evil = project / "evil"
    git(project, "init", "-q", "--bare", "evil")
    marker = tmp_path / "ran"
    git(evil, "config", "diff.external", f"touch {marker}; true")
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", str(evil), str(work))
    git(work, "commit", "-q", "--allow-empty", "-m", "one")
    (work / "f").write_text("x\n")
    git(work, "add", "f")
    git(work, "commit", "-q", "-m", "two")
    git(work, "push", "-q", "origin", "HEAD")
    return project


@pytest.mark.parametrize(
    "command", ["git -C evil diff HEAD~1 HEAD", "cd evil && git diff HEAD~1 HEAD"]
)
async def test_git_does_not_work_in_an_embedded_bare_repository(
    project: Path, command: str
) -> None:
    marker = project.parent / "ran"
    # The command text is read-only: nothing but the environment can stop it.
    assert is_read_only_command(command)[0]
    subprocess.run(["git", "-C", "evil", "diff", "HEAD~1", "HEAD"], cwd=project, check=True)
    assert marker.exists(), "the repository's diff.external runs without the guard"
    marker.unlink()
    result = await BashTool().run({"command": command}, ToolContext(cwd=project, home=project))
    assert not marker.exists()
    assert result.is_error  # git found no repository it may use


async def test_an_explicit_git_dir_still_works(project: Path) -> None:
    result = await BashTool().run(
        {"command": "git --git-dir=evil log --format=%s"}, ToolContext(cwd=project, home=project)
    )
    assert result.content == "two\none"
