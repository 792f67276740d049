"""``wave-ls run``: start to the first model request, and exit after the answer (issue 18).

Each round, interleaved so that the machine's load hits both alike:

- a bare ``python -c "import openai"``: the SDK's import, the floor of any start (wall time);
- ``wave-ls run "<prompt>"`` in a small git project with its own agent file, against the
  offline model (in its own process): from spawning the process to the model receiving the
  first request (the model's clock is this machine's ``time.time()``), and from the answer's
  line arriving on stdout to the process having exited.

    .venv/bin/python benchmarks/bench_run.py [--quick]

Fifteen rounds; the target's ratio is the median of the fifteen rounds' ratios (each
round's runs follow one another and share the machine's load; no single lucky run decides
it), with the ratio of the best of each and the medians beside it, and the CPU time of
each whole process (``wait4``), which load does not change: the SDK alone (import, client,
one streamed request) against all of ``wave-ls run``.

Targets: start to the first model request <= 1.1x the bare ``import openai``; process exit
<= 50 ms after the answer is printed.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from common import (
    GIT_ENV,
    PYTHON,
    FakeModelProcess,
    figure,
    git,
    heading,
    model_script,
    note,
    paired_ratio,
    parse_options,
    server_env,
    write_agent,
)

ANSWER = "All done: the answer is 42."
START_RATIO = 1.1
EXIT_MS = 50.0


def import_openai() -> tuple[float, float]:
    """(wall seconds, CPU seconds) of a bare ``python -c "import openai"``."""
    started = time.perf_counter()
    process = subprocess.Popen([PYTHON, "-c", "import openai"])
    cpu = _cpu_of(process)
    return time.perf_counter() - started, cpu


def _cpu_of(process: subprocess.Popen[Any]) -> float:
    """Wait for ``process``; the CPU seconds (user + system) it used."""
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    assert process.returncode == 0, process.returncode
    return usage.ru_utime + usage.ru_stime


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


def sdk_only(model: FakeModelProcess, home: Path) -> tuple[float, float]:
    """The SDK by itself: (process start to the model receiving one streamed request, the
    CPU seconds of the whole process: import, client, request, stream, exit)."""
    model.reset()
    env = {**server_env(home), **model.env()}
    spawned = time.time()
    process = subprocess.Popen([PYTHON, "-c", SDK_ONLY], env=env, stdout=subprocess.DEVNULL)
    cpu = _cpu_of(process)
    return model.records()[0]["time"] - spawned, cpu


def one_run(model: FakeModelProcess, project: Path, home: Path) -> tuple[float, float, float]:
    """(start to first request, answer printed to exit, CPU of the whole process), in
    seconds."""
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
    cpu = _cpu_of(process)
    exited = time.perf_counter()
    assert printed is not None
    first = model.records()[0]["time"]
    return first - spawned, exited - printed, cpu


def main() -> None:
    options = parse_options(__doc__)
    rounds = 3 if options.quick else 15
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
            import_cpu, sdk_cpu, run_cpu = [], [], []
            for _ in range(rounds):
                wall, cpu = import_openai()
                imports.append(wall)
                import_cpu.append(cpu)
                wall, cpu = sdk_only(model, home)
                sdks.append(wall)
                sdk_cpu.append(cpu)
                start, exit_, cpu = one_run(model, project, home)
                starts.append(start)
                exits.append(exit_)
                run_cpu.append(cpu)
    heading(f"wave-ls run, one short turn ({rounds} interleaved rounds)")
    figure('bare python -c "import openai", best', min(imports) * 1000, "ms")
    figure("the SDK alone: process start to its first request, best", min(sdks) * 1000, "ms")
    figure("wave-ls run: process start to the first model request, best", min(starts) * 1000, "ms")
    figure(
        "start vs the bare import (median of the rounds' ratios)",
        paired_ratio(starts, imports),
        "x",
        START_RATIO,
        note=f"best of each: {min(starts) / min(imports):.2f}x; medians "
        f"{statistics.median(starts) * 1000:.0f} / {statistics.median(imports) * 1000:.0f} ms",
    )
    figure(
        "process exit after the answer is printed", statistics.median(exits) * 1000, "ms", EXIT_MS
    )
    note(
        f"CPU of the whole process, medians: bare import {statistics.median(import_cpu) * 1000:.0f}"
        f" ms, the SDK alone (import, client, one streamed request) "
        f"{statistics.median(sdk_cpu) * 1000:.0f} ms, wave-ls run (all of it, exit included) "
        f"{statistics.median(run_cpu) * 1000:.0f} ms: "
        f"{statistics.median(run_cpu) / statistics.median(sdk_cpu):.2f}x the SDK alone"
    )
    note(f"exit: min {min(exits) * 1000:.0f} ms, max {max(exits) * 1000:.0f} ms")
    note(f"cores: {os.cpu_count()}")


if __name__ == "__main__":
    main()
