"""The conversation loop's own time per model round, with a zero-latency offline model.

A 50-round turn through ``AgentSession`` (the SDK entry point) in this process: 49 rounds
each answered with one cheap tool call (``TaskList`` or ``Glob`` in a 20-file project,
alternating), then a final answer. The offline model runs in its own process (so its work
never shares our GIL) and answers at once.

The model client is wrapped in a stopwatch: "our own time" is the turn's wall time minus the
time spent inside ``ModelClient.complete`` (the openai SDK, HTTP and the model server),
divided by the rounds. It is what the loop adds per round: building the request (system
prompt, memory, history, tool schemas, the Agent tool's description from the subagent
catalog), events, permission checks, running the tool, the transcript. As a cross-check, the
recorded requests are replayed through a bare ``OpenAIModelClient.complete`` and subtracted
the same way.

    .venv/bin/python benchmarks/bench_loop.py [--quick] [--profile]

Target (issue 3): <= 5 ms of our own time per round at 50 rounds.
"""

from __future__ import annotations

import cProfile
import os
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import (
    MODEL,
    SDK_PARTS,
    FakeModelProcess,
    age_tree,
    figure,
    heading,
    model_script,
    note,
    parse_options,
    print_profile,
    print_shares,
    run_async,
    write_agents,
)

from wave_ls.agents import AgentRegistry
from wave_ls.runtime.core import Event, ModelClient, ModelRequest, ModelResponse
from wave_ls.runtime.model_client import OpenAIModelClient
from wave_ls.session import AgentSession

ROUNDS = 50
TARGET_MS = 5.0
PROMPT = "loop-bench: list the tasks and the python files, again and again"


class Stopwatch:
    """A ``ModelClient`` that times each round of the client it wraps."""

    def __init__(self, inner: ModelClient) -> None:
        self.inner = inner
        self.seconds: list[float] = []
        # CPU time of this process during each round: the client's (openai SDK's) own work,
        # since the model server is another process.
        self.cpu_seconds: list[float] = []

    async def complete(
        self, request: ModelRequest, on_delta: Callable[[str], None] | None = None
    ) -> ModelResponse:
        started, cpu = time.perf_counter(), time.process_time()
        try:
            return await self.inner.complete(request, on_delta)
        finally:
            self.seconds.append(time.perf_counter() - started)
            self.cpu_seconds.append(time.process_time() - cpu)


class FsyncClock:
    """Times every ``os.fsync`` while installed (the transcript syncs each message on the
    event loop): how much of our own time is waiting for the disk."""

    def __init__(self) -> None:
        self.seconds = 0.0
        self.calls = 0
        self._real = os.fsync

    def __enter__(self) -> FsyncClock:
        def timed(fd: Any) -> None:
            started = time.perf_counter()
            try:
                self._real(fd)
            finally:
                self.seconds += time.perf_counter() - started
                self.calls += 1

        os.fsync = timed
        return self

    def __exit__(self, *_exc: object) -> None:
        os.fsync = self._real


class CountingSink:
    """What an SDK user's sink does at the least: take each event."""

    def __init__(self) -> None:
        self.events = 0

    def emit(self, event: Event) -> None:
        self.events += 1


def loop_script(rounds: int) -> dict[str, Any]:
    steps: list[dict[str, Any]] = []
    for index in range(rounds - 1):
        call = (
            {"name": "TaskList", "arguments": {}}
            if index % 2 == 0
            else {"name": "Glob", "arguments": {"pattern": "**/*.py"}}
        )
        steps.append({"content": "", "tool_calls": [call]})
    steps.append({"content": "Listed everything; nothing to do."})
    return model_script([{"match": "loop-bench", "steps": steps}])


def make_project(root: Path) -> None:
    (root / "src").mkdir(parents=True)
    for index in range(20):
        (root / "src" / f"module{index}.py").write_text(f"VALUE = {index}\n")
    (root / "AGENTS.md").write_text("# Project notes\n\nRun the tests with `pytest -q`.\n")
    # The window of a hosted model: 1,000 subagents' Agent tool alone passes 80 % of the
    # default 32 K, and the offline model says no window (compaction is bench_models').
    (root / ".wave").mkdir()
    (root / ".wave" / "settings.local.json").write_text('{"context": {"windowTokens": 200000}}')


class Turn:
    """One measured turn: wall time, the model client's rounds (wall and CPU), events."""

    def __init__(
        self, wall: float, cpu: float, fsync: float, client: Stopwatch, events: int
    ) -> None:
        self.wall, self.cpu, self.fsync, self.events = wall, cpu, fsync, events
        self.rounds = len(client.seconds)
        self.model = sum(client.seconds)
        self.round_ms = [s * 1000 for s in client.seconds]
        self.round_cpu_ms = [s * 1000 for s in client.cpu_seconds]
        self.model_cpu = sum(client.cpu_seconds)

    @property
    def own_ms_per_round(self) -> float:
        return (self.wall - self.model) / self.rounds * 1000

    @property
    def own_cpu_ms_per_round(self) -> float:
        """The same in CPU time: what other jobs on the machine cannot inflate (but the
        transcript's fsync waits are not in it)."""
        return (self.cpu - self.model_cpu) / self.rounds * 1000


async def run_turn(
    project: Path, home: Path, base_url: str, registry: AgentRegistry, rounds: int
) -> Turn:
    client = Stopwatch(OpenAIModelClient(base_url, "bench-key"))
    sink = CountingSink()
    session = AgentSession(
        cwd=project,
        home=home,
        model=MODEL,
        client=client,
        sink=sink,
        catalog=lambda: registry.load(project),
    )
    with FsyncClock() as fsync:
        started, cpu = time.perf_counter(), time.process_time()
        result = await session.send(PROMPT)
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu
    if result.status != "completed" or len(client.seconds) != rounds:
        raise RuntimeError(f"the turn went wrong: {result}, {len(client.seconds)} rounds")
    return Turn(wall, cpu, fsync.seconds, client, sink.events)


async def replay_seconds(model: FakeModelProcess, records: list[dict[str, Any]]) -> float:
    """Time the same requests through a bare model client: the model's share of a turn."""
    client = OpenAIModelClient(model.base_url, "bench-key")
    total = 0.0
    for record in records:
        body = record["body"]
        request = ModelRequest(model=body["model"], messages=body["messages"], tools=body["tools"])
        started = time.perf_counter()
        await client.complete(request, lambda _delta: None)
        total += time.perf_counter() - started
    return total


async def measure(
    label: str,
    project: Path,
    home: Path,
    model: FakeModelProcess,
    turns: int,
    target: float | None,
) -> list[Turn]:
    registry = AgentRegistry(home)
    await run_turn(project, home, model.base_url, registry, ROUNDS)  # warm-up
    measured: list[Turn] = []
    replayed: list[float] = []
    for _ in range(turns):
        model.reset()
        measured.append(await run_turn(project, home, model.base_url, registry, ROUNDS))
        records = model.records()
        model.reset()
        replayed.append(await replay_seconds(model, records))
    best = min(t.own_ms_per_round for t in measured)
    own = statistics.median(t.own_ms_per_round for t in measured)
    own_cpu = statistics.median(t.own_cpu_ms_per_round for t in measured)
    fsync = statistics.median(t.fsync / t.rounds * 1000 for t in measured)
    wall = statistics.median(t.wall for t in measured)
    inside = statistics.median(t.model for t in measured)
    replay = statistics.median(replayed)
    figure(
        f"loop overhead per model round, our own time ({label}; best of {turns} turns)",
        best,
        "ms",
        target,
    )
    note(
        f"median {own:.1f} ms wall, {own_cpu:.1f} ms CPU, {fsync:.1f} ms waiting in the "
        f"transcript's fsync; a turn {wall * 1000:.0f} ms, of which {inside * 1000:.0f} ms "
        f"inside ModelClient.complete; {measured[-1].events} events/turn"
    )
    note(
        f"cross-check, turn minus the same requests replayed through a bare client: "
        f"{(wall - replay) / ROUNDS * 1000:.1f} ms/round (noisier: two runs subtracted)"
    )
    middle = measured[len(measured) // 2]
    figure(
        f"model client per round, wall: SDK + HTTP + model server ({label})",
        statistics.fmean(middle.round_ms),
        "ms",
        note=f"round 1: {middle.round_ms[0]:.1f} ms, round {ROUNDS}: {middle.round_ms[-1]:.1f} ms",
    )
    figure(
        f"model client per round, CPU of this process: the openai SDK ({label})",
        statistics.fmean(middle.round_cpu_ms),
        "ms",
        note=(
            f"round 1: {middle.round_cpu_ms[0]:.1f} ms, "
            f"round {ROUNDS}: {middle.round_cpu_ms[-1]:.1f} ms"
        ),
    )
    return measured


async def main() -> int:
    options = parse_options(__doc__, profile=True)
    turns, many = (3, 200) if options.quick else (7, 1000)
    heading(f"conversation loop, {ROUNDS}-round turn, zero-latency model")
    with (
        tempfile.TemporaryDirectory(prefix="wave-bench-loop-") as tmp,
        FakeModelProcess(loop_script(ROUNDS)) as model,
    ):
        home, project = Path(tmp) / "home", Path(tmp) / "project"
        home.mkdir()
        make_project(project)
        await measure("built-in subagents", project, home, model, turns, TARGET_MS)

        crowded = Path(tmp) / "crowded"
        make_project(crowded)
        write_agents(crowded / ".wave" / "agents", many)
        age_tree(crowded / ".wave")
        await measure(f"{many:,} subagents", crowded, home, model, turns, None)
        note(
            "each round rebuilds the Agent tool's description from the catalog (a warm "
            "registry load) and sends it to the model"
        )

        if options.profile:
            heading(f"cProfile of one {ROUNDS}-round turn (built-in subagents)")
            registry = AgentRegistry(home)
            profiler = cProfile.Profile()
            profiler.enable()
            await run_turn(project, home, model.base_url, registry, ROUNDS)
            profiler.disable()
            print_shares(profiler, SDK_PARTS)
            print_profile(profiler, 15, "tottime")
    return 0


if __name__ == "__main__":
    run_async(main())
