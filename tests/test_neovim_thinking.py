"""A model's reasoning in the Neovim chat (issue 27): headless Neovim 0.11, a real ``wave-ls``
started by the plugin, the offline model streaming ``reasoning_content``; the scenario is
``tests/neovim/thinking.lua``."""

from __future__ import annotations

from pathlib import Path

from tests.support.fake_model import FakeModelServer, reply, route
from tests.support.neovim import nvim_env, run_scenario

THOUGHT = "First, greet the user back.\nKeep it short: no tools are needed."
SCRIPT = {
    "routes": [
        route("say hello", reply("Hello there!", reasoning_content=THOUGHT, chunk_size=6)),
    ]
}


def test_reasoning_is_one_folded_dim_line_before_the_answer(project: Path, home: Path) -> None:
    with FakeModelServer(SCRIPT) as model:
        run_scenario("thinking", project, nvim_env(home, model))
        (body,) = model.chat_bodies()
    assert "greet the user back" not in str(body)
