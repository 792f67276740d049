"""A delegation through ``wave-ls run``, the way a user runs it (issue 30).

A separate ``wave-ls run`` process per run, its output to a pipe and to a pseudo-terminal;
the offline model in its own process records when each request arrived and when each
streamed answer's ``[DONE]`` was sent (``done_time``). The main agent calls ``Agent`` once;
the subagent runs one Bash command (``ls``: an isolated one runs it in its sandbox), then
answers:

- launch: the main agent's first answer complete (``[DONE]``) -> the subagent's first
  request arrives;
- return gap: the subagent's last answer complete -> the main agent's next request arrives.

Each with and without ``isolation: worktree``, and with three kinds of endpoint: one that
ends its body with ``[DONE]``, one whose body ends 40 ms later (a keep-alive server whose last
small write waits for a delayed ACK: what the issue's harness showed as a 48 ms return gap),
and one that answers each request after 50 ms (a model reading its prompt: work the run
does meanwhile, a worktree's checkout and its status, is off the path there).
Runs are interleaved round by round; figures are medians.

    .venv/bin/python benchmarks/bench_run_delegation.py [--quick]

Targets: the return gap <= 10 ms in every case; worktree isolation (worktree and sandbox
together) adds <= 20 ms to the launch and to the return (medians, isolated minus not).
And what must not regress (issue 30): the peak memory of the ``wave-ls run`` process
(<= 80 MB, ``ru_maxrss``), the main agent's first request (<= 30 KB; Claude Code 2.1 sends
78.3 KB) and a subagent's first request (<= 7 KB; Claude Code 8.7 KB), as JSON bytes.
"""

from __future__ import annotations

import json
import os
import pty
import select
import statistics
import subprocess
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from common import (
    GIT_ENV,
    PYTHON,
    FakeModelProcess,
    figure,
    heading,
    make_git_repo,
    model_script,
    note,
    parse_options,
    server_env,
    write_agent,
)

GAP_TARGET_MS = 10.0
ISOLATION_TARGET_MS = 20.0
PEAK_MB_TARGET = 80.0
MAIN_REQUEST_KB_TARGET = 30.0
SUBAGENT_REQUEST_KB_TARGET = 7.0
CLAUDE_CODE_KB = {"main": 78.3, "subagent": 8.7}
LAGGING_BODY_SECONDS = 0.04
THINKING_SECONDS = 0.05
HELPER_SYSTEM = "bench helper"


def script(end_delay: float, delay: float = 0.0) -> dict[str, Any]:
    def agent(prompt: str, **extra: str) -> dict[str, Any]:
        arguments = {"subagent_type": "bench-helper", "description": "find files"}
        return {"name": "Agent", "arguments": {**arguments, "prompt": prompt, **extra}}

    def main_route(match: str, **extra: str) -> dict[str, Any]:
        steps = [
            {"content": "", "tool_calls": [agent("helper-task: find the python files", **extra)]},
            {"content": "The helper found them."},
        ]
        return {"match": match, "steps": steps}

    listing = {"name": "Bash", "arguments": {"command": "ls"}}
    routes = [
        main_route("isolated-run:", isolation="worktree"),
        main_route("plain-run:"),
        {
            "match": "helper-task",
            "system": HELPER_SYSTEM,
            "steps": [{"content": "", "tool_calls": [listing]}, {"content": "Found 10 files."}],
        },
    ]
    for route in routes:
        for step in route["steps"]:
            step["end_delay"] = end_delay
            step["delay"] = delay
    return model_script(routes)


PEAKS_MB: list[float] = []  # ru_maxrss of each wave-ls run to a pipe
REQUEST_KB: dict[str, float] = {}  # the first request's JSON size, main agent and subagent


def run_to_pipe(command: list[str], env: dict[str, str]) -> None:
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    assert process.stdout is not None
    process.stdout.read()  # to its end: the process has closed it
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    assert process.returncode == 0, process.returncode
    PEAKS_MB.append(usage.ru_maxrss / 1024)  # KiB on Linux


def run_on_terminal(command: list[str], env: dict[str, str]) -> None:
    leader, follower = pty.openpty()
    process = subprocess.Popen(command, env=env, stdin=follower, stdout=follower, stderr=follower)
    os.close(follower)
    try:
        while select.select([leader], [], [], 60)[0]:
            try:
                if not os.read(leader, 65536):
                    break
            except OSError:  # the terminal closed with the process
                break
    finally:
        os.close(leader)
    assert process.wait(timeout=60) == 0


def one_run(
    model: FakeModelProcess, project: Path, home: Path, *, isolated: bool, terminal: bool
) -> tuple[float, float]:
    """(launch, return gap) in milliseconds."""
    model.reset()
    env = {**server_env(home), **model.env(), **GIT_ENV}
    prompt = ("isolated-run:" if isolated else "plain-run:") + " find the python files"
    command = [PYTHON, "-m", "wave_ls", "run", "--cwd", str(project)]
    command += ["--permission-mode", "bypassPermissions", prompt]
    (run_on_terminal if terminal else run_to_pipe)(command, env)
    main_first, sub_first, sub_last, main_next = model.records()
    for who, record in (("main", main_first), ("subagent", sub_first)):
        REQUEST_KB[who] = len(json.dumps(record["body"]).encode()) / 1000
    launch = sub_first["time"] - main_first["done_time"]
    back = main_next["time"] - sub_last["done_time"]
    return launch * 1000, back * 1000


def main() -> None:
    options = parse_options(__doc__)
    rounds = 2 if options.quick else 7
    met = True
    with tempfile.TemporaryDirectory(prefix="wave-bench-run-deleg-") as tmp:
        root = Path(tmp)
        home, project = root / "home", root / "project"
        home.mkdir()
        make_git_repo(project, 20)
        write_agent(project / ".wave" / "agents", "bench-helper", "Helps.", HELPER_SYSTEM, "Bash")
        endpoints = (
            (0.0, 0.0, "body ends at [DONE]"),
            (LAGGING_BODY_SECONDS, 0.0, "body ends 40 ms after [DONE]"),
            (0.0, THINKING_SECONDS, "answers after 50 ms"),
        )
        for end_delay, delay, kind in endpoints:
            heading(f"wave-ls run, one delegation ({kind})")
            samples: dict[tuple[str, bool], list[tuple[float, float]]] = defaultdict(list)
            with FakeModelProcess(script(end_delay, delay)) as model:
                one_run(model, project, home, isolated=True, terminal=False)  # warm caches
                for _ in range(rounds):
                    for terminal in (False, True):
                        for isolated in (False, True):
                            output = "terminal" if terminal else "pipe"
                            figures = one_run(
                                model, project, home, isolated=isolated, terminal=terminal
                            )
                            samples[(output, isolated)].append(figures)
            for output in ("pipe", "terminal"):
                plain = samples[(output, False)]
                isolated_runs = samples[(output, True)]
                for label, runs in (("no worktree", plain), ("worktree", isolated_runs)):
                    back = statistics.median(r[1] for r in runs)
                    met &= figure(f"return gap, {label}, to a {output}", back, "ms", GAP_TARGET_MS)
                    note(f"launch {statistics.median(r[0] for r in runs):.1f} ms")
                for index, what in ((0, "launch"), (1, "return")):
                    extra = statistics.median(r[index] for r in isolated_runs) - statistics.median(
                        r[index] for r in plain
                    )
                    met &= figure(
                        f"isolation's extra on the {what}, to a {output}",
                        extra,
                        "ms",
                        ISOLATION_TARGET_MS,
                    )
    heading("what must not regress")
    met &= figure("peak memory of wave-ls run (max)", max(PEAKS_MB), "MB", PEAK_MB_TARGET)
    for who, target in (("main", MAIN_REQUEST_KB_TARGET), ("subagent", SUBAGENT_REQUEST_KB_TARGET)):
        label = f"first request of the {'main agent' if who == 'main' else 'subagent'}"
        met &= figure(label, REQUEST_KB[who], "KB", target)
        note(f"Claude Code 2.1: {CLAUDE_CODE_KB[who]} KB")
    print("\nall targets met" if met else "\nsome targets missed")


if __name__ == "__main__":
    main()
