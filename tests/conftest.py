"""Shared fixtures: a temporary HOME, real git projects, the offline model."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.git_repos import init_repo

pytest_plugins = ["tests.support.fake_model"]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """An empty HOME, so no user's agents, memory or sessions leak into a test."""
    path = tmp_path / "home"
    path.mkdir()
    return path


@pytest.fixture
def shared_dir(tmp_path: Path) -> Iterator[Path]:
    """A folder every command sandbox may write (under ``/dev/shm``, see docs/sandbox.md), for
    tests whose sandboxed commands tell the test something (a pid); ``tmp_path`` without it."""
    if not Path("/dev/shm").is_dir():
        yield tmp_path
        return
    path = Path(tempfile.mkdtemp(prefix="wave-test-", dir="/dev/shm"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture(scope="session")
def project_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The repository ``project`` copies, made once per run."""
    return init_repo(
        tmp_path_factory.mktemp("project-template") / "project",
        {"README.md": "# demo\n", "src/app.py": "def answer():\n    return 41\n"},
    )


@pytest.fixture
def project(tmp_path: Path, project_template: Path) -> Path:
    """A small git repository of its own (a copy: git init and a commit cost ~60 ms a
    test, a copy ~13)."""
    return Path(shutil.copytree(project_template, tmp_path / "project", symlinks=True))
