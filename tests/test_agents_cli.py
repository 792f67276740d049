"""``wave-ls agents``: run as a real subprocess with HOME pointing at a temp dir."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BUILTINS = ["Explore", "general-purpose", "Plan"]


def run_cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "WAVE_PLUGIN_DIRS"}
    env["HOME"] = str(home)
    return subprocess.run(
        [sys.executable, "-m", "wave_ls", "agents", *args],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )


@pytest.fixture
def dirs(tmp_path: Path) -> tuple[Path, Path]:
    home, project = tmp_path / "home", tmp_path / "project"
    (home / ".wave" / "agents").mkdir(parents=True)
    (project / ".wave" / "agents").mkdir(parents=True)
    return home, project


def test_json_lists_agents_with_protocol_fields_and_exits_0(dirs: tuple[Path, Path]) -> None:
    home, project = dirs
    (home / ".wave" / "agents" / "helper.md").write_text(
        "---\nname: helper\ndescription: >-\n  Helps\n  a lot\n---\nPrompt\n"
    )
    agent_file = project / ".wave" / "agents" / "tester.md"
    agent_file.write_text(
        "---\nname: tester\ndescription: Runs tests\ndisallowedTools: Edit, Write\n"
        "model: fast-model\nisolation: worktree\n---\nPrompt\n"
    )
    result = run_cli(home, "--json", "--cwd", str(project))
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    assert set(data) == {"agents", "problems"}
    assert data["problems"] == []
    assert [a["name"] for a in data["agents"]] == [*BUILTINS, "helper", "tester"]
    assert data["agents"][-1] == {
        "name": "tester",
        "description": "Runs tests",
        "source": "project",
        "tools": "All except Edit, Write",
        "model": "fast-model",
        "isolation": "worktree",
        "path": str(agent_file),
    }
    assert data["agents"][-2]["description"] == "Helps a lot"  # LOAD-6 in the user-facing list
    assert data["agents"][0] == {
        "name": "Explore",
        "description": data["agents"][0]["description"],
        "source": "builtin",
        "tools": "All except Artifact, ExitPlanMode, Edit, Write",
        "model": "inherit",
    }


def test_json_reports_problems_and_exits_1(dirs: tuple[Path, Path]) -> None:
    home, project = dirs
    bad = project / ".wave" / "agents" / "bad.md"
    bad.write_text("---\nname: bad\ndescription: Use when: x\n---\n")
    (project / ".wave" / "agents" / "good.md").write_text("---\nname: good\ndescription: ok\n---\n")
    result = run_cli(home, "--json", "--cwd", str(project))
    assert result.returncode == 1
    data = json.loads(result.stdout)
    assert "good" in [a["name"] for a in data["agents"]]
    assert data["problems"] == [
        {
            "path": str(bad),
            "line": 3,
            "message": "description: unquoted value contains ': '; quote it or use '>-'",
        }
    ]


def test_table_shows_agents_then_problems(dirs: tuple[Path, Path]) -> None:
    home, project = dirs
    (project / ".wave" / "agents" / "t.md").write_text(
        "---\nname: tester\ndescription: d\ntools: [Read, Grep]\nisolation: worktree\n---\n"
    )
    bad = project / ".wave" / "agents" / "z.md"
    bad.write_text("---\ndescription: no name\n---\n")
    result = run_cli(home, "--cwd", str(project))
    assert result.returncode == 1
    out = result.stdout
    for column in ("Name", "Source", "Model", "Tools", "Isolation"):
        assert column in out
    row = next(line for line in out.splitlines() if "tester" in line)
    for cell in ("project", "inherit", "Read, Grep", "worktree"):
        assert cell in row
    assert "Explore" in out and "All tools" in out
    assert f"{bad}:1: missing required key 'name'; add 'name: my-agent'" in out.splitlines()
    assert out.index("tester") < out.index(str(bad))


def test_table_without_problems_exits_0(dirs: tuple[Path, Path]) -> None:
    home, project = dirs
    result = run_cli(home, "--cwd", str(project))
    assert result.returncode == 0, result.stderr
    assert "general-purpose" in result.stdout
    assert "problem" not in result.stdout


def test_cwd_defaults_to_the_current_directory(dirs: tuple[Path, Path]) -> None:
    home, project = dirs
    (project / ".wave" / "agents" / "a.md").write_text("---\nname: here\ndescription: d\n---\n")
    env = {**os.environ, "HOME": str(home)}
    env.pop("WAVE_PLUGIN_DIRS", None)
    result = subprocess.run(
        [sys.executable, "-m", "wave_ls", "agents", "--json"],
        capture_output=True,
        text=True,
        env=env,
        cwd=project,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "here" in [a["name"] for a in json.loads(result.stdout)["agents"]]


def test_bad_cwd_exits_2(dirs: tuple[Path, Path], tmp_path: Path) -> None:
    home, _ = dirs
    result = run_cli(home, "--cwd", str(tmp_path / "missing"))
    assert result.returncode == 2
    assert "not a directory" in result.stderr
    assert result.stdout == ""
