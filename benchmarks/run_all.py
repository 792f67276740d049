"""Run every ``benchmarks/bench_*.py`` one after another, each in its own process.

    .venv/bin/python benchmarks/run_all.py [--quick] [--only NAME] [--strict]

Each benchmark prints its figures beside their targets (``OK`` / ``MISS``); this prints
everything as it comes, then a summary: the time each took and every ``MISS`` line.
``--quick`` runs smaller sizes (a look in about a minute, not figures to quote).
Exit code 1 when a benchmark failed to run (or, with ``--strict``, when a target was missed).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent

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
    """Run one benchmark, echoing its output; (exit code, seconds, its MISS lines)."""
    started = time.perf_counter()
    misses: list[str] = []
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
            if line.rstrip().endswith("MISS") or "  MISS  [" in line:
                misses.append(line.strip())
    return process.returncode, time.perf_counter() - started, misses


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
    for name, code, seconds, misses in results:
        state = "ran" if code == 0 else f"FAILED (exit code {code})"
        print(f"{name:<24} {seconds:6.1f} s  {state}  {len(misses)} missed")
    all_misses = [(name, line) for name, _, _, misses in results for line in misses]
    for name, line in all_misses:
        print(f"  MISS in {name}: {line}")
    failed = any(code != 0 for _, code, _, _ in results)
    return 1 if failed or (options.strict and all_misses) else 0


if __name__ == "__main__":
    raise SystemExit(main())
