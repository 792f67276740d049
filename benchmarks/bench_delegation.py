"""What delegating to a subagent costs (no isolation), and how parallel subagents scale.

A real ``wave-ls --stdio`` process and a plain pygls client; the offline model in its own
process records when each request arrives (its ``time``, the same clock as ours).

Overhead, zero-latency model: the main agent calls ``Agent`` once; the subagent makes one
``Glob`` call, then answers. From the model's records:

- launch: main request 1 arrives -> subagent request 1 arrives, minus the time the main
  reply takes from the model server to a parsed response (measured by replaying that
  request through a bare ``OpenAIModelClient`` and taking the model server's arrival time
  of the replay to the end of ``complete``). What remains is ours: from the ``Agent`` call
  being known to the subagent's first request reaching the model.
- return: subagent's last request arrives -> main request 2 (carrying the tool result)
  arrives, minus the reply time of the subagent's last request, measured the same way.

Parallel, every model round takes 200 ms (``delay: 0.2`` on every step, main and subagent),
2 rounds per subagent: ten ``Agent`` calls in one message vs one. The delegation phase runs
from the first ``Agent`` block update to the last block's completion (as the client receives
them); the whole turn is shown too.

    .venv/bin/python benchmarks/bench_delegation.py [--quick] [--profile]

``--profile`` also runs ten parallel subagents in-process (``AgentSession``, no model
delay) under cProfile and prints the top by own time: where the server's CPU goes.

Targets (issue 5): launch and return <= 20 ms each; ten in parallel within 1.3x of one.
"""

from __future__ import annotations

import asyncio
import cProfile
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common import (
    API_KEY,
    MODEL,
    SDK_PARTS,
    BenchClient,
    FakeModelProcess,
    cpu_seconds,
    figure,
    git,
    heading,
    listen_overflows,
    make_git_repo,
    model_script,
    note,
    parse_options,
    print_profile,
    print_shares,
    run_async,
    server_env,
    system_of,
    wave_server,
    write_agent,
)

from wave_ls.runtime.core import ModelRequest
from wave_ls.runtime.model_client import OpenAIModelClient

GAP_TARGET_MS = 20.0
ISOLATION_TARGET_MS = 20.0
PARALLEL_TARGET = 1.3
SEND = "wave/chat/send"
HELPER_SYSTEM = "bench helper"
ROUND_DELAY = 0.2


def agent_call(prompt: str, **extra: Any) -> dict[str, Any]:
    return {
        "name": "Agent",
        "arguments": {
            "subagent_type": "bench-helper",
            "description": "find files",
            "prompt": prompt,
            **extra,
        },
    }


def script() -> dict[str, Any]:
    glob = {"name": "Glob", "arguments": {"pattern": "**/*.py"}}
    delayed = {"delay": ROUND_DELAY}
    routes: list[dict[str, Any]] = [
        {
            "match": "delegate-bench",
            "steps": [
                {"content": "", "tool_calls": [agent_call("helper-task: find the python files")]},
                {"content": "The helper found them."},
            ],
        },
        {
            "match": "delegate-isolated-bench",
            "steps": [
                {
                    "content": "",
                    "tool_calls": [
                        agent_call("helper-task: find the python files", isolation="worktree")
                    ],
                },
                {"content": "The helper found them."},
            ],
        },
        {
            "match": "helper-task",
            "system": HELPER_SYSTEM,
            "steps": [{"content": "", "tool_calls": [glob]}, {"content": "Found 10 files."}],
        },
        {
            "match": "par-task",
            "system": HELPER_SYSTEM,
            "steps": [
                {"content": "", "tool_calls": [glob], **delayed},
                {"content": "Found 10 files.", **delayed},
            ],
        },
    ]
    for count in (1, 10):
        calls = [agent_call(f"par-task-{k}: find the python files") for k in range(count)]
        routes.append(
            {
                "match": f"parallel-bench-{count}:",
                "steps": [
                    {"content": "", "tool_calls": calls, **delayed},
                    {"content": "All helpers are done.", **delayed},
                ],
            }
        )
    return model_script(routes)


async def new_session(client: BenchClient, project: Path) -> str:
    session = await client.request("wave/session/new", {"cwd": str(project)})
    return str(session["sessionId"])


async def turn(client: BenchClient, session_id: str, text: str) -> float:
    started = time.perf_counter()
    result = await asyncio.wait_for(
        client.request(SEND, {"sessionId": session_id, "text": text}), 120
    )
    if result["status"] != "completed":
        raise RuntimeError(f"the turn {text!r} ended {result}")
    return time.perf_counter() - started


async def reply_seconds(model: FakeModelProcess, body: dict[str, Any], repeat: int = 5) -> float:
    """From the model server having a request to a parsed response: the model's share."""
    client = OpenAIModelClient(model.base_url, API_KEY)
    request = ModelRequest(model=body["model"], messages=body["messages"], tools=body["tools"])
    samples = []
    for _ in range(repeat):
        model.reset()
        await client.complete(request, lambda _delta: None)
        done = time.time()
        samples.append(done - model.records()[0]["time"])
    return statistics.median(samples)


async def raw_gaps(
    client: BenchClient, model: FakeModelProcess, project: Path, text: str
) -> tuple[float, float, list[dict[str, Any]], list[dict[str, Any]]]:
    """(launch, return) gaps between the requests' arrivals of one delegation, in seconds,
    and the main agent's and the subagent's recorded requests."""
    session_id = await new_session(client, project)
    model.reset()
    await turn(client, session_id, text)
    records = model.records()
    main = [r for r in records if HELPER_SYSTEM not in system_of(r["body"])]
    sub = [r for r in records if HELPER_SYSTEM in system_of(r["body"])]
    if len(main) != 2 or len(sub) != 2:
        raise RuntimeError(f"unexpected requests: {len(main)} main, {len(sub)} subagent")
    return sub[0]["time"] - main[0]["time"], main[1]["time"] - sub[-1]["time"], main, sub


async def gaps(
    client: BenchClient, model: FakeModelProcess, project: Path
) -> tuple[float, float, float, float]:
    """(launch, return) gaps of one delegation, raw and net, in seconds."""
    text = "delegate-bench: find the python files"
    launch_raw, return_raw, main, sub = await raw_gaps(client, model, project, text)
    launch_reply = await reply_seconds(model, main[0]["body"])
    return_reply = await reply_seconds(model, sub[-1]["body"])
    return launch_raw, launch_raw - launch_reply, return_raw, return_raw - return_reply


@dataclass
class IsolationCost:
    """What ``isolation: "worktree"`` adds, in seconds (medians, isolated minus plain)."""

    launch: float  # the Agent call to the subagent's first model request
    back: float  # the subagent's last answer to the main agent's next request
    whole: float  # the Agent call to the main agent's next request
    plain_launch: float
    plain_back: float


async def isolation_added(
    client: BenchClient, model: FakeModelProcess, repo: Path, repeats: int
) -> IsolationCost:
    """What ``isolation: "worktree"`` adds: the medians of ``repeats`` isolated delegations
    minus those of as many plain ones in the same small repository, interleaved (the
    model's reply time is the same on both sides and cancels out)."""
    plain: list[tuple[float, float, float]] = []
    isolated: list[tuple[float, float, float]] = []
    for _ in range(repeats):
        for text, samples in (
            ("delegate-bench: find the python files", plain),
            ("delegate-isolated-bench: find the python files", isolated),
        ):
            launch, back, main, _sub = await raw_gaps(client, model, repo, text)
            samples.append((launch, back, main[1]["time"] - main[0]["time"]))
        if "Worktree removed: no changes" not in str(main[1]["body"]["messages"]):
            raise RuntimeError("the isolated subagent's worktree was not reported removed")
    left = list((repo / ".wave" / "worktrees").glob("agent-*"))
    if left:
        raise RuntimeError(f"unchanged worktrees were left behind: {left}")

    def added(index: int) -> float:
        median = statistics.median
        return median(s[index] for s in isolated) - median(s[index] for s in plain)

    return IsolationCost(
        launch=added(0),
        back=added(1),
        whole=added(2),
        plain_launch=statistics.median(s[0] for s in plain),
        plain_back=statistics.median(s[1] for s in plain),
    )


def isolation_phases(repo: Path, home: Path, repeats: int) -> dict[str, list[float]]:
    """The phases of an isolated run's worktree, in-process, as the runner calls them:
    create (``create_worktree_sync``), sandbox (``confine_isolated_worktree``) and end
    (``finish_worktree_sync``) of an unchanged worktree; also plain ``git worktree add`` and
    ``git worktree remove`` + ``git branch -D`` beside them. Seconds per sample."""
    from wave_ls.worktrees.isolation import (
        WorktreeRequest,
        confine_isolated_worktree,
        create_worktree_sync,
        default_manager,
        finish_worktree_sync,
    )
    from wave_ls.worktrees.names import agent_name

    manager = default_manager()
    samples: dict[str, list[float]] = {}

    def add(name: str, seconds: float) -> None:
        samples.setdefault(name, []).append(seconds)

    for index in range(repeats + 1):
        started = time.perf_counter()
        wt = create_worktree_sync(
            WorktreeRequest(
                repo, generate=agent_name, home=home, owner="bench", session_id="bench"
            ),
            manager,
        )
        made = time.perf_counter()
        box = confine_isolated_worktree(wt)
        confined = time.perf_counter()
        ended = finish_worktree_sync(wt, manager)
        finished = time.perf_counter()
        box.close()
        if ended.kept:
            raise RuntimeError(f"an unchanged worktree was kept: {ended.summary}")
        path, branch = repo / ".wave" / "worktrees" / f"plain-{index}", f"plain-{index}"
        plain_started = time.perf_counter()
        git(repo, "worktree", "add", "-q", "-b", branch, str(path), "HEAD")
        plain_made = time.perf_counter()
        git(repo, "worktree", "remove", str(path))
        git(repo, "branch", "-D", branch)
        plain_removed = time.perf_counter()
        if index == 0:
            continue  # warm-up: imports, the first dulwich and git reads
        add("launch: set-up in all", made - started)
        for phase, seconds in wt.timings.items():
            add(f"  {phase} (set-up)", seconds)
        add("launch: sandbox for its commands", confined - made)
        add("return: end of an unchanged worktree in all", finished - confined)
        for phase, seconds in ended.timings.items():
            add(f"  {phase} (end)", seconds)
        add("plain git worktree add", plain_made - plain_started)
        add("plain git worktree remove + branch -D", plain_removed - plain_made)
    return samples


class ParallelRun:
    """One turn with parallel subagents: wall time, delegation phase, server CPU."""

    def __init__(
        self, wall: float, phase: float, cpu: float, model_cpu: float, requests: int
    ) -> None:
        self.wall, self.phase, self.requests = wall, phase, requests
        self.cpu, self.model_cpu = cpu, model_cpu


async def parallel(
    client: BenchClient, model: FakeModelProcess, project: Path, count: int
) -> ParallelRun | None:
    """One turn with ``count`` parallel subagents; None when the offline model's listen queue
    overflowed meanwhile (a connection then waits a second: not ours to measure)."""
    session_id = await new_session(client, project)
    client.clear()
    model.reset()
    overflows, cpu = listen_overflows(), cpu_seconds(client.pid)
    model_cpu = cpu_seconds(model.pid)
    wall = await turn(client, session_id, f"parallel-bench-{count}: find them all")
    cpu = cpu_seconds(client.pid) - cpu
    model_cpu = cpu_seconds(model.pid) - model_cpu
    await asyncio.sleep(0.1)
    if listen_overflows() != overflows:
        return None
    blocks = [
        (t, u)
        for t, u in client.updates
        if u.get("sessionId") == session_id and u["kind"] == "toolBlock" and u["name"] == "Agent"
    ]
    done = [t for t, u in blocks if u["status"] in ("completed", "failed")]
    failed = [u for _, u in blocks if u["status"] == "failed"]
    if len(done) != count or failed:
        raise RuntimeError(f"{len(done)} of {count} Agent blocks ended, {len(failed)} failed")
    return ParallelRun(wall, max(done) - blocks[0][0], cpu, model_cpu, len(model.records()))


async def parallel_runs(
    client: BenchClient, model: FakeModelProcess, project: Path, count: int, repeats: int
) -> tuple[list[ParallelRun], int]:
    """``repeats`` clean runs (at most three times as many tries), and how many were dropped."""
    runs: list[ParallelRun] = []
    dropped = 0
    for _ in range(repeats * 3):
        run = await parallel(client, model, project, count)
        if run is None:
            dropped += 1
        else:
            runs.append(run)
        if len(runs) == repeats:
            break
    if not runs:
        raise RuntimeError("every run was disturbed by a listen-queue overflow")
    return runs, dropped


async def profile_parallel(model: FakeModelProcess, project: Path, home: Path) -> None:
    from wave_ls.agents import AgentRegistry
    from wave_ls.session import AgentSession

    registry = AgentRegistry(home)
    client = OpenAIModelClient(model.base_url, API_KEY)
    undelayed = script()
    for route in undelayed["routes"]:
        for step in route["steps"]:
            step.pop("delay", None)
    model.set_script(undelayed)

    def session() -> AgentSession:
        return AgentSession(
            cwd=project,
            home=home,
            model=MODEL,
            client=client,
            catalog=lambda: registry.load(project),
            persist=False,
        )

    await session().send("parallel-bench-10: warm up")
    heading("cProfile: ten parallel subagents in-process, zero-latency model (own time)")
    profiler = cProfile.Profile()
    profiler.enable()
    await session().send("parallel-bench-10: find them all")
    profiler.disable()
    model.set_script(script())
    print_shares(profiler, SDK_PARTS)
    print_profile(profiler, 15, "tottime")


async def main() -> int:
    options = parse_options(__doc__, profile=True)
    repeats, parallel_repeats = (4, 2) if options.quick else (10, 5)
    with (
        tempfile.TemporaryDirectory(prefix="wave-bench-delegation-") as tmp,
        FakeModelProcess(script()) as model,
    ):
        home, project = Path(tmp) / "home", Path(tmp) / "project"
        home.mkdir()
        # Ten (five) subagents at once measure parallelism, not the default bound of 4 a
        # session runs at once (agent.maxConcurrent, issue 27): the bound is lifted here.
        (home / ".wave").mkdir()
        (home / ".wave" / "settings.json").write_text('{"agent": {"maxConcurrent": 10}}')
        (project / "src").mkdir(parents=True)
        for index in range(10):
            (project / "src" / f"m{index}.py").write_text(f"X = {index}\n")
        write_agent(
            project / ".wave" / "agents",
            "bench-helper",
            "Finds files for benchmarks.",
            f"You are the {HELPER_SYSTEM}. Find what you are asked for and report it.",
            "Glob, Grep, Read",
        )
        repo = Path(tmp) / "repo"
        make_git_repo(repo, 10)
        write_agent(
            repo / ".wave" / "agents",
            "bench-helper",
            "Finds files for benchmarks.",
            f"You are the {HELPER_SYSTEM}. Find what you are asked for and report it.",
            "Glob, Grep, Read",
        )
        async with wave_server(server_env(home, **model.env()), root=project) as client:
            heading("delegation overhead, no isolation, zero-latency model")
            await gaps(client, model, project)  # warm-up: the first round loads the SDK
            runs = [await gaps(client, model, project) for _ in range(repeats)]
            launch_raw, launch, back_raw, back = (
                statistics.median(r[i] * 1000 for r in runs) for i in range(4)
            )
            figure(
                "launch: Agent call to the subagent's first model request",
                launch,
                "ms",
                GAP_TARGET_MS,
            )
            note(f"median of {repeats}; {launch_raw:.1f} ms between the two requests' arrivals")
            figure(
                "return: subagent's last answer to the main agent's next request",
                back,
                "ms",
                GAP_TARGET_MS,
            )
            note(f"median of {repeats}; {back_raw:.1f} ms between the two requests' arrivals")

            heading('what isolation: "worktree" adds, small git repository (10 files)')
            await isolation_added(client, model, repo, 1)  # warm-up: imports, first reads
            iso_repeats = 4 if options.quick else 15
            cost = await isolation_added(client, model, repo, iso_repeats)
            figure(
                "worktree isolation adds to the launch",
                cost.launch * 1000,
                "ms",
                ISOLATION_TARGET_MS,
            )
            note(
                f"medians of {iso_repeats} isolated and {iso_repeats} plain delegations, "
                f"interleaved; plain: {cost.plain_launch * 1000:.1f} ms between the requests; "
                "git's checkout overlaps the first model request"
            )
            figure(
                "worktree isolation adds to the return",
                cost.back * 1000,
                "ms",
                ISOLATION_TARGET_MS,
            )
            note(f"plain: {cost.plain_back * 1000:.1f} ms between the requests")
            figure(
                "worktree isolation adds to the whole delegation, zero-latency model",
                cost.whole * 1000,
                "ms",
            )
            note(
                "no target: with a model that answers at once, the checkout the launch no "
                "longer waits for is waited for by the first tool call"
            )
            heading("the worktree's phases in-process, medians (no target each)")
            for label, samples in isolation_phases(repo, home, iso_repeats).items():
                figure(label, statistics.median(samples) * 1000, "ms")

            heading(
                f"parallel subagents, {ROUND_DELAY * 1000:.0f} ms per model round, 2 rounds each"
            )
            await parallel(client, model, project, 10)  # warm-up: opens the connections
            ones, dropped_one = await parallel_runs(client, model, project, 1, parallel_repeats)
            tens, dropped_ten = await parallel_runs(client, model, project, 10, parallel_repeats)
            one_phase = statistics.median(r.phase for r in ones)
            ten_phase = statistics.median(r.phase for r in tens)
            one_wall = statistics.median(r.wall for r in ones)
            ten_wall = statistics.median(r.wall for r in tens)
            figure(
                "ten parallel subagents vs one: delegation phase",
                ten_phase / one_phase,
                "x",
                PARALLEL_TARGET,
                note=f"{ten_phase * 1000:.0f} ms vs {one_phase * 1000:.0f} ms",
            )
            figure(
                "ten parallel subagents vs one: whole turn",
                ten_wall / one_wall,
                "x",
                note=f"{ten_wall * 1000:.0f} ms vs {one_wall * 1000:.0f} ms",
            )
            cpu_ms = statistics.median(r.cpu / r.requests * 1000 for r in tens)
            model_cpu_ms = statistics.median(r.model_cpu / r.requests * 1000 for r in tens)
            figure(
                "wave-ls server CPU per model request during the ten-subagent turn",
                cpu_ms,
                "ms",
                note=f"{tens[0].requests} requests a turn; CPU counted in 10 ms ticks",
            )
            figure("  the offline model's CPU per request, for comparison", model_cpu_ms, "ms")
            note(
                f"medians of {parallel_repeats} runs each"
                + (
                    f"; {dropped_one + dropped_ten} run(s) repeated: the offline model's listen "
                    "queue (backlog 5) overflowed, delaying a connection by a second"
                    if dropped_one + dropped_ten
                    else ""
                )
            )
        if options.profile:
            await profile_parallel(model, project, home)
    return 0


if __name__ == "__main__":
    run_async(main())
