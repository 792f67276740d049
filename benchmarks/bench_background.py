"""Many background subagents at once (issue 7).

A real ``wave-ls --stdio`` process and a plain pygls client; the offline model in its own
process answers every round after 200 ms. The main agent starts N subagents with
``run_in_background: true`` in one message; each makes one ``Glob`` call, then answers (two
rounds). Wall time runs from the first task starting to the last task ending, as the client
sees them in ``wave/session/update`` ``task`` updates; N = 20 is compared with N = 1.
Memory per running subagent: the server's RSS while the 20 run, minus its RSS before, / 20.

    .venv/bin/python benchmarks/bench_background.py [--quick]

Targets: all complete; 20 within 1.5x of one.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from pathlib import Path
from typing import Any

from common import (
    BenchClient,
    FakeModelProcess,
    check,
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


async def run_batch(client: BenchClient, session_id: str, count: int) -> tuple[float, int, float]:
    """Wall seconds for ``count`` background runs, how many completed, peak RSS (MB)."""
    client.clear()
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
    completed = sum(1 for s in status.values() if s == "completed")
    wall = max(ended.values()) - min(started.values()) if ended else float("nan")
    await asyncio.sleep(0.5)  # the turn that reads the notices
    return wall, completed, peak


async def main(quick: bool) -> int:
    many = 5 if quick else 20
    heading(f"Background subagents (200 ms per model round, {many} at once)")
    with tempfile.TemporaryDirectory(prefix="wave-bench-bg-") as tmp:
        home, project = Path(tmp) / "home", Path(tmp) / "project"
        home.mkdir()
        (project / "src").mkdir(parents=True)
        for k in range(10):
            (project / "src" / f"m{k}.py").write_text("x = 1\n")
        write_agent(
            project / ".wave" / "agents", "bench-helper", "Finds files.", "bench helper", "Glob"
        )
        with FakeModelProcess(script((1, many))) as model:
            env = server_env(home, **model.env())
            async with wave_server(env, root=project) as client:
                session = await client.request("wave/session/new", {"cwd": str(project)})
                sid = session["sessionId"]
                one, done_one, _ = await run_batch(client, sid, 1)
                idle = rss_mb(client.pid)
                wall, done, peak = await run_batch(client, sid, many)
    met = check(f"all {many} background subagents completed", done == many, f"{done}/{many}")
    met &= check("the single background subagent completed", done_one == 1)
    figure("one background subagent, wall", one * 1000, "ms")
    figure(f"{many} background subagents at once, wall", wall * 1000, "ms")
    met &= figure(f"ratio {many} : 1", wall / one, "x", target=TARGET_RATIO)
    figure("server RSS before", idle, "MB")
    figure(f"server RSS peak with {many} running", peak, "MB")
    figure("memory per running subagent", max(peak - idle, 0) / many, "MB")
    return 0 if met else 1


if __name__ == "__main__":
    options = parse_options(__doc__)
    run_async(main(options.quick))
