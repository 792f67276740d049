"""Shared fixtures: a temporary HOME, real git projects, the offline model."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

pytest_plugins = ["tests.support.fake_model"]

GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "wave test",
    "GIT_AUTHOR_EMAIL": "test@wave.invalid",
    "GIT_COMMITTER_NAME": "wave test",
    "GIT_COMMITTER_EMAIL": "test@wave.invalid",
}


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An empty HOME, so no user's agents, memory or sessions leak into a test."""
    path = tmp_path / "home"
    path.mkdir()
    return path


def git(cwd: Path, *args: str) -> str:
    import os

    env = {**os.environ, **GIT_IDENTITY}
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True
    )
    return done.stdout


def make_repo(path: Path, files: dict[str, str]) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    for relative, text in files.items():
        target = path / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    git(path, "init", "-q", "-b", "main")
    git(path, "add", "-A")
    git(path, "commit", "-qm", "initial")
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A small git repository."""
    return make_repo(
        tmp_path / "project",
        {"README.md": "# demo\n", "src/app.py": "def answer():\n    return 41\n"},
    )
