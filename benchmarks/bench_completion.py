"""``wave/chatInput/completion`` latency over LSP, from 100 to 5,000 subagents in git
repositories of 20,000 and 100,000 files.

A real ``wave-ls --stdio`` process and a plain pygls client (it declares no file watching,
so the server learns of agent-file changes by itself). One committed repository grows from
20,000 to 100,000 files (100 per folder); its ``.wave/agents/`` holds 100, 1,000 or 5,000
generated subagents (aged an hour: the steady state; the parse cache on disk knows them, as
after any earlier run). For each of the six points a fresh server answers: 20 requests
without an ``@`` word (the bare round trip), the first (cold) completion (lists the files,
loads the agents), then three rounds of ~300 requests (the best round's p99 counts: a
round's p99 is its third-worst request) with varied ``@`` queries (agent names,
descriptions, paths, no match, ``agent:``/``file:`` prefixes), one every 10 ms at most;
latency is taken in the client, from sending to the result. RSS is the server's after them.

At the biggest point also: a file past the file list's cap is found when the query names
it; p99 while an agent file is saved every 200 ms; how long an added, edited and deleted
agent file takes to show (MENTION-9: within a second).

    .venv/bin/python benchmarks/bench_completion.py [--quick] [--profile]

``--profile`` also runs the handler's work in-process (agent registry load, file list,
ranking, items) for the same queries, prints where the time goes, and the cProfile top.

Targets (issues 2 and 18): p99 <= 15 ms at every point; a change shows within 1 s.
"""

from __future__ import annotations

import asyncio
import cProfile
import gc
import itertools
import math
import os
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from common import (
    age_tree,
    agent_name,
    check,
    figure,
    git,
    heading,
    make_git_repo,
    note,
    parse_options,
    percentile,
    print_profile,
    print_shares,
    rss_mb,
    run_async,
    server_env,
    wave_server,
    write_agent,
    write_agents,
)

COMPLETION = "wave/chatInput/completion"
P99_TARGET_MS = 15.0
CHANGE_TARGET_MS = 1000.0
AGENTS = (100, 1_000, 5_000)
FILES = (20_000, 100_000)
QUICK_AGENTS = (100, 1_000)
QUICK_FILES = (2_000, 5_000)
REQUESTS = 300
# A round's p99 is its third-worst request: one burst of the machine's other work decides
# it. The best of three rounds is the server's own tail, not the neighbours'.
ROUNDS = 3
PACE_MS = 10.0

Ask = Callable[[str], Awaitable[tuple[float, dict[str, Any]]]]

# What people type after `@`: partial agent names, description words, paths, nothing.
QUERIES = (
    "",
    "t",
    "te",
    "test",
    "test-run",
    "review-fixer",
    "db-",
    "security-plan",
    "0042",
    "area 7",
    "PROACTIVELY",
    "Expl",
    "plan",
    "general",
    "agent:docs",
    "agent:",
    "file:src/pkg3",
    "src/pkg1/mod25/file2",
    "file123",
    "mod19/",
    "README",
    "gitignore",
    "pkg9/mod199/file19999.py",
    "zzz-nothing-matches",
    "f",
    "fi",
    "fil",
    "file",
    "file7",
    "file77",
)


@dataclass
class Point:
    """One scale point's figures."""

    agents: int
    files: int
    cold_ms: float
    p50_ms: float
    p99_ms: float
    rss_mb: float


async def main() -> int:
    options = parse_options(__doc__, profile=True)
    agent_counts, file_counts = (QUICK_AGENTS, QUICK_FILES) if options.quick else (AGENTS, FILES)
    requests = 120 if options.quick else REQUESTS
    heading(
        "@ completion over LSP at scale: "
        + " / ".join(f"{n:,}" for n in agent_counts)
        + " agents x "
        + " / ".join(f"{n:,}" for n in file_counts)
        + " files"
    )
    with tempfile.TemporaryDirectory(prefix="wave-bench-completion-") as tmp:
        home, repo, parked = Path(tmp) / "home", Path(tmp) / "repo", Path(tmp) / "parked"
        home.mkdir()
        agents_dir = repo / ".wave" / "agents"
        started = time.perf_counter()
        write_agents(agents_dir, max(agent_counts))
        age_tree(agents_dir)  # not edited in the last hour: the steady state
        first_ever = warm_parse_cache(home, repo)
        parked.mkdir()
        park_agents(parked, agents_dir, 0)  # untracked: not in the repository's commits
        note(
            f"{max(agent_counts):,} agent files written and parsed once in "
            f"{time.perf_counter() - started:.1f} s (a first load ever, without the parse "
            f"cache: {first_ever:.1f} s); each server below starts with that cache on disk"
        )
        points: list[Point] = []
        made = 0
        for files in file_counts:
            started = time.perf_counter()
            grow_git_repo(repo, made, files)
            made = files
            os.sync()  # no write-back of the new tree while we measure
            note(f"repository grown to {files:,} files in {time.perf_counter() - started:.1f} s")
            for agents in agent_counts:
                park_agents(parked, agents_dir, agents)
                biggest = agents == agent_counts[-1] and files == file_counts[-1]
                point = await measure_point(home, repo, agents, files, requests, biggest)
                if point is None:
                    return 1
                points.append(point)
        summary(points)
        hostile_texts(repo, home)
        if options.profile:
            profile_in_process(repo, home, requests)
        return 0


async def measure_point(
    home: Path, repo: Path, agents: int, files: int, requests: int, biggest: bool
) -> Point | None:
    """A fresh server on the repository as it is: cold completion, then ``requests`` paced
    completions; at the biggest point also the first-run checks (a file past the cap, edits
    while typing, how fast a change shows)."""
    label = f"({agents:,} agents, {files:,} files)"
    heading(f"@ completion over LSP {label}")
    async with wave_server(server_env(home), root=repo) as client:

        async def ask(query: str) -> tuple[float, dict[str, Any]]:
            text = f"please hand this to @{query}"
            sent = time.perf_counter()
            result = await client.request(COMPLETION, {"text": text, "cursor": len(text)})
            return (time.perf_counter() - sent) * 1000, result

        no_word: list[float] = []
        for _ in range(20):
            sent = time.perf_counter()
            await client.request(COMPLETION, {"text": "no mention here"})
            no_word.append((time.perf_counter() - sent) * 1000)
        cold, first = await ask("test")
        if not first["items"]:
            print("the first request returned no items: the set-up is wrong")
            return None
        rounds = [await paced(ask, requests) for _ in range(ROUNDS)]
        samples, empty = min(rounds, key=lambda round_: percentile(round_[0], 99))
        rss = rss_mb(client.pid)
        figure(f"completion p50 over LSP {label}", percentile(samples, 50), "ms")
        figure(
            f"completion p99 over LSP {label}, best of {ROUNDS} rounds",
            percentile(samples, 99),
            "ms",
            P99_TARGET_MS,
            note="rounds: " + ", ".join(f"{percentile(r, 99):.1f}" for r, _ in rounds),
        )
        note(
            f"{len(samples)} requests {PACE_MS:.0f} ms apart, {len(QUERIES)} queries; mean "
            f"{statistics.fmean(samples):.1f} ms, max {max(samples):.1f} ms; "
            f"{empty} answered with no items; bare round trip (no @ word) "
            f"p50 {percentile(no_word, 50):.1f} ms"
        )
        figure(f"first (cold) completion {label}: lists the files, loads the agents", cold, "ms")
        figure(f"server RSS after the requests {label}", rss, "MB")
        if biggest:
            await past_the_cap(ask, repo)
            await edits_while_typing(ask, repo / ".wave" / "agents", requests)
            await change_latency(ask, repo / ".wave" / "agents")
    return Point(agents, files, cold, percentile(samples, 50), percentile(samples, 99), rss)


async def paced(ask: Ask, requests: int) -> tuple[list[float], int]:
    """``requests`` completions of the varied queries, one every ``PACE_MS`` at most (a
    fast typist; back to back, a once-a-second stall would hide in few requests)."""
    samples: list[float] = []
    empty = 0
    for query in itertools.islice(itertools.cycle(QUERIES), requests):
        milliseconds, result = await ask(query)
        samples.append(milliseconds)
        empty += not result["items"]
        await asyncio.sleep(max(0.0, (PACE_MS - milliseconds) / 1000))
    return samples, empty


async def past_the_cap(ask: Ask, repo: Path) -> None:
    """A file the capped list leaves out is still found when the query names it."""
    listed = sorted(
        (p.relative_to(repo).as_posix() for p in (repo / "src").rglob("*.py")), key=_shallow_first
    )
    last = listed[-1]
    for query in (last, last.rsplit("/", 1)[-1].removesuffix(".py")):
        milliseconds, result = await ask(query)
        labels = [item["label"] for item in result["items"]]
        check(
            f"the deepest-last file {last} is found by @{query}",
            last in labels,
            f"{milliseconds:.1f} ms, isIncomplete {result['isIncomplete']}",
        )


async def edits_while_typing(ask: Ask, agents_dir: Path, requests: int) -> None:
    """Completion p99 while an agent file is saved every 200 ms (an editor open on it)."""
    victim = sorted(agents_dir.glob("*.md"))[0]
    original = victim.read_text(encoding="utf-8")
    stop = asyncio.Event()

    async def editor() -> None:
        count = 0
        while not stop.is_set():
            count += 1
            victim.write_text(original.replace("Use PROACTIVELY", f"Edit {count}: use"))
            with suppress(asyncio.TimeoutError):
                await asyncio.wait_for(stop.wait(), 0.2)

    saving = asyncio.create_task(editor())
    try:
        rounds = [(await paced(ask, requests))[0] for _ in range(ROUNDS)]
    finally:
        stop.set()
        await saving
        victim.write_text(original, encoding="utf-8")
    samples = min(rounds, key=lambda samples: percentile(samples, 99))
    figure(
        f"completion p99 while an agent file is saved every 200 ms, best of {ROUNDS} rounds",
        percentile(samples, 99),
        "ms",
        P99_TARGET_MS,
        note=f"p50 {percentile(samples, 50):.1f} ms, max {max(samples):.1f} ms; rounds: "
        + ", ".join(f"{percentile(r, 99):.1f}" for r in rounds),
    )


async def change_latency(ask: Ask, agents_dir: Path) -> None:
    """How long an added, edited and deleted agent file takes to show in completion
    (MENTION-9: within a second), for a client that watches nothing."""
    path = agents_dir / "zz-latecomer.md"

    async def shows(query: str, wanted: Callable[[dict[str, Any]], bool]) -> float:
        started = time.perf_counter()
        while time.perf_counter() - started < 5:
            _, result = await ask(query)
            if wanted(result):
                return (time.perf_counter() - started) * 1000
            await asyncio.sleep(0.01)
        return math.inf

    def labels(result: dict[str, Any]) -> list[str]:
        return [item["label"] for item in result["items"]]

    def details(result: dict[str, Any]) -> list[str]:
        return [item.get("detail") or "" for item in result["items"]]

    write_agent(path.parent, path.stem, "First words", "Be late.", "Read")
    added = await shows("agent:zz-late", lambda r: "zz-latecomer" in labels(r))
    figure("a new agent file shows in completion after", added, "ms", CHANGE_TARGET_MS)
    write_agent(path.parent, path.stem, "Second thoughts", "Be late.", "Read")
    edited = await shows("agent:zz-late", lambda r: "Second thoughts" in details(r))
    figure("an agent file edited in place shows after", edited, "ms", CHANGE_TARGET_MS)
    path.unlink()
    deleted = await shows("agent:zz-late", lambda r: "zz-latecomer" not in labels(r))
    figure("a deleted agent file is gone after", deleted, "ms", CHANGE_TARGET_MS)


def summary(points: list[Point]) -> None:
    heading("@ completion at scale: summary (p99 target <= 15 ms)")
    print(f"  {'agents':>7} {'files':>8} {'p50 ms':>7} {'p99 ms':>7} {'cold ms':>8} {'RSS MB':>7}")
    for p in points:
        print(
            f"  {p.agents:>7,} {p.files:>8,} {p.p50_ms:>7.1f} {p.p99_ms:>7.1f} "
            f"{p.cold_ms:>8.0f} {p.rss_mb:>7.0f}  {'OK' if p.p99_ms <= P99_TARGET_MS else 'MISS'}"
        )


def warm_parse_cache(home: Path, project: Path) -> float:
    """Load the project's agents once in-process, which fills the parse cache on disk under
    ``home`` (as any earlier run would have); the seconds it took."""
    from wave_ls.agents import AgentRegistry

    started = time.perf_counter()
    AgentRegistry(home).load(project)
    return time.perf_counter() - started


def park_agents(parked: Path, agents_dir: Path, count: int) -> None:
    """Leave exactly the first ``count`` agent files in ``agents_dir``, moving the others
    to or from ``parked`` (a rename keeps the mtime, so the parse cache still knows them)."""
    agents_dir.mkdir(parents=True, exist_ok=True)
    for index in range(max(count, len(list(agents_dir.glob("*.md"))) + 1)):
        name = f"{agent_name(index)}.md"
        inside, outside = agents_dir / name, parked / name
        if index < count and outside.exists():
            outside.rename(inside)
        elif index >= count and inside.exists():
            inside.rename(outside)


def grow_git_repo(root: Path, have: int, files: int, *, per_dir: int = 100) -> None:
    """``make_git_repo``'s layout, grown from ``have`` to ``files`` files and committed."""
    if have == 0:
        make_git_repo(root, files, per_dir=per_dir)
        return
    for index in range(have, files):
        folder = root / "src" / f"pkg{index // per_dir // 20}" / f"mod{index // per_dir}"
        if index % per_dir == 0:
            folder.mkdir(parents=True, exist_ok=True)
        (folder / f"file{index}.py").write_text(f"VALUE = {index}\n")
    git(root, "add", "src")
    git(root, "commit", "-q", "-m", f"grow to {files} files")


def _shallow_first(path: str) -> tuple[int, str]:
    return path.count("/"), path


# Issue 12: texts that once took seconds (a 300,000-character @ word: 36 s) or never ended.
HOSTILE = {
    "@ word of 300,000 characters": "see @" + "a" * 300_000,
    "@ word of 10 MB": "see @" + "a" * 10_000_000,
    "256-character query (the cap)": "see @" + "fs" * 128,
    "10 MB ASCII text, then @fil": "x " * 5_000_000 + "@fil",
    "10 MB accented text, then @fil": "é " * 5_000_000 + "@fil",
    "9 MB of emoji, then @fil": "😀 " * 3_000_000 + "@fil",
}


def hostile_texts(repo: Path, home: Path) -> None:
    """The handler's work (query, offsets, ranking) for hostile texts, in-process: over LSP
    the JSON of a 10 MB request costs more than the work itself."""
    from wave_ls.agents import AgentRegistry
    from wave_ls.chat_input.completion import complete
    from wave_ls.chat_input.query import at_query, length
    from wave_ls.chat_input.workspace_files import WorkspaceFiles

    registry, files = AgentRegistry(home), WorkspaceFiles(repo)
    registry.watch()  # as the server does: a request never re-reads agent files
    registry.load(repo)
    heading("@ completion of hostile texts, in-process (best of 5)")
    for label, text in HOSTILE.items():
        for encoding in ("utf-16", "utf-8"):
            best = float("inf")
            cursor = length(text, encoding)  # what the client sends: the end of its text
            for _ in range(5):
                started = time.perf_counter()
                query = at_query(text, cursor, encoding, strict=True)
                if query is not None:
                    complete(query, registry.load(repo).agents, files.files())
                best = min(best, time.perf_counter() - started)
            figure(f"{label} ({encoding} cursor)", best * 1000, "ms", P99_TARGET_MS)
    registry.stop_watching()


def profile_in_process(repo: Path, home: Path, requests: int) -> None:
    """The handler's steps for the same queries, timed one by one, then under cProfile."""
    from wave_ls.agents import AgentRegistry
    from wave_ls.chat_input.completion import complete
    from wave_ls.chat_input.workspace_files import WorkspaceFiles
    from wave_ls.server.agents_feature import completion_item

    registry, files = AgentRegistry(home), WorkspaceFiles(repo)
    queries = list(itertools.islice(itertools.cycle(QUERIES), requests))
    complete("test", registry.load(repo).agents, files.files())  # warm, as over LSP
    parts = {"agent registry load (warm)": 0.0, "file list (cached)": 0.0, "ranking + items": 0.0}
    pauses: list[float] = []
    collecting: list[float] = []

    def on_gc(phase: str, info: dict[str, int]) -> None:
        if info["generation"] != 2:
            return
        if phase == "start":
            collecting.append(time.perf_counter())
        elif collecting:
            pauses.append((time.perf_counter() - collecting.pop()) * 1000)

    gc.callbacks.append(on_gc)
    for query in queries:
        t0 = time.perf_counter()
        catalog = registry.load(repo)
        t1 = time.perf_counter()
        listed = files.files()
        t2 = time.perf_counter()
        [completion_item(c) for c in complete(query, catalog.agents, listed)]
        t3 = time.perf_counter()
        for part, seconds in zip(parts, (t1 - t0, t2 - t1, t3 - t2), strict=True):
            parts[part] += seconds
    gc.callbacks.remove(on_gc)
    heading("in-process profile of the completion handler's work")
    for part, seconds in parts.items():
        figure(f"mean per request: {part}", seconds / len(queries) * 1000, "ms")
    figure(
        f"full (generation 2) garbage collections in {len(queries)} requests",
        len(pauses),
        "",
        note="pauses: " + ", ".join(f"{p:.0f} ms" for p in pauses),
    )
    profiler = cProfile.Profile()
    profiler.enable()
    for query in queries:
        [completion_item(c) for c in complete(query, registry.load(repo).agents, files.files())]
    profiler.disable()
    print_shares(
        profiler,
        {
            "AgentRegistry.load (warm: a stat per agent file)": (
                "wave_ls/agents/registry.py",
                "load",
            ),
            "pathlib.Path objects made while scanning": ("pathlib.py", "__new__"),
            "ranking (completion.complete)": ("wave_ls/chat_input/completion.py", "complete"),
        },
    )
    print_profile(profiler, 12)


if __name__ == "__main__":
    run_async(main())
