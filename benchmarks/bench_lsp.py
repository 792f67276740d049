"""The language server's start, its idle memory, and how fast it talks during fast streams.

A real ``wave-ls --stdio`` process and a plain pygls client (timestamps taken on receipt);
the offline model in its own process.

- start: from spawning the process to the ``initialize`` result, against a minimal pygls
  server (a ``LanguageServer`` with no features) started the same way, interleaved: seven
  pairs, each a minimal start then ours, after one start of each to warm the caches; the
  target's ratio is the median of the seven pairs' ratios (a pair shares the machine's
  load, and no single lucky start decides it), the best of each beside it;
- idle RSS: ``VmRSS`` of the server after ``initialize``, and after one session with one
  short turn (the openai SDK is loaded by then), with the bytecode of all it imports
  cached by an earlier server's turn, as in an installed package;
- a fast stream: the model streams a ~5,000-token answer at 5,000 tokens/s; the client counts
  the ``wave/session/update`` notifications per second, the most the assistant block got in
  any one second (coalescing: <= ~30), and checks the last one carries the whole answer;
- a busy subagent: many zero-latency rounds of parallel tool calls; the same for the
  ``$/progress`` reports of its ``Agent`` block, and the last report and the ``end`` must
  carry the final tool, tokens and tool count.

    .venv/bin/python benchmarks/bench_lsp.py [--quick]

Targets: start <= 1.1x the minimal pygls server's (issue 18; issue 4 asked for <= 0.5 s);
RSS after the first turn <= 80 MB (issue 18); <= ~30 updates per second per block (we
allow 31 for a window's edges), the final state never lost (issue 4).
"""

from __future__ import annotations

import asyncio
import re
import statistics
import subprocess
import tempfile
from pathlib import Path
from typing import Any

from common import (
    PYTHON,
    BenchClient,
    FakeModelProcess,
    check,
    figure,
    heading,
    max_in_window,
    model_script,
    note,
    paired_ratio,
    parse_options,
    rss_mb,
    run_async,
    server_env,
    wave_server,
    write_agent,
)

START_RATIO = 1.1
MINIMAL_SERVER = (
    "-c",
    "from pygls.lsp.server import LanguageServer; LanguageServer('minimal', '1').start_io()",
)
RSS_TARGET_MB = 80.0
RATE_LIMIT = 31  # "~30 per second": one more for the edges of a one-second window
SEND = "wave/chat/send"

TEXT = (
    "the quick brown fox jumps over a lazy dog while the agent reads files and writes tests "
    "for every module it finds in the project tree"
)
WORDS = TEXT.split()


def long_answer(tokens: int) -> str:
    """About ``tokens`` tokens of text (four characters a token, as the fake model counts)."""
    out: list[str] = []
    size = 0
    index = 0
    while size < tokens * 4:
        word = WORDS[index % len(WORDS)]
        out.append(word)
        size += len(word) + 1
        index += 1
    return " ".join(out) + "."


def script(answer: str, rounds: int, calls: int) -> dict[str, Any]:
    agent_call = {
        "name": "Agent",
        "arguments": {
            "subagent_type": "bench-worker",
            "description": "many small lookups",
            "prompt": "progress-work: look everything up, quickly",
        },
    }
    glob = {"name": "Glob", "arguments": {"pattern": "**/*.py"}}
    worker_steps: list[dict[str, Any]] = [
        {"content": "", "tool_calls": [glob] * calls} for _ in range(rounds)
    ]
    worker_steps.append({"content": "Looked everything up."})
    return model_script(
        [
            {"match": "hello-bench", "steps": [{"content": "Hello!", "chunk_delay": 0}]},
            {"match": "stream-bench", "steps": [{"content": answer}]},
            {
                "match": "progress-bench",
                "steps": [
                    {"content": "", "tool_calls": [agent_call], "chunk_delay": 0},
                    {"content": "The worker is done.", "chunk_delay": 0},
                ],
            },
            {
                "match": "progress-work",
                "system": "bench worker",
                # The worker's rounds are zero-latency; only the main stream is paced.
                "steps": [{**step, "chunk_delay": 0} for step in worker_steps],
            },
        ],
        tokens_per_second=5000,
    )


async def start_times(env: dict[str, str], count: int) -> list[float]:
    out = []
    for _ in range(count):
        async with wave_server(env) as client:
            out.append(client.init_seconds)
    return out


async def start_against_minimal(env: dict[str, str], count: int) -> tuple[list[float], list[float]]:
    """(wave-ls starts, minimal pygls server starts), interleaved so load hits both alike."""
    ours: list[float] = []
    minimal: list[float] = []
    for _ in range(count):
        async with wave_server(env, command=MINIMAL_SERVER) as client:
            minimal.append(client.init_seconds)
        async with wave_server(env) as client:
            ours.append(client.init_seconds)
    return ours, minimal


def bytecode_env(env: dict[str, str], cache: Path) -> dict[str, str]:
    """``env`` with compiled bytecode kept (in ``cache``, outside the repository), as in any
    installation; this machine sets PYTHONDONTWRITEBYTECODE=1, so our own modules would
    otherwise be compiled again at every start."""
    out = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    out["PYTHONPYCACHEPREFIX"] = str(cache)
    return out


FOOTPRINT = """
import time, sys
started = time.perf_counter()
{statement}
seconds = time.perf_counter() - started
rss = next(l for l in open('/proc/self/status') if l.startswith('VmRSS:')).split()[1]
print(seconds, int(rss) / 1024)
"""


def footprint(statement: str, env: dict[str, str]) -> tuple[float, float]:
    """The import time (s, best of 5: the least disturbed) and the RSS (MB) of a fresh
    interpreter running ``statement``."""
    runs = []
    for _ in range(5):
        done = subprocess.run(
            [PYTHON, "-c", FOOTPRINT.format(statement=statement)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        seconds, rss = done.stdout.split()
        runs.append((float(seconds), float(rss)))
    return min(r[0] for r in runs), statistics.median(r[1] for r in runs)


def startup_breakdown(env: dict[str, str]) -> None:
    """What a start and the idle memory are made of: the big imports, one by one."""
    parts = (
        ("bare interpreter", "pass"),
        ("lsprotocol.types + pygls.lsp.server", "import pygls.lsp.server"),
        ("everything the server imports (wave_ls.server.app)", "import wave_ls.server.app"),
        ("openai SDK (imported at the first model round)", "import openai"),
    )
    for label, statement in parts:
        seconds, rss = footprint(statement, env)
        note(f"{label}: import {seconds:.2f} s, RSS {rss:.0f} MB")


async def send(client: BenchClient, session_id: str, text: str) -> dict[str, Any]:
    result = await asyncio.wait_for(
        client.request(SEND, {"sessionId": session_id, "text": text}), 120
    )
    if result["status"] != "completed":
        raise RuntimeError(f"the turn {text!r} ended {result}")
    await asyncio.sleep(0.3)  # let the last notifications arrive
    return dict(result)


def stream_figures(client: BenchClient, session_id: str, answer: str, tokens: int) -> None:
    updates = [(t, u) for t, u in client.updates if u.get("sessionId") == session_id]
    deltas = [(t, u) for t, u in updates if u["kind"] == "assistantDelta"]
    if not deltas:
        check("assistant deltas received", False)
        return
    first, last = deltas[0][0], deltas[-1][0]
    duration = max(last - first, 1e-9)
    during = [t for t, _ in updates if first <= t <= last]
    raw_chunks = -(-len(answer) // 8)  # the fake model's default chunk size
    figure(
        f"assistant stream: {tokens:,} tokens in {raw_chunks:,} chunks at 5,000 tokens/s, took",
        duration,
        "s",
        note=f"{len(answer) / 4 / duration:,.0f} tokens/s as received",
    )
    figure(
        "wave/session/update notifications pushed per second during it",
        len(during) / duration,
        "/s",
    )
    figure(
        "most assistant-block updates in any 1 s",
        max_in_window([t for t, _ in deltas]),
        "/s",
        RATE_LIMIT,
    )
    messages = [u["message"] for _, u in updates if u["kind"] == "assistantMessage"]
    check(
        "the round's assistantMessage carries the whole answer",
        bool(messages) and messages[-1].get("content") == answer,
    )
    check(
        "the deltas joined equal the whole answer",
        "".join(u["delta"] for _, u in deltas) == answer,
        f"{len(deltas)} updates for {raw_chunks:,} chunks",
    )


def progress_figures(client: BenchClient, rounds: int, calls: int) -> None:
    tokens = {token for _, token, _ in client.progress_events if token.startswith("wave/agent/")}
    if len(tokens) != 1:
        check("exactly one $/progress token for the Agent block", False, f"{tokens}")
        return
    events = [(t, v) for t, _, v in client.progress_events]
    kinds = [v.get("kind") for _, v in events]
    reports = [(t, v.get("message") or "") for t, v in events if v.get("kind") == "report"]
    end = next((v.get("message") or "" for _, v in events if v.get("kind") == "end"), "")
    check("begin, reports, end in order", kinds[0] == "begin" and kinds[-1] == "end")
    if not reports:
        check("reports received", False)
        return
    span = max(reports[-1][0] - reports[0][0], 1e-9)
    raw = rounds * (calls + 1) + 1  # each new tool call and each round's usage, plus the start
    figure(
        f"subagent: {rounds} zero-latency rounds x {calls} tool calls, reports sent",
        len(reports),
        "",
        note=f"{raw} short-result changes in {span:.1f} s, {raw / span:,.0f}/s before coalescing",
    )
    figure(
        "most $/progress reports for the Agent block in any 1 s",
        max_in_window([t for t, _ in reports]),
        "/s",
        RATE_LIMIT,
    )
    match = re.search(r"(\d+) tool calls? · ([\d,]+) tokens", end)
    final_calls, final_tokens = (int(match.group(1)), match.group(2)) if match else (-1, "?")
    check("end carries the final summary (tool calls, tokens)", final_calls == rounds * calls, end)
    last = reports[-1][1]
    check(
        "last report carries the final state (latest tool, final tokens)",
        last.startswith("Glob") and f"{final_tokens} tokens" in last,
        last,
    )


async def main() -> int:
    options = parse_options(__doc__)
    tokens, rounds, calls = (2_000, 15, 6) if options.quick else (5_000, 30, 8)
    answer = long_answer(tokens)
    heading("server start and idle memory")
    with tempfile.TemporaryDirectory(prefix="wave-bench-lsp-") as tmp:
        home, project = Path(tmp) / "home", Path(tmp) / "project"
        home.mkdir()
        (project / "src").mkdir(parents=True)
        for index in range(10):
            (project / "src" / f"m{index}.py").write_text(f"X = {index}\n")
        write_agent(
            project / ".wave" / "agents",
            "bench-worker",
            "Looks things up for benchmarks.",
            "You are the bench worker. Look things up and report.",
            "Glob",
        )
        plain_env = server_env(home)
        cached_env = bytecode_env(plain_env, Path(tmp) / "pycache")
        await start_against_minimal(cached_env, 1)  # compiles and caches the bytecode
        starts, minimal = await start_against_minimal(cached_env, 7)
        figure("minimal pygls server: start to initialize result, best", min(minimal), "s")
        figure("wave-ls: start to initialize result, best", min(starts), "s")
        figure(
            "wave-ls start vs the minimal pygls server (median of 7 paired ratios)",
            paired_ratio(starts, minimal),
            "x",
            START_RATIO,
            note=f"best of each: {min(starts) / min(minimal):.2f}x; medians "
            f"{statistics.median(starts):.2f} / {statistics.median(minimal):.2f} s",
        )
        note(f"wave-ls: {', '.join(f'{s:.2f}' for s in starts)} s")
        note(f"minimal: {', '.join(f'{s:.2f}' for s in minimal)} s")
        uncached = await start_times(plain_env, 3)
        figure(
            "  the same without cached bytecode (PYTHONDONTWRITEBYTECODE=1, median of 3)",
            statistics.median(uncached),
            "s",
        )
        startup_breakdown(cached_env)
        with FakeModelProcess(script(answer, rounds, calls)) as model:
            env = bytecode_env(server_env(home, **model.env()), Path(tmp) / "pycache")
            # A first turn compiles and caches the bytecode of what a turn imports (an
            # installed package has it from the install); compiling leaves its garbage.
            async with wave_server(env, root=project) as client:
                session = await client.request("wave/session/new", {"cwd": str(project)})
                await send(client, session["sessionId"], "hello-bench")
            async with wave_server(env, root=project) as client:
                await asyncio.sleep(0.5)
                after_init = rss_mb(client.pid)
                session = await client.request("wave/session/new", {"cwd": str(project)})
                session_id = session["sessionId"]
                await asyncio.sleep(0.5)
                after_session = rss_mb(client.pid)
                await send(client, session_id, "hello-bench")
                await asyncio.sleep(0.5)
                after_turn = rss_mb(client.pid)
                figure("idle RSS after initialize", after_init, "MB")
                figure(
                    "idle RSS after initialize + one session", after_session, "MB", RSS_TARGET_MB
                )
                figure(
                    "idle RSS after initialize + one session + its first turn",
                    after_turn,
                    "MB",
                    RSS_TARGET_MB,
                    note="the first model round loads the openai SDK",
                )

                heading(f"a fast stream (~{tokens:,} tokens at 5,000 tokens/s)")
                client.clear()
                await send(client, session_id, "stream-bench: tell me everything")
                stream_figures(client, session_id, answer, tokens)

                heading("a busy subagent's $/progress")
                client.clear()
                await send(client, session_id, "progress-bench: delegate the lookups")
                progress_figures(client, rounds, calls)
                figure("RSS after these turns", rss_mb(client.pid), "MB")
    return 0


if __name__ == "__main__":
    run_async(main())
