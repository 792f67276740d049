"""Many background subagents at once (issue 7).

A real ``wave-ls --stdio`` process and a plain pygls client; the offline model in its own
process answers every round after 200 ms. The main agent starts N subagents with
``run_in_background: true`` in one message; each makes one ``Glob`` call, then answers (two
rounds). Wall time runs from the first task starting to the last task ending, as the client
sees them in ``wave/session/update`` ``task`` updates; N = 20 is compared with N = 1, each batch
in a new session.
Batches of 1 and of 20 alternate (after a warm-up of each), nine of each: the ratio compares
the best of each (what the code costs when nothing else on the machine gets in the way; a
loaded 2-core machine otherwise decides it), and the ratio of the medians is shown beside it.
The server's CPU time per batch shows what the 20 cost the server itself.
Memory per running subagent: the server's RSS while the 20 run, minus its RSS before, / 20.

    .venv/bin/python benchmarks/bench_background.py [--quick]

Targets: all complete; 20 within 1.5x of one. Exits 0 when a target is missed (the line says
MISS); non-zero only when it could not run.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from common import (
    BenchClient,
    FakeModelProcess,
    check,
    cpu_seconds,
    figure,
    heading,
    model_script,
    parse_options,
    rss_mb,
    run_async,
    server_env,
    wave_server,
    write_agent,
)

ROUND_DELAY = 0.2
TARGET_RATIO = 1.5


def script(counts: tuple[int, ...]) -> dict[str, Any]:
    glob = {"name": "Glob", "arguments": {"pattern": "**/*.py"}}
    routes: list[dict[str, Any]] = [
        {
            "match": "bg-task",
            "system": "bench helper",
            "steps": [
                {"content": "", "tool_calls": [glob], "delay": ROUND_DELAY},
                {"content": "Found the files.", "delay": ROUND_DELAY},
            ],
        },
        {"match": "<task-notification>", "steps": [{"content": "Noted."}]},
    ]
    for count in counts:
        calls = [
            {
                "name": "Agent",
                "arguments": {
                    "subagent_type": "bench-helper",
                    "description": f"background {k}",
                    "prompt": f"bg-task-{k}: find the python files",
                    "run_in_background": True,
                },
            }
            for k in range(count)
        ]
        routes.append(
            {
                "match": f"background-bench-{count}:",
                "steps": [{"content": "", "tool_calls": calls}, {"content": "Started them."}],
            }
        )
    return model_script(routes)


def task_times(client: BenchClient) -> tuple[dict[str, float], dict[str, float], dict[str, str]]:
    started: dict[str, float] = {}
    ended: dict[str, float] = {}
    status: dict[str, str] = {}
    for at, update in client.updates:
        if update.get("kind") != "task":
            continue
        task = update["task"]
        started.setdefault(task["taskId"], at)
        status[task["taskId"]] = task["status"]
        if task["status"] != "running":
            ended.setdefault(task["taskId"], at)
    return started, ended, status


async def run_batch(
    client: BenchClient, project: Path, count: int
) -> tuple[float, int, float, float]:
    """Wall seconds for ``count`` background runs, how many completed, peak RSS (MB), and
    the server's CPU seconds meanwhile. Each batch in a new session: every batch starts
    from the same empty history (like with like)."""
    session = await client.request("wave/session/new", {"cwd": str(project)})
    session_id = session["sessionId"]
    client.clear()
    cpu = cpu_seconds(client.pid)
    text = f"background-bench-{count}: start them"
    await client.request("wave/chat/send", {"sessionId": session_id, "text": text})
    peak = rss_mb(client.pid)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        started, ended, status = task_times(client)
        peak = max(peak, rss_mb(client.pid))
        if len(started) == count and len(ended) == count:
            break
        await asyncio.sleep(0.02)
    started, ended, status = task_times(client)
    cpu = cpu_seconds(client.pid) - cpu
    completed = sum(1 for s in status.values() if s == "completed")
    wall = max(ended.values()) - min(started.values()) if ended else float("nan")
    await asyncio.sleep(0.5)  # the turn that reads the notices
    return wall, completed, peak, cpu


async def main(quick: bool) -> int:
    many = 5 if quick else 20
    repeats = 2 if quick else 9
    heading(f"Background subagents (200 ms per model round, {many} at once)")
    with tempfile.TemporaryDirectory(prefix="wave-bench-bg-") as tmp:
        home, project = Path(tmp) / "home", Path(tmp) / "project"
        home.mkdir()
        # Twenty (five) subagents at once measure parallelism, not the default bound of 4 a
        # session runs at once (agent.maxConcurrent, issue 27): the bound is lifted to all.
        (home / ".wave").mkdir()
        settings = {"agent": {"maxConcurrent": many}}
        (home / ".wave" / "settings.json").write_text(json.dumps(settings))
        (project / "src").mkdir(parents=True)
        for k in range(10):
            (project / "src" / f"m{k}.py").write_text("x = 1\n")
        write_agent(
            project / ".wave" / "agents", "bench-helper", "Finds files.", "bench helper", "Glob"
        )
        with FakeModelProcess(script((1, many))) as model:
            env = server_env(home, **model.env())
            async with wave_server(env, root=project) as client:
                await run_batch(client, project, 1)  # warm-up: the SDK, the first connections
                idle = rss_mb(client.pid)
                await run_batch(client, project, many)
                ones: list[tuple[float, int, float, float]] = []
                manys: list[tuple[float, int, float, float]] = []
                for _ in range(repeats):
                    ones.append(await run_batch(client, project, 1))
                    manys.append(await run_batch(client, project, many))
    done_one = min(run[1] for run in ones)
    done = min(run[1] for run in manys)
    check(f"all {many} background subagents completed", done == many, f"{done}/{many}, each batch")
    check("the single background subagent completed", done_one == 1, "each batch")
    one, wall = min(run[0] for run in ones), min(run[0] for run in manys)
    figure("one background subagent, wall (best)", one * 1000, "ms")
    figure(f"{many} background subagents at once, wall (best)", wall * 1000, "ms")
    figure(
        f"ratio {many} : 1",
        wall / one,
        "x",
        target=TARGET_RATIO,
        note=f"best of {repeats} each, alternating",
    )
    median_one = statistics.median(run[0] for run in ones)
    median_many = statistics.median(run[0] for run in manys)
    figure(
        f"  ratio {many} : 1 of the medians, for comparison",
        median_many / median_one,
        "x",
        note=f"{median_many * 1000:.0f} ms vs {median_one * 1000:.0f} ms",
    )
    cpu_one = statistics.median(run[3] for run in ones)
    cpu_many = statistics.median(run[3] for run in manys)
    figure(
        f"server CPU per batch of {many}",
        cpu_many * 1000,
        "ms",
        note=f"{cpu_one * 1000:.0f} ms for one; 10 ms ticks; median",
    )
    peak = max(run[2] for run in manys)
    figure("server RSS before", idle, "MB")
    figure(f"server RSS peak with {many} running", peak, "MB")
    figure("memory per running subagent", max(peak - idle, 0) / many, "MB")
    return 0


if __name__ == "__main__":
    options = parse_options(__doc__)
    run_async(main(options.quick))
