"""``wave-ls doctor`` as a real subprocess: what it reports and its exit code (issue 17)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_model import FakeModelServer
from wave_ls.runtime.sandbox.landlock import abi_version

SECRET = "sk-do-not-print-me"


def doctor(cwd: Path, home: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "WAVE_"))}
    return subprocess.run(
        [sys.executable, "-m", "wave_ls", "doctor", "--cwd", str(cwd), *args],
        capture_output=True,
        text=True,
        env={**base, "HOME": str(home), **env},
        timeout=60,
        check=False,
    )


ENDPOINT = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "WAVE_MODEL": "m", "OPENAI_API_KEY": SECRET}


@pytest.fixture
def served(fake_model: FakeModelServer) -> dict[str, str]:
    """An endpoint that answers and serves the model (the fake model's `fake-model`)."""
    return {**ENDPOINT, "OPENAI_BASE_URL": fake_model.base_url, "WAVE_MODEL": "fake-model"}


def checks(done: subprocess.CompletedProcess[str]) -> dict[str, Any]:
    report = json.loads(done.stdout)
    return {check["name"]: check for check in report["checks"]}


def test_ready_machine(project: Path, home: Path, served: dict[str, str]) -> None:
    done = doctor(project, home, **served)
    assert done.returncode == 0, done.stdout
    lines = done.stdout.splitlines()
    for name in ("sandbox", "git", "ripgrep", "endpoint", "settings", "agents"):
        assert any(line.split()[1:2] == [name] for line in lines), name
    assert "git version" in done.stdout and "ripgrep" in done.stdout
    assert "OPENAI_API_KEY: set (not shown)" in done.stdout and SECRET not in done.stdout
    if abi_version() >= 1:
        assert lines[0].startswith("ok    sandbox   landlock (Landlock ABI")
        assert "tested" in lines[0]
    # What the permission message for plan mode points to (docs/sandbox.md).
    assert "without network (plan mode, Explore, Plan): " in done.stdout
    assert done.stdout.rstrip().endswith("Ready.")


def test_missing_endpoint_and_broken_agent_files_fail(project: Path, home: Path) -> None:
    agents = project / ".wave" / "agents"
    agents.mkdir(parents=True)
    (agents / "bad.md").write_text("---\nname: bad\n---\nno description\n")
    done = doctor(project, home, "--json")
    assert done.returncode == 1
    found = checks(done)
    assert (
        found["endpoint"]["level"] == "FAIL" and "OPENAI_BASE_URL" in found["endpoint"]["summary"]
    )
    assert found["agents"]["level"] == "FAIL"
    assert any("bad.md" in line for line in found["agents"]["details"])
    assert json.loads(done.stdout)["ok"] is False


def test_sandbox_asked_for_but_unavailable_fails(
    project: Path, home: Path, served: dict[str, str]
) -> None:
    (project / ".wave").mkdir()
    (project / ".wave" / "settings.json").write_text('{"sandbox": {"enabled": true}}')
    done = doctor(project, home, "--json", WAVE_SANDBOX="none", **ENDPOINT)
    assert done.returncode == 1
    sandbox = checks(done)["sandbox"]
    assert sandbox["level"] == "FAIL" and "disabled by WAVE_SANDBOX=none" in sandbox["summary"]
    assert "session sandbox: on" in sandbox["details"][-1]
    # Without the setting, no mechanism is only a warning (isolated runs say so).
    (project / ".wave" / "settings.json").write_text('{"sandbox": {"enabled": "yes"}}')
    done = doctor(project, home, "--json", WAVE_SANDBOX="none", **served)
    assert done.returncode == 0
    found = checks(done)
    assert found["sandbox"]["level"] == "warn"
    assert found["settings"]["level"] == "warn"
    assert "sandbox.enabled must be true or false" in found["settings"]["details"][0]


def test_agent_files_with_warnings_warn_and_exit_0(
    project: Path, home: Path, fake_model: FakeModelServer
) -> None:
    # Issue 24 point 5: agents that load with warnings are a warning, not a failure; a
    # model the endpoint does not offer (point 3) is one of them.
    agents = project / ".wave" / "agents"
    agents.mkdir(parents=True)
    (agents / "a.md").write_text("---\nname: a\ndescription: d\ntools: Read, Reed\n---\n")
    (agents / "b.md").write_text("---\nname: b\ndescription: d\nmodel: fable\n---\n")
    (agents / "c.md").write_text("---\nname: c\ndescription: d\nmodel: sonnet\n---\n")
    endpoint = {**ENDPOINT, "OPENAI_BASE_URL": fake_model.base_url, "WAVE_MODEL": "fake-model"}
    done = doctor(project, home, "--json", **endpoint)
    agents_check = checks(done)["agents"]
    assert agents_check["level"] == "warn", agents_check
    assert "2 warnings" in agents_check["summary"]
    details = agents_check["details"]
    assert any(line.startswith("warning: ") and "'Reed'" in line for line in details)
    assert any("'fable' is not a model the endpoint offers" in line for line in details)
    assert "model sonnet -> inherit: no model set for this tier" in details
    if checks(done)["sandbox"]["level"] != "FAIL":
        assert done.returncode == 0, done.stdout


def test_notes_only_are_ok(project: Path, home: Path) -> None:
    agents = project / ".wave" / "agents"
    agents.mkdir(parents=True)
    (agents / "a.md").write_text("---\nname: a\ndescription: d\ntools: Read, LS\n---\n")
    found = checks(doctor(project, home, "--json"))
    assert found["agents"]["level"] == "ok"
    assert "1 note" in found["agents"]["summary"]


def test_unusable_tier_settings_are_settings_warnings(project: Path, home: Path) -> None:
    (project / ".wave").mkdir()
    (project / ".wave" / "settings.json").write_text('{"models": {"sonnet": 3}}')
    found = checks(doctor(project, home, "--json"))
    assert found["settings"]["level"] == "warn"
    assert any("models.sonnet must be a model id" in line for line in found["settings"]["details"])


def test_the_endpoint_is_asked_for_the_model(
    project: Path, home: Path, fake_model: FakeModelServer
) -> None:
    # Issue 28 point 7: nothing listening, or a model it does not serve, fails (exit 1).
    dead = checks(doctor(project, home, "--json", **ENDPOINT))["endpoint"]
    assert dead["level"] == "FAIL" and "nothing answers there" in dead["summary"], dead
    unserved = {**ENDPOINT, "OPENAI_BASE_URL": fake_model.base_url, "WAVE_MODEL": "absent"}
    done = doctor(project, home, "--json", **unserved)
    endpoint = checks(done)["endpoint"]
    assert done.returncode == 1
    assert endpoint["level"] == "FAIL" and "not served by this endpoint" in endpoint["summary"]
    assert "fake-model" in endpoint["summary"]
    assert "/v1/models" in [r["path"] for r in fake_model.requests()]
    served = {**unserved, "WAVE_MODEL": "fake-model"}
    endpoint = checks(doctor(project, home, "--json", **served))["endpoint"]
    assert endpoint["level"] == "ok" and endpoint["summary"].endswith(": served"), endpoint
    assert SECRET not in json.dumps(endpoint)


def test_a_reader_that_leaves_early_gets_no_traceback(project: Path, home: Path) -> None:
    # `wave-ls doctor | head -1`: the pipe's reader is gone before doctor writes.
    read_end, write_end = os.pipe()
    os.close(read_end)
    base = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "WAVE_"))}
    done = subprocess.run(
        [sys.executable, "-m", "wave_ls", "doctor", "--cwd", str(project)],
        stdout=write_end,
        stderr=subprocess.PIPE,
        text=True,
        env={**base, "HOME": str(home)},
        timeout=60,
        check=False,
    )
    os.close(write_end)
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
    assert done.returncode != 0


def test_a_typo_in_wave_sandbox_falls_back_to_detection(
    project: Path, home: Path, served: dict[str, str]
) -> None:
    # Issue 28 point 9: WAVE_SANDBOX=landlok used to turn the sandbox off.
    sandbox = checks(doctor(project, home, "--json", WAVE_SANDBOX="landlok", **served))["sandbox"]
    assert "WAVE_SANDBOX='landlok' is not one of landlock, bubblewrap, none" in sandbox["summary"]
    expected = checks(doctor(project, home, "--json", **served))["sandbox"]
    assert sandbox["level"] == expected["level"]
    assert sandbox["summary"].split(" (")[0] == expected["summary"].split(" (")[0]
    if abi_version() >= 1:
        assert sandbox["summary"].startswith("landlock") and "tested" in sandbox["summary"]
