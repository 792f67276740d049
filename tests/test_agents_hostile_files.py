"""Agent files an attacker (or an accident) could leave: each is a problem for that file
only, and every other agent still loads (issue 12, defect 2)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.fake_model import FakeModelServer, reply, route
from tests.support.lsp import server_env, wave_client
from wave_ls.agents import AgentRegistry
from wave_ls.agents.registry import MAX_FILE_BYTES

GOOD = "---\nname: good-agent\ndescription: Still loads.\n---\nYou are good.\n"
DEEP = "---\nname: deep\ndescription: d\nx: " + "[" * 500 + "]" * 500 + "\n---\nBody\n"


def agents_dir(root: Path) -> Path:
    folder = root / ".wave" / "agents"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "good-agent.md").write_text(GOOD, encoding="utf-8")
    return folder


def make(folder: Path, kind: str) -> list[str]:
    """Create one hostile entry; the names of the files that must be reported."""
    if kind == "deep-nesting":
        (folder / "deep.md").write_text(DEEP, encoding="utf-8")
        return ["deep.md"]
    if kind == "deep-block-nesting":
        lines = "".join(" " * depth + f"k{depth}:\n" for depth in range(3000))
        (folder / "block.md").write_text(f"---\nname: b\ndescription: d\nx:\n{lines}---\n")
        return ["block.md"]
    if kind == "symlink-loop":
        (folder / "a.md").symlink_to(folder / "b.md")
        (folder / "b.md").symlink_to(folder / "a.md")
        return ["a.md", "b.md"]
    if kind == "dangling-symlink":
        (folder / "gone.md").symlink_to(folder / "nowhere.md")
        return ["gone.md"]
    if kind == "fifo":
        os.mkfifo(folder / "pipe.md")
        return ["pipe.md"]
    if kind == "device":
        (folder / "dev.md").symlink_to("/dev/zero")
        return ["dev.md"]
    if kind == "directory":
        # A link to its own folder: a subdirectory loop if it were followed; it is not.
        (folder / "x.md").symlink_to(folder)
        return ["x.md"]
    if kind == "huge":
        with open(folder / "huge.md", "wb") as handle:
            handle.truncate(2 * 1024**3)  # sparse: 2 GB that cost nothing to make
        return ["huge.md"]
    if kind == "big-frontmatter":
        keys = "".join(f"k{i}: v\n" for i in range(20_000))
        (folder / "wide.md").write_text(f"---\nname: w\ndescription: d\n{keys}---\n")
        return ["wide.md"]
    raise AssertionError(kind)


KINDS = [
    "deep-nesting",
    "deep-block-nesting",
    "symlink-loop",
    "dangling-symlink",
    "fifo",
    "device",
    "directory",
    "huge",
    "big-frontmatter",
]


@pytest.mark.parametrize("kind", KINDS)
def test_a_hostile_entry_is_a_problem_of_its_own(kind: str, tmp_path: Path, home: Path) -> None:
    project = tmp_path / "project"
    folder = agents_dir(project)
    reported = make(folder, kind)
    started = time.perf_counter()
    catalog = AgentRegistry(home).load(project)
    elapsed = time.perf_counter() - started
    assert catalog.get("good-agent") is not None
    assert catalog.get("Explore") is not None
    problem_files = sorted(Path(p.path).name for p in catalog.problems)
    assert problem_files == sorted(reported), catalog.problems
    assert all(p.severity == "error" for p in catalog.problems)
    assert elapsed < 5, f"loading took {elapsed:.1f} s"


def test_the_size_is_checked_before_reading(tmp_path: Path, home: Path) -> None:
    project = tmp_path / "project"
    folder = agents_dir(project)
    (folder / "big.md").write_bytes(b"x" * (MAX_FILE_BYTES + 1))
    [problem] = AgentRegistry(home).load(project).problems
    assert "at most 1,048,576" in problem.message
    (folder / "big.md").write_bytes(GOOD.replace("good-agent", "big").encode())
    assert AgentRegistry(home).load(project).get("big") is not None


async def test_a_deep_user_file_breaks_nothing_over_lsp(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    agents_dir(home)
    (home / ".wave" / "agents" / "deep.md").write_text(DEEP, encoding="utf-8")
    fake_model.set_script({"routes": [route("hello", reply("Hi."))]})
    async with wave_client(server_env(home, fake_model.base_url), root=project) as client:
        listed = await client.request("wave/agents/list", {"cwd": str(project)})
        assert "good-agent" in [agent["name"] for agent in listed["agents"]]
        [problem] = listed["problems"]
        assert problem["path"].endswith("deep.md")
        assert "levels deep" in problem["message"]
        completion = await client.request("wave/chatInput/completion", {"text": "@good"})
        assert completion["items"][0]["label"] == "good-agent"
        sid = (await client.request("wave/session/new", {"cwd": str(project)}))["sessionId"]
        result = await client.request("wave/chat/send", {"sessionId": sid, "text": "hello"})
        assert result == {**result, "status": "completed", "text": "Hi."}


def test_the_cli_reports_a_deep_file_without_a_traceback(tmp_path: Path, home: Path) -> None:
    project = tmp_path / "project"
    folder = agents_dir(project)
    make(folder, "deep-nesting")
    make(folder, "symlink-loop")
    done = subprocess.run(
        [sys.executable, "-m", "wave_ls", "agents", "--cwd", str(project), "--json"],
        capture_output=True,
        text=True,
        env={**os.environ, "HOME": str(home)},
        timeout=60,
    )
    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr
    out = json.loads(done.stdout)
    assert "good-agent" in [agent["name"] for agent in out["agents"]]
    assert sorted(Path(p["path"]).name for p in out["problems"]) == ["a.md", "b.md", "deep.md"]


def test_deep_nesting_is_refused_before_the_yaml_parser_runs() -> None:
    # 10,000 levels took the YAML scanner seconds (its cost grows with the depth squared).
    from wave_ls.agents import parse_agent_file

    text = "---\nname: d\ndescription: d\nx: " + "[" * 10_000 + "]" * 10_000 + "\n---\n"
    started = time.perf_counter()
    definition, [problem] = parse_agent_file(Path("/p/deep.md"), text, "project")
    assert time.perf_counter() - started < 0.5
    assert definition is None
    assert (problem.line, "more than 32 levels deep" in problem.message) == (4, True)
