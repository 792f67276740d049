"""Installing the Neovim plugin as documented (issue 28 point 3): headless Neovim 0.11 with
only the documented lazy.nvim spec's effect; the scenario is ``tests/neovim/lazy_spec.lua``."""

from __future__ import annotations

import re
from pathlib import Path

from tests.support.fake_model import FakeModelServer
from tests.support.neovim import PLUGIN, REPO, nvim_env, run_scenario


def lazy_specs(text: str) -> list[str]:
    """The Lua blocks of a doc that are lazy.nvim specs (a table naming the plugin)."""
    blocks = re.findall(r"```lua\n(.*?)```", text, re.S) + re.findall(r">lua\n(.*?)\n<", text, re.S)
    return [block for block in blocks if 'main = "wave"' in block or "editors/neovim" in block]


def test_the_documented_specs_load_at_start_up_from_the_clone() -> None:
    for doc in (REPO / "README.md", PLUGIN / "doc" / "wave.txt"):
        specs = lazy_specs(doc.read_text(encoding="utf-8"))
        assert specs, doc
        for spec in specs:
            # A spec that lazy-loads on a command leaves :help and :checkhealth without the
            # plugin; a placeholder GitHub name cannot be cloned.
            assert 'cmd = { "Wave' not in spec, (doc, spec)
            assert '"wave-ls/wave-ls"' not in spec, (doc, spec)
            if "dir =" in spec or "url =" in spec:
                assert "lazy = false" in spec, (doc, spec)


def test_help_and_checkhealth_work_at_once_with_the_documented_spec(
    project: Path, home: Path
) -> None:
    with FakeModelServer({"routes": []}) as model:
        run_scenario("lazy_spec", project, nvim_env(home, model), on_runtimepath=False)
