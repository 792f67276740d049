"""How long the agent waits for Read, Grep and Glob on a 20,000-file repository.

Times from calling ``tool.run`` to its result (median of several runs), side by side with
running ``rg`` directly for the same searches (skipped when rg is not installed).

    .venv/bin/python benchmarks/bench_tools.py [--files 20000] [--runs 5]
"""

from __future__ import annotations

import argparse
import asyncio
import shutil
import statistics
import subprocess
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from wave_ls.runtime.core import Tool, ToolContext
from wave_ls.runtime.tools import GlobTool, GrepTool, ReadTool

WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota"]


def make_repo(root: Path, files: int) -> None:
    """``files`` source files in 100-file directories, a .gitignore and an ignored tree."""
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / ".gitignore").write_text("node_modules/\n*.log\n")
    per_dir = 100
    for index in range(files):
        folder = root / "src" / f"pkg{index // per_dir // 20}" / f"mod{index // per_dir}"
        if index % per_dir == 0:
            folder.mkdir(parents=True, exist_ok=True)
        lines = [f"# file {index}", "import os", ""]
        for line in range(30):
            word = WORDS[(index + line) % len(WORDS)]
            lines.append(f"def {word}_{line}(value):\n    return value + {line}  # {word}")
        if index % 1000 == 7:
            lines.append("RARE_NEEDLE = True")
        (folder / f"file{index}.py").write_text("\n".join(lines) + "\n")
    ignored = root / "node_modules" / "dep"
    ignored.mkdir(parents=True)
    for index in range(500):
        (ignored / f"x{index}.js").write_text("RARE_NEEDLE\n")
    (root / "big.py").write_text("".join(f"line_{i} = {i}\n" for i in range(5000)))


async def median_ms(call: Callable[[], Awaitable[Any]], runs: int) -> float:
    await call()  # warm the page cache and imports
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        await call()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def tool_call(tool: Tool, args: dict[str, Any], ctx: ToolContext) -> Callable[[], Awaitable[Any]]:
    return lambda: tool.run(args, ctx)


def rg_call(args: list[str], cwd: Path) -> Callable[[], Awaitable[Any]]:
    async def run() -> None:
        process = await asyncio.create_subprocess_exec(
            "rg", *args, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        await process.wait()

    return run


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()
    has_rg = shutil.which("rg") is not None
    with tempfile.TemporaryDirectory() as temp:
        root = Path(temp) / "repo"
        root.mkdir()
        started = time.perf_counter()
        make_repo(root, options.files)
        print(f"repo: {options.files} files, made in {time.perf_counter() - started:.1f} s")
        ctx = ToolContext(cwd=root, home=Path(temp))
        rg_tool, py_tool = GrepTool(use_ripgrep=True), GrepTool(use_ripgrep=False)

        rows: list[tuple[str, float | None, float | None, float | None]] = []
        small = "src/pkg0/mod0/file1.py"
        reads: list[tuple[str, dict[str, Any]]] = [
            (f"Read {small}", {"file_path": small}),
            ("Read big.py (5,000 lines: first 2,000)", {"file_path": "big.py"}),
            (
                "Read big.py offset 4000 limit 100",
                {"file_path": "big.py", "offset": 4000, "limit": 100},
            ),
        ]
        for label, args in reads:
            read_ms = await median_ms(tool_call(ReadTool(), args, ctx), options.runs)
            rows.append((label, read_ms, None, None))

        searches: list[tuple[str, dict[str, Any], list[str]]] = [
            ("Grep rare, files", {"pattern": "RARE_NEEDLE"}, ["-l", "RARE_NEEDLE"]),
            (
                "Grep rare, content",
                {"pattern": "RARE_NEEDLE", "output_mode": "content"},
                ["-n", "RARE_NEEDLE"],
            ),
            ("Grep common, files", {"pattern": "def alpha_1\\b"}, ["-l", "def alpha_1\\b"]),
            (
                "Grep common, count",
                {"pattern": "import os", "output_mode": "count"},
                ["-c", "import os"],
            ),
            (
                "Grep -i, type py, content, head 50",
                {
                    "pattern": "rare_needle",
                    "-i": True,
                    "type": "py",
                    "output_mode": "content",
                    "head_limit": 50,
                },
                ["-i", "-t", "py", "-n", "rare_needle"],
            ),
        ]
        for label, args, rg_args in searches:
            with_rg = (
                await median_ms(tool_call(rg_tool, args, ctx), options.runs) if has_rg else None
            )
            python = await median_ms(tool_call(py_tool, args, ctx), max(options.runs // 2, 1))
            direct = await median_ms(rg_call(rg_args, root), options.runs) if has_rg else None
            rows.append((label, with_rg, python, direct))
        for pattern in ("**/*.py", "src/pkg0/**/file1*.py"):
            glob_ms = await median_ms(
                tool_call(GlobTool(), {"pattern": pattern}, ctx), options.runs
            )
            rows.append((f"Glob {pattern}", glob_ms, None, None))

    def cell(value: float | None) -> str:
        return "-" if value is None else f"{value:,.1f}"

    print(f"\nmedian ms over {options.runs} runs ({'rg ' + ('found' if has_rg else 'absent')})")
    print(f"{'operation':<42} {'tool (rg)':>10} {'tool (py)':>10} {'rg direct':>10}")
    for name, main_ms, py_ms, rg_ms in rows:  # Read and Glob: one figure, first column
        print(f"{name:<42} {cell(main_ms):>10} {cell(py_ms):>10} {cell(rg_ms):>10}")


if __name__ == "__main__":
    asyncio.run(main())
