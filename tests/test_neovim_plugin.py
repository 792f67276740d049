"""The Neovim plugin (``editors/neovim``) end to end: headless Neovim 0.11, a real
``wave-ls`` started by the plugin, the offline model. Each test runs one Lua scenario from
``tests/neovim/`` (what it checks is written there)."""

from __future__ import annotations

from pathlib import Path

from tests.support.git_repos import init_repo
from tests.support.neovim import nvim_env, run_scenario

REVIEWER = """\
---
name: reviewer
description: Reviews a change for bugs.
tools: Read, Grep
---
You review changes.
"""


def write_agent(root: Path, name: str, text: str) -> None:
    folder = root / ".wave" / "agents"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.md").write_text(text, encoding="utf-8")


def test_setup_starts_one_client_per_root_and_attaches_to_agent_files(
    project: Path, home: Path, tmp_path: Path
) -> None:
    write_agent(project, "reviewer", REVIEWER)
    write_agent(home, "mine", REVIEWER.replace("reviewer", "mine"))
    other = init_repo(tmp_path / "other", {"README.md": "# other\n"})
    write_agent(other, "helper", REVIEWER.replace("reviewer", "helper"))
    env = nvim_env(home, WAVE_TEST_OTHER_PROJECT=str(other))
    run_scenario("setup_and_attach", project, env)
