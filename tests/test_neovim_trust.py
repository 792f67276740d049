"""Workspace trust in the Neovim plugin (issue 25, point 1): headless Neovim 0.11, a real
``wave-ls`` started by the plugin, the offline model; the scenario is
``tests/neovim/workspace_trust.lua``."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.fake_model import FakeModelServer, call, reply, route
from tests.support.git_repos import commit_all, write_files
from tests.support.neovim import nvim_env, run_scenario

SCRIPT = {
    "routes": [
        route(
            "make the file", reply("", call("Bash", {"command": "touch made.txt"})), reply("Ok.")
        ),
    ],
    "default": {"content": "Noted."},
}


def test_asked_once_with_vim_ui_select_held_back_shown_and_lifted_by_wave_trust(
    project: Path, home: Path
) -> None:
    write_files(project, {".wave/settings.json": json.dumps({"sandbox": {"enabled": True}})})
    commit_all(project, "ship settings")
    with FakeModelServer(SCRIPT) as model:
        run_scenario("workspace_trust", project, nvim_env(home, model))
    kept = json.loads((home / ".wave" / "trust.json").read_text())["folders"]
    assert kept[str(project.resolve())]["trusted"] is True
