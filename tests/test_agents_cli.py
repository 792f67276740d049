"""``wave-ls agents``: run as a real subprocess with HOME pointing at a temp dir."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.fake_model import FakeModelServer

BUILTINS = ["Explore", "general-purpose", "Plan"]


def run_cli(home: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "WAVE_"))}
    env["HOME"] = str(home)
    env.update(extra)
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
    bad.write_text("---\nname: bad\n---\nno description\n")
    (project / ".wave" / "agents" / "good.md").write_text("---\nname: good\ndescription: ok\n---\n")
    result = run_cli(home, "--json", "--cwd", str(project))
    assert result.returncode == 1
    data = json.loads(result.stdout)
    assert "good" in [a["name"] for a in data["agents"]]
    [problem] = data["problems"]
    assert problem["path"] == str(bad) and problem["severity"] == "error"
    assert "description" in problem["message"]


def test_exit_code_1_on_warnings_0_on_notes_only(dirs: tuple[Path, Path]) -> None:
    # Issue 24 point 5: warnings fail CI (the agent loads, with less); notes do not.
    home, project = dirs
    agents = project / ".wave" / "agents"
    (agents / "warn.md").write_text("---\nname: warn\ndescription: d\ntools: Read, Reed\n---\n")
    result = run_cli(home, "--json", "--cwd", str(project))
    assert result.returncode == 1
    assert {p["severity"] for p in json.loads(result.stdout)["problems"]} == {"warning"}
    (agents / "warn.md").write_text("---\nname: warn\ndescription: d\ntools: Read, LS\n---\n")
    result = run_cli(home, "--json", "--cwd", str(project))
    assert result.returncode == 0, result.stdout
    assert {p["severity"] for p in json.loads(result.stdout)["problems"]} == {"info"}
    table = run_cli(home, "--cwd", str(project))
    assert table.returncode == 0
    assert "1 problem(s): 1 note" in table.stdout and "Notes:" in table.stdout


def test_tiers_show_what_they_become(dirs: tuple[Path, Path]) -> None:
    # Issue 24 point 3: `wave-ls agents` says which model a tier became.
    home, project = dirs
    agents = project / ".wave" / "agents"
    reviewer = agents / "reviewer.md"
    reviewer.write_text("---\nname: reviewer\ndescription: d\nmodel: sonnet\n---\n")
    (agents / "fast.md").write_text("---\nname: fast\ndescription: d\nmodel: haiku\n---\n")
    (project / ".wave" / "settings.json").write_text('{"models": {"haiku": "small-model"}}')
    result = run_cli(home, "--json", "--cwd", str(project))
    assert result.returncode == 0, result.stdout
    data = json.loads(result.stdout)
    by_name = {a["name"]: a for a in data["agents"]}
    assert by_name["reviewer"]["modelNote"] == "sonnet -> inherit: no model set for this tier"
    assert by_name["reviewer"]["model"] == "sonnet" and by_name["reviewer"]["path"] == str(reviewer)
    assert by_name["fast"]["modelNote"] == "haiku -> small-model (settings: models.haiku)"
    assert "modelNote" not in by_name["Explore"]
    assert data["problems"] == []
    table = run_cli(home, "--cwd", str(project), WAVE_MODEL_SONNET="big-model")
    assert table.returncode == 0
    lines = table.stdout.splitlines()
    assert f"reviewer: {reviewer} (model sonnet -> big-model (env: WAVE_MODEL_SONNET))" in lines
    row = next(i for i, line in enumerate(lines) if "reviewer" in line and "│" in line)
    cell = " ".join(line.split("│")[3].strip() for line in lines[row : row + 2])
    assert cell.replace(" ", "") == "sonnet->big-model"  # the cell may fold


def test_models_the_endpoint_does_not_offer_are_warnings(
    dirs: tuple[Path, Path], fake_model: FakeModelServer
) -> None:
    # Issue 24 point 3: warned when the endpoint's model list is known.
    home, project = dirs
    agents = project / ".wave" / "agents"
    odd = agents / "odd.md"
    odd.write_text("---\nname: odd\ndescription: d\nmodel: fable\n---\n")
    (agents / "ok.md").write_text("---\nname: ok\ndescription: d\nmodel: fake-model\n---\n")
    (agents / "tier.md").write_text("---\nname: tier\ndescription: d\nmodel: opus\n---\n")
    endpoint = {"OPENAI_BASE_URL": fake_model.base_url, "OPENAI_API_KEY": "k"}
    result = run_cli(home, "--json", "--cwd", str(project), **endpoint)
    assert result.returncode == 1
    [problem] = json.loads(result.stdout)["problems"]
    assert (problem["path"], problem["line"], problem["severity"]) == (str(odd), 4, "warning")
    assert "'fable' is not a model the endpoint offers" in problem["message"]
    # Without an endpoint the list is unknown: nothing to say about 'fable'.
    assert run_cli(home, "--json", "--cwd", str(project)).returncode == 0


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
