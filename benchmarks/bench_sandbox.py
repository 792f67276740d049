"""What the command sandbox costs (issue 17).

Per command: the Bash tool's ``run_command("true")`` (``bash -c`` in its own process group,
output through a pipe, exactly what a model's command goes through) unconfined, under
Landlock and under bubblewrap, interleaved in rounds so that machine noise hits all alike;
the extra cost of a mechanism is its median minus the unconfined median (target < 5 ms).
This process first imports what the server imports (pygls, the openai SDK, dulwich, ...), so
it has the server's size: forking it costs what forking the server costs. For comparison,
Landlock applied between fork and exec in the server's child (``preexec_fn``, the first
design) instead of through the sandbox's helper process (``runtime/sandbox/spawner.py``).
The same without network (plan mode and read-only agents, issue 25: Landlock's TCP rules
and the seccomp filter, or bubblewrap's network namespace) costs the same per command.
Also: building and closing one sandbox (once per isolated delegation: the ruleset, the
private TMPDIR, HEAD detached and attached again), and the worktree status that counts an
isolated run's changes, confined read-only vs not (``GitCliBackend.changes``).

    .venv/bin/python benchmarks/bench_sandbox.py [--quick]
"""

from __future__ import annotations

import asyncio
import functools
import os
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from common import figure, git, heading, make_git_repo, note, parse_options, percentile, rss_mb

import wave_ls.server.app
import wave_ls.session  # noqa: F401
from wave_ls.runtime.model_client import OpenAIModelClient  # noqa: F401
from wave_ls.runtime.processes import spawn_group
from wave_ls.runtime.sandbox import Confinement, confinement
from wave_ls.runtime.sandbox.bubblewrap import bwrap_offline_path, bwrap_path
from wave_ls.runtime.sandbox.landlock import NETWORK_ABI, abi_version
from wave_ls.runtime.tools.bash import run_command
from wave_ls.worktrees.git_cli import GitCliBackend
from wave_ls.worktrees.sandboxing import detach_head, isolated_writable, reattach_head

TARGET_MS = 5.0


def mechanisms() -> list[str]:
    found = []
    if abi_version() >= 1:
        found.append("landlock")
    if bwrap_path() is not None:
        found.append("bubblewrap")
    return found


def forced(mechanism: str, network: bool = True) -> Confinement:
    os.environ["WAVE_SANDBOX"] = mechanism
    try:
        box = confinement([Path(tempfile.gettempdir())], network=network)
        assert box.network == network, f"{mechanism} cannot cut the network here"
        return box
    finally:
        os.environ.pop("WAVE_SANDBOX", None)


def offline_mechanisms() -> list[str]:
    """Those that can also cut the network (plan mode, read-only agents: issue 25)."""
    found = []
    if abi_version() >= NETWORK_ABI:
        found.append("landlock")
    if bwrap_offline_path() is not None:
        found.append("bubblewrap")
    return found


async def preexec_true(box: Confinement, workdir: Path) -> int:
    """``bash -c true`` with Landlock applied in the forked child (the first design)."""
    process = await spawn_group("bash", "-c", "true", cwd=workdir, sandbox=box)
    return await process.wait()


async def per_command(rounds: int, workdir: Path) -> bool:
    heading("Per command: the Bash tool's run_command('true')")
    note(f"this process: {rss_mb(os.getpid()):.0f} MB resident (the server's size)")
    boxes: dict[str, Confinement | None] = {"unconfined": None}
    boxes.update((name, forced(name)) for name in mechanisms())
    boxes.update((f"{name}, no network", forced(name, False)) for name in offline_mechanisms())
    runs: dict[str, Callable[[], Awaitable[int | None]]] = {}
    for name, box in boxes.items():
        runs[name] = functools.partial(_tool_true, box, workdir)
    if "landlock" in boxes:
        old = forced("landlock")
        runs["landlock, preexec_fn (first design)"] = lambda: preexec_true(old, workdir)
    samples: dict[str, list[float]] = {name: [] for name in runs}
    for run in runs.values():  # warm-up: page cache, the helpers' start
        for _ in range(3):
            await run()
    for index in range(rounds):
        order = list(runs.items())
        order = order[index % len(order) :] + order[: index % len(order)]  # rotate
        for name, run in order:
            started = time.perf_counter()
            code = await run()
            samples[name].append((time.perf_counter() - started) * 1000)
            assert code == 0, name
    base = statistics.median(samples["unconfined"])
    figure("unconfined command, median", base, "ms")
    note(f"p90 {percentile(samples['unconfined'], 90):.1f} ms over {rounds} rounds")
    met = True
    for name in runs:
        if name == "unconfined":
            continue
        median = statistics.median(samples[name])
        target = None if "first design" in name else TARGET_MS
        met &= figure(f"{name}: extra per command (median)", median - base, "ms", target)
        note(f"median {median:.1f} ms, p90 {percentile(samples[name], 90):.1f} ms")
    for box in boxes.values():
        if box is not None:
            box.close()
    # Once per sandbox: the helper starts with the first command.
    starts = [(name, True) for name in mechanisms()]
    starts += [(name, False) for name in offline_mechanisms()]
    for name, network in starts:
        firsts = []
        for _ in range(5):
            box = forced(name, network)
            started = time.perf_counter()
            await run_command("true", workdir, 30, sandbox=box)
            firsts.append((time.perf_counter() - started) * 1000)
            box.close()
        label = name if network else f"{name}, no network"
        figure(
            f"{label}: first command of a new sandbox (starts its helper)",
            statistics.median(firsts),
            "ms",
        )
    if not mechanisms():
        note("no sandbox mechanism here: nothing to compare")
    return met


async def _tool_true(box: Confinement | None, workdir: Path) -> int | None:
    return (await run_command("true", workdir, 30, sandbox=box)).exit_code


def per_delegation(rounds: int, root: Path) -> None:
    heading("Per isolated delegation: sandbox set-up and end (without the helper's start)")
    repo = root / "repo"
    make_git_repo(repo, 50)
    worktree = repo / ".wave" / "worktrees" / "agent-bench"
    git(repo, "worktree", "add", "-q", "-b", "worktree-agent-bench", str(worktree))
    for name in mechanisms():
        times = []
        for _ in range(rounds):
            os.environ["WAVE_SANDBOX"] = name
            started = time.perf_counter()
            box = confinement(isolated_writable(worktree), private_tmp=True)
            detached = detach_head(worktree)
            assert detached is not None
            problem = reattach_head(detached)
            box.close()
            times.append((time.perf_counter() - started) * 1000)
            os.environ.pop("WAVE_SANDBOX", None)
            assert problem is None
        figure(f"{name}: build + detach HEAD + attach + close", statistics.median(times), "ms")

    heading("The end-of-run status (GitCliBackend.changes), confined read-only vs not")
    base = git(worktree, "rev-parse", "HEAD").strip()
    backend = GitCliBackend()
    choices = ["none", *mechanisms()]
    samples: dict[str, list[float]] = {name: [] for name in choices}
    for index in range(rounds):
        for name in choices[index % len(choices) :] + choices[: index % len(choices)]:
            os.environ["WAVE_SANDBOX"] = name
            started = time.perf_counter()
            backend.changes(worktree, base)
            samples[name].append((time.perf_counter() - started) * 1000)
            os.environ.pop("WAVE_SANDBOX", None)
    unconfined = statistics.median(samples["none"])
    figure("status unconfined, median", unconfined, "ms")
    for name in mechanisms():
        figure(f"status under {name}: extra", statistics.median(samples[name]) - unconfined, "ms")


def main() -> int:
    options = parse_options(__doc__)
    rounds = 40 if options.quick else 200
    note(f"mechanisms here: {', '.join(mechanisms()) or 'none'}; {rounds} rounds")
    with tempfile.TemporaryDirectory(prefix="wave-bench-sandbox-") as scratch:
        root = Path(scratch)
        asyncio.run(per_command(rounds, root))
        per_delegation(10 if options.quick else 30, root)
    return 0  # a MISS is printed, never an error


if __name__ == "__main__":
    raise SystemExit(main())
