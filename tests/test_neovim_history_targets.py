"""A history reloaded in the Neovim chat names each call's target as its live block did
(issue 29 point 3): headless Neovim 0.11, a real ``wave-ls`` started by the plugin, the
offline model; the scenario is ``tests/neovim/history_targets.lua``."""

from __future__ import annotations

from pathlib import Path

from tests.support.fake_model import FakeModelServer, call, reply, route
from tests.support.neovim import nvim_env, run_scenario

SCRIPT = {
    "routes": [
        route(
            "show the targets",
            # ``path`` written first: a renderer guessing from the arguments would show it.
            reply("", call("Grep", {"path": "src", "pattern": "def answer"})),
            reply("Targets shown."),
        )
    ]
}


def test_a_reloaded_history_shows_the_target_its_block_showed(project: Path, home: Path) -> None:
    with FakeModelServer(SCRIPT) as model:
        run_scenario("history_targets", project, nvim_env(home, model))
