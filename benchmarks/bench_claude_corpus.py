"""Load the 966 Claude Code agent files of ``shared/corpus/agents/`` cold; print the figures.

Run: ``python benchmarks/bench_claude_corpus.py [--repeat R]``.
The files go where a Claude Code user keeps them, ``<project>/.claude/agents/<collection>/``
(subdirectories, as three of the collections tell users to install them). Targets (issue
24): the first load ever (no parse cache) and a cold load with the parse cache on disk stay
within 10 % of the figures before Claude Code's files were read (1.12 s and 0.14 s on these
machines), and every file Claude Code loads, loads.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from common import check, figure, heading, note

from wave_ls.agents import AgentRegistry
from wave_ls.agents.parse_cache import CACHE_FILE

CORPUS = Path(__file__).resolve().parents[2] / "shared" / "corpus" / "agents"
BEFORE_FIRST_EVER_S = 1.12
BEFORE_CACHED_S = 0.14
BROKEN_FOR_CLAUDE_CODE = 20  # tests/support/claude_corpus.py says which


def lay_out(project: Path) -> int:
    """Copy the corpus into the project's ``.claude/agents/<collection>/``; the file count."""
    count = 0
    for collection in sorted(p for p in CORPUS.iterdir() if p.is_dir()):
        target = project / ".claude" / "agents" / collection.name
        target.mkdir(parents=True)
        for file in collection.glob("*.md"):
            shutil.copyfile(file, target / file.name)
            count += 1
    past = time.time() - 3600  # older than the parse cache's racy window
    for path in project.rglob("*.md"):
        os.utime(path, (past, past))
    return count


def load_seconds(home: Path, project: Path) -> tuple[float, int, int]:
    """One load by a new registry: seconds, agents, files that cannot be read."""
    start = time.perf_counter()
    catalog = AgentRegistry(home=home, env={}).load(project)
    seconds = time.perf_counter() - start
    # A name that another collection also uses is reported too, but the file itself loads.
    errors = {
        p.path
        for p in catalog.problems
        if p.severity == "error" and not p.message.startswith("duplicate name")
    }
    return seconds, len(catalog.agents), len(errors)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    if not CORPUS.is_dir():
        print(f"no corpus at {CORPUS}: nothing to measure", file=sys.stderr)
        return
    with tempfile.TemporaryDirectory() as tmp:
        home, project = Path(tmp) / "home", Path(tmp) / "project"
        home.mkdir()
        files = lay_out(project)
        firsts = []
        for _ in range(max(1, args.repeat // 2)):
            (home / CACHE_FILE).unlink(missing_ok=True)
            firsts.append(load_seconds(home, project)[0])
        cached = [load_seconds(home, project) for _ in range(args.repeat)]
    _seconds, agents, errors = cached[-1]
    heading(f"{files} Claude Code agent files in .claude/agents/<collection>/")
    first = statistics.median(firsts)
    warm = statistics.median(c[0] for c in cached)
    figure(
        "first load ever (no parse cache), median", first * 1000, "ms", BEFORE_FIRST_EVER_S * 1100
    )
    figure("cold load (parse cache on disk), median", warm * 1000, "ms", BEFORE_CACHED_S * 1100)
    note(f"before: {BEFORE_FIRST_EVER_S * 1000:.0f} ms / {BEFORE_CACHED_S * 1000:.0f} ms")
    loaded = files - errors
    note(
        f"{loaded} of {files} files load ({loaded / files:.1%}); {agents} agents once the "
        "names several collections share are counted once"
    )
    check(
        "every file Claude Code loads, loads",
        errors <= BROKEN_FOR_CLAUDE_CODE,
        f"{errors} files with an error; {BROKEN_FOR_CLAUDE_CODE} are broken for Claude Code too",
    )


if __name__ == "__main__":
    main()
