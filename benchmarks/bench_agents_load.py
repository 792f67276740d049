"""Load 1,000 agent definition files cold and warm; print the figures.

Run: ``python benchmarks/bench_agents_load.py [--files N] [--repeat R]``.
Targets: cold <= 2 s (a new process, whose parse cache on disk knows the files: strictyaml's
public parser costs ~3 ms a file, so a first load ever parses for seconds), warm (nothing
changed) <= 50 ms.

The files are realistic: a folded ``description`` with a colon in it, a flow ``tools`` list,
``model``, ``omitAgentsMd``, an unknown key and a 40-line body; half are user files, half
project files, and 50 project files override user ones by name. "Warm, just written"
is a warm load while every file is younger than the cache's racy window (each file is then
re-read and compared by content, not parsed); "warm" is the steady state.
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from common import figure, heading, note

from wave_ls.agents import AgentRegistry
from wave_ls.agents.parse_cache import CACHE_FILE

BODY = "\n".join(
    f"{i}. When you work on step {i}, read the relevant files first, then report "
    "what you found with absolute paths and the lines that matter."
    for i in range(1, 41)
)


def agent_text(index: int, name: str) -> str:
    return f"""---
name: {name}
description: >-
  Use this agent PROACTIVELY when the task is about area {index}: it knows
  the conventions of that part of the code, runs its checks and reports
  back with file paths and line numbers. Not for unrelated work.
tools: [Read, Grep, Glob, Bash, WebFetch]
model: inherit
omitAgentsMd: true
color: blue
---

You are the specialist for area {index}.

{BODY}
"""


def write_tree(root: Path, count: int) -> tuple[Path, Path]:
    home, project = root / "home", root / "project"
    user_dir, project_dir = home / ".wave" / "agents", project / ".wave" / "agents"
    user_dir.mkdir(parents=True)
    project_dir.mkdir(parents=True)
    half = count // 2
    for i in range(half):
        (user_dir / f"agent-{i:04d}.md").write_text(agent_text(i, f"agent-{i:04d}"))
    for i in range(half, count):
        # The first 50 project files override user agents by name.
        name = f"agent-{i - half:04d}" if i - half < 50 else f"agent-{i:04d}"
        (project_dir / f"p-{i:04d}.md").write_text(agent_text(i, name))
    return home, project


def age_files(root: Path, seconds: float) -> None:
    """Move every mtime into the past, as for files not edited in the last few seconds."""
    past = time.time() - seconds
    for path in root.rglob("*.md"):
        os.utime(path, (past, past))


def timed(fn: object, repeat: int) -> list[float]:
    assert callable(fn)
    out = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        out.append(time.perf_counter() - start)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        home, project = write_tree(root, args.files)

        racy = timed(lambda: AgentRegistry(home=home, env={}).load(project), 1)[0]
        age_files(root, 3600)
        (home / CACHE_FILE).unlink(missing_ok=True)
        first_ever = timed(lambda: AgentRegistry(home=home, env={}).load(project), 1)[0]
        cold = timed(lambda: AgentRegistry(home=home, env={}).load(project), args.repeat)
        registry = AgentRegistry(home=home, env={})
        catalog = registry.load(project)
        parsed = registry.parse_count
        warm = timed(lambda: registry.load(project), args.repeat * 4)
        assert registry.parse_count == parsed, "a warm load parsed files"

        edited = project / ".wave" / "agents" / f"p-{args.files - 1:04d}.md"
        edited.write_text(agent_text(0, "edited-agent"))
        one_edit = timed(lambda: registry.load(project), 1)[0]

    heading(
        f"{args.files} agent files ({len(catalog.agents)} agents after overrides, incl. "
        f"built-ins; {len(catalog.problems)} problems)"
    )
    figure("cold load (a new process; parse cache on disk), median", median_ms(cold), "ms", 2000)
    figure("warm load (nothing changed), median", median_ms(warm), "ms", 50)
    figure("first load ever (no parse cache yet)", first_ever * 1000, "ms")
    figure("load of files all written in the last seconds (parsed)", racy * 1000, "ms")
    figure("warm load after one edit", one_edit * 1000, "ms")
    note(f"per file, first load ever: {first_ever / args.files * 1000:.2f} ms of parsing")


def median_ms(values: list[float]) -> float:
    return statistics.median(values) * 1000


if __name__ == "__main__":
    main()
