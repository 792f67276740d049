"""Compaction and context usage in the Neovim plugin (issue 27 points 3-4): headless Neovim
0.11, a real ``wave-ls`` started by the plugin, the offline model; the scenario is
``tests/neovim/compact.lua``."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.fake_model import FakeModelServer, reply, route
from tests.support.neovim import nvim_env, run_scenario

SUMMARY = "SUMMARY-OF-EARLIER-WORK"
SUMMARIZER = "You summarize a coding session"  # the summary request's system prompt

SCRIPT = {
    "routes": [
        # First: a summary request also quotes the other routes' texts.
        route("", reply(SUMMARY), system=SUMMARIZER),
        route("first question", reply("first answer " * 40)),
        route("slow story", reply("once upon a time " * 40, chunk_size=10, chunk_delay=0.05)),
    ]
}


def test_compact_in_the_chat_input_its_line_and_the_statusline_component(
    project: Path, home: Path
) -> None:
    with FakeModelServer(SCRIPT) as model:
        env = nvim_env(home, model, WAVE_CONTEXT_WINDOW="32000")
        run_scenario("compact", project, env)
        summaries = [
            body
            for body in model.chat_bodies()
            if SUMMARIZER in str(body["messages"][0]["content"])
        ]
    assert len(summaries) == 1
    assert "keep the numbers" in json.dumps(summaries[0]["messages"])
