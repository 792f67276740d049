"""Shared fixtures: a temporary HOME, real git projects, the offline model."""

from __future__ import annotations

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
def project(tmp_path: Path) -> Path:
    """A small git repository."""
    return init_repo(
        tmp_path / "project",
        {"README.md": "# demo\n", "src/app.py": "def answer():\n    return 41\n"},
    )
