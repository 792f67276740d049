"""Tool blocks in the Neovim plugin name the target the server computed (issue 29 point 3):
headless Neovim 0.11, a real ``wave-ls`` started by the plugin, the offline model; the
scenario is ``tests/neovim/tool_targets.lua``."""

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
            reply("", call("TaskOutput", {"block": False, "task_id": "bash-nope"})),
            reply("Targets shown."),
        )
    ]
}


def test_tool_lines_show_the_servers_target(project: Path, home: Path) -> None:
    with FakeModelServer(SCRIPT) as model:
        run_scenario("tool_targets", project, nvim_env(home, model))
