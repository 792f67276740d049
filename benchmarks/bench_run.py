"""``wave-ls run``: start to the first model request, and exit after the answer (issue 18).

Each round, interleaved so that the machine's load hits both alike:

- a bare ``python -c "import openai"``: the SDK's import, the floor of any start (wall time);
- ``wave-ls run "<prompt>"`` in a small git project with its own agent file, against the
  offline model (in its own process): from spawning the process to the model receiving the
  first request (the model's clock is this machine's ``time.time()``), and from the answer's
  line arriving on stdout to the process having exited.

    .venv/bin/python benchmarks/bench_run.py [--quick]

Targets: start to the first model request <= 1.1x the bare ``import openai`` (medians of the
same run); process exit <= 50 ms after the answer is printed.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from common import (
    GIT_ENV,
    PYTHON,
    FakeModelProcess,
    figure,
    git,
    heading,
    model_script,
    note,
    parse_options,
    server_env,
    write_agent,
)

ANSWER = "All done: the answer is 42."
START_RATIO = 1.1
EXIT_MS = 50.0


def import_openai() -> float:
    started = time.perf_counter()
    subprocess.run([PYTHON, "-c", "import openai"], check=True)
    return time.perf_counter() - started


SDK_ONLY = """
import asyncio, os, openai
async def main():
    client = openai.AsyncOpenAI()
    stream = await client.chat.completions.create(
        model="bench-model", messages=[{"role": "user", "content": "hi"}], stream=True
    )
    async for _ in stream:
        pass
asyncio.run(main())
"""


def sdk_only(model: FakeModelProcess, home: Path) -> float:
    """The SDK by itself: process start to the model receiving one streamed request."""
    model.reset()
    env = {**server_env(home), **model.env()}
    spawned = time.time()
    subprocess.run([PYTHON, "-c", SDK_ONLY], check=True, env=env, stdout=subprocess.DEVNULL)
    return model.records()[0]["time"] - spawned


def one_run(model: FakeModelProcess, project: Path, home: Path) -> tuple[float, float]:
    """(start to first request, answer printed to exit), in seconds."""
    model.reset()
    env = {**server_env(home), **model.env(), **GIT_ENV}
    spawned = time.time()
    process = subprocess.Popen(
        [PYTHON, "-m", "wave_ls", "run", "what is the answer?", "--cwd", str(project)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        text=True,
    )
    assert process.stdout is not None
    printed = None
    for line in process.stdout:
        if ANSWER in line:
            printed = time.perf_counter()
    process.wait()
    exited = time.perf_counter()
    assert process.returncode == 0 and printed is not None, process.returncode
    first = model.records()[0]["time"]
    return first - spawned, exited - printed


def main() -> None:
    options = parse_options(__doc__)
    rounds = 3 if options.quick else 7
    with tempfile.TemporaryDirectory(prefix="wave-bench-run-") as tmp:
        root = Path(tmp)
        home, project = root / "home", root / "project"
        home.mkdir()
        project.mkdir()
        (project / "README.md").write_text("# demo\n")
        (project / "AGENTS.md").write_text("Answer briefly.\n")
        write_agent(
            project / ".wave" / "agents",
            "reviewer",
            "Reviews changes for style.",
            "You review.",
            "Read, Grep",
        )
        git(project, "init", "-q", "-b", "main")
        git(project, "add", "-A")
        git(project, "commit", "-qm", "initial")
        script = model_script([{"match": "", "steps": [{"content": ANSWER}]}])
        with FakeModelProcess(script) as model:
            one_run(model, project, home)  # warm the OS caches and the parse cache
            imports, sdks, starts, exits = [], [], [], []
            for _ in range(rounds):
                imports.append(import_openai())
                sdks.append(sdk_only(model, home))
                start, exit_ = one_run(model, project, home)
                starts.append(start)
                exits.append(exit_)
    base, start = statistics.median(imports), statistics.median(starts)
    heading(f"wave-ls run, one short turn (medians of {rounds}, interleaved)")
    figure('bare python -c "import openai"', base * 1000, "ms")
    figure(
        "the SDK alone: process start to its first request", statistics.median(sdks) * 1000, "ms"
    )
    figure("wave-ls run: process start to the first model request", start * 1000, "ms")
    figure("start vs the bare import", start / base, "x", START_RATIO)
    figure(
        "process exit after the answer is printed", statistics.median(exits) * 1000, "ms", EXIT_MS
    )
    note(
        f"start: min {min(starts) * 1000:.0f} ms, max {max(starts) * 1000:.0f} ms; "
        f"import: min {min(imports) * 1000:.0f} ms, max {max(imports) * 1000:.0f} ms"
    )
    note(f"exit: min {min(exits) * 1000:.0f} ms, max {max(exits) * 1000:.0f} ms")
    note(f"cores: {os.cpu_count()}")


if __name__ == "__main__":
    main()
