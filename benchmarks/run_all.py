"""Run every ``benchmarks/bench_*.py`` one after another, each in its own process.

    .venv/bin/python benchmarks/run_all.py [--quick] [--only NAME] [--strict]

Each benchmark prints one line per target, ending in ``OK`` or ``MISS`` (``common.figure``
and ``common.check``), and exits 0 whether its targets are met or not. This prints
everything as it comes, then a summary: the time each benchmark took (``CRASHED`` only when
it did not run to its end), and one table of every target of every benchmark.
``--quick`` runs smaller sizes (a look in about a minute, not figures to quote).
Exit code 1 when a benchmark crashed (or, with ``--strict``, when a target was missed).
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

# A target's line: "label: value  (target <= t)  OK|MISS  [note]" (a check has no target).
VERDICT = re.compile(r"^(?P<what>.+?)  (?P<verdict>OK|MISS)(?:  \[.*\])?$")

# Smaller sizes for the benchmarks that take their own options rather than ``--quick``.
QUICK_ARGS: dict[str, list[str]] = {
    "bench_agents_load.py": ["--files", "200", "--repeat", "2"],
    "bench_tools.py": ["--files", "2000", "--runs", "2"],
    "bench_worktrees.py": ["--files", "500", "--rounds", "2"],
}


def python() -> str:
    """This interpreter if it has wave_ls, else the repository's virtualenv."""
    try:
        import wave_ls  # noqa: F401
    except ImportError:
        venv = ROOT / ".venv" / "bin" / "python"
        if venv.exists():
            return str(venv)
        raise SystemExit("wave_ls is not importable: run with .venv/bin/python") from None
    return sys.executable


def arguments(script: Path, quick: bool) -> list[str]:
    if not quick:
        return []
    if script.name in QUICK_ARGS:
        return QUICK_ARGS[script.name]
    return ["--quick"] if "--quick" in script.read_text(encoding="utf-8") else []


def run(interpreter: str, script: Path, args: list[str]) -> tuple[int, float, list[str]]:
    """Run one benchmark, echoing its output; (exit code, seconds, its target lines)."""
    started = time.perf_counter()
    targets: list[str] = []
    with subprocess.Popen(
        [interpreter, str(script), *args],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
        bufsize=1,
    ) as process:
        assert process.stdout is not None
        for line in process.stdout:
            print(line, end="", flush=True)
            if ": " in line and VERDICT.match(line.strip()):
                targets.append(line.strip())
    return process.returncode, time.perf_counter() - started, targets


def table(results: list[tuple[str, int, float, list[str]]]) -> int:
    """Print every target line, MISS first; the number missed."""
    rows = [
        (match["verdict"], name, match["what"])
        for name, _, _, lines in results
        for line in lines
        if (match := VERDICT.match(line))
    ]
    missed = sum(verdict == "MISS" for verdict, _, _ in rows)
    print(f"\n######## every target: {len(rows) - missed} met, {missed} missed")
    width = max((len(name) for _, name, _ in rows), default=0)
    for verdict, name, what in sorted(rows, key=lambda row: row[0] == "OK"):
        print(f"{verdict:<4}  {name:<{width}}  {what}")
    return missed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes")
    parser.add_argument("--only", help="run only the benchmarks whose file name contains this")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a target is missed")
    options = parser.parse_args()
    interpreter = python()
    scripts = sorted(HERE.glob("bench_*.py"))
    if options.only:
        scripts = [s for s in scripts if options.only in s.name]
    results: list[tuple[str, int, float, list[str]]] = []
    for script in scripts:
        args = arguments(script, options.quick)
        print(f"\n######## {script.name} {' '.join(args)}".rstrip(), flush=True)
        code, seconds, misses = run(interpreter, script, args)
        results.append((script.name, code, seconds, misses))

    print("\n######## summary" + (" (--quick: smaller sizes)" if options.quick else ""))
    for name, code, seconds, targets in results:
        state = "ran" if code == 0 else f"CRASHED (exit code {code})"
        print(f"{name:<24} {seconds:6.1f} s  {state}  {len(targets)} targets")
    missed = table(results)
    crashed = any(code != 0 for _, code, _, _ in results)
    return 1 if crashed or (options.strict and missed) else 0


if __name__ == "__main__":
    raise SystemExit(main())
