"""Worktree create / status / remove: each backend and the manager beside plain git.

Run: ``.venv/bin/python benchmarks/bench_worktrees.py [--files 5000] [--rounds 8]``.
Builds a repository of ``--files`` files (cloned, so objects are packed as in real
repositories), then times every operation ``--rounds`` times (default 8), interleaved, and prints
medians in milliseconds. Figures go to stdout; this is not the server.

Targets (issues 6 and 18), the manager against plain git: create <= 1.2x, and status <= 1.2x.
Create (seconds of disk work: one lucky round would decide a best-of) compares the medians
of the ``--rounds`` rounds; status (milliseconds) compares best against best, the sample that
nothing else on a loaded machine got in the way of, over ``STATUS_PAIRS`` alternating pairs
on one clean worktree (plain ``git status --porcelain --untracked-files=all`` against
``WorktreeManager.changes``, which does all it does in the server: its sandbox, ``-z``, the
HEAD check, with the worktree's dirs recorded at its creation, as isolation passes them).
Medians are shown beside. Exits 0 when a target is missed (the line says MISS).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from common import figure, note

from wave_ls.worktrees import DulwichBackend, GitCliBackend, WorktreeBackend
from wave_ls.worktrees.inspection import registered_dirs
from wave_ls.worktrees.manager import WorktreeManager

ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
}


# status is cheap and noisy: sample it several times per round.
STATUS_REPEATS = 5
STATUS_PAIRS = 40
TARGET_RATIO = 1.2


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=ENV, capture_output=True, text=True, check=True
    )
    return done.stdout


def build_repo(root: Path, files: int) -> Path:
    """A clone of a ``files``-file repository with a real ``origin/main``."""
    src = root / "src"
    src.mkdir()
    git(src, "init", "-q", "-b", "main")
    per_dir = 100
    for i in range(files):
        folder = src / f"pkg{i // per_dir:03d}"
        folder.mkdir(exist_ok=True)
        body = f"# module {i}\n" + "".join(f"value_{j} = {i * j}\n" for j in range(20))
        (folder / f"mod{i:05d}.py").write_text(body)
    git(src, "add", "-A")
    git(src, "commit", "-q", "-m", "init")
    git(root, "clone", "-q", "--bare", str(src), "origin.git")
    git(root, "clone", "-q", str(root / "origin.git"), "repo")
    return root / "repo"


def timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


class Runner:
    """One way of doing create/status/remove, with a fresh worktree name per round."""

    def __init__(self, label: str, repo: Path) -> None:
        self.label = label
        self.repo = repo
        self.times: dict[str, list[float]] = {"create": [], "status": [], "remove": []}

    def round(self, n: int) -> None:
        raise NotImplementedError


class PlainGit(Runner):
    def round(self, n: int) -> None:
        path = self.repo / ".wave" / "worktrees" / f"plain-{n}"
        branch = f"worktree-plain-{n}"
        t = self.times
        t["create"].append(
            timed(lambda: git(self.repo, "worktree", "add", "-q", "-b", branch, str(path), "HEAD"))
        )
        for _ in range(STATUS_REPEATS):
            t["status"].append(
                timed(lambda: git(path, "status", "--porcelain", "--untracked-files=all"))
            )

        def remove() -> None:
            git(self.repo, "worktree", "remove", str(path))
            git(self.repo, "branch", "-D", branch)

        t["remove"].append(timed(remove))


class ViaBackend(Runner):
    def __init__(self, label: str, repo: Path, backend: WorktreeBackend) -> None:
        super().__init__(label, repo)
        self.backend = backend

    def round(self, n: int) -> None:
        path = self.repo / ".wave" / "worktrees" / f"{self.label}-{n}"
        branch = f"worktree-{self.label}-{n}"
        t = self.times
        info = []
        t["create"].append(
            timed(lambda: info.append(self.backend.create(self.repo, path, branch, "origin/main")))
        )
        base = info[0].base_commit or ""
        changes = []
        for _ in range(STATUS_REPEATS):
            t["status"].append(timed(lambda: changes.append(self.backend.changes(path, base))))
        assert changes[0].determinable and not changes[0].has_changes, changes[0]
        t["remove"].append(timed(lambda: self.backend.remove(self.repo, path, branch)))


def micro(repo: Path, rounds: int) -> dict[str, dict[str, float]]:
    """Smaller operations: lookups, commit counting, branch deletion."""
    backends: dict[str, WorktreeBackend] = {"dulwich": DulwichBackend(), "git": GitCliBackend()}
    head = git(repo, "rev-parse", "HEAD").strip()
    out: dict[str, dict[str, float]] = {}
    for name, backend in backends.items():
        samples: dict[str, list[float]] = {
            "main_repo": [],
            "default_branch": [],
            "list": [],
            "ensure_excluded": [],
            "branch_delete": [],
        }
        for n in range(rounds):
            branch = f"bench-del-{name}-{n}"
            git(repo, "branch", branch, head)
            calls: dict[str, Callable[[], object]] = {
                "main_repo": partial(backend.main_repo, repo / "pkg001"),
                "default_branch": partial(backend.default_branch, repo),
                "list": partial(backend.list, repo),
                "ensure_excluded": partial(backend.ensure_excluded, repo),
                "branch_delete": partial(delete_branch, name, repo, branch),
            }
            for op, call in calls.items():
                samples[op].append(timed(call))
        out[name] = {k: statistics.median(v) for k, v in samples.items()}
    return out


def delete_branch(backend: str, repo: Path, branch: str) -> None:
    if backend == "git":
        git(repo, "branch", "-D", branch)
        return
    from dulwich.repo import Repo

    from wave_ls.runtime.git_dirs import common_dir_of
    from wave_ls.worktrees.dulwich_backend import delete_branch as dulwich_delete

    common = common_dir_of(repo)
    assert common is not None
    with Repo(str(repo)) as r:
        dulwich_delete(r, common, branch)


def commit_counting(repo: Path, rounds: int) -> dict[str, float]:
    """rev-list --count vs the dulwich walker, on a worktree with 20 new commits."""
    wt = repo / ".wave" / "worktrees" / "count"
    git(repo, "worktree", "add", "-q", "-b", "worktree-count", str(wt), "HEAD")
    base = git(wt, "rev-parse", "HEAD").strip()
    for i in range(20):
        (wt / "pkg000" / "mod00000.py").write_text(f"x = {i}\n")
        git(wt, "commit", "-q", "-am", f"c{i}")
    from dulwich.repo import Repo

    from wave_ls.worktrees.dulwich_backend import _count_commits

    def via_dulwich() -> None:
        with Repo(str(wt)) as r:
            assert _count_commits(r, base) == 20

    def via_git() -> None:
        assert git(wt, "rev-list", "--count", f"{base}..HEAD").strip() == "20"

    result = {
        "git rev-list --count": statistics.median(timed(via_git) for _ in range(rounds)),
        "dulwich walker": statistics.median(timed(via_dulwich) for _ in range(rounds)),
    }
    git(repo, "worktree", "remove", "--force", str(wt))
    git(repo, "branch", "-D", "worktree-count")
    return result


def status_pairs(
    repo: Path, manager: WorktreeManager, pairs: int
) -> tuple[list[float], list[float]]:
    """Status of one clean worktree, plain git and the manager alternating: ms each."""
    path = repo / ".wave" / "worktrees" / "status-pairs"
    info = manager.create(repo, path, "worktree-status-pairs", "HEAD")
    base = info.base_commit or ""
    dirs = registered_dirs(path, repo)  # recorded at creation, as isolation does

    def plain() -> None:
        git(path, "status", "--porcelain", "--untracked-files=all")

    def ours() -> None:
        changes = manager.changes(path, base, dirs=dirs)
        assert changes.determinable and not changes.has_changes, changes

    samples: dict[str, list[float]] = {"plain": [], "ours": []}
    try:
        for n in range(pairs + 1):
            order = [("plain", plain), ("ours", ours)]
            for label, call in order if n % 2 else order[::-1]:
                took = timed(call)
                if n:  # the first pair warms the caches
                    samples[label].append(took)
    finally:
        manager.remove(repo, path, "worktree-status-pairs")
    return samples["plain"], samples["ours"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--rounds", type=int, default=8)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="wave-bench-") as tmp:
        start = time.perf_counter()
        repo = build_repo(Path(tmp), args.files)
        print(f"repo: {args.files} files, built in {time.perf_counter() - start:.1f} s")
        print(git(repo, "--version").strip())
        manager = WorktreeManager()
        runners: list[Runner] = [
            PlainGit("plain git", repo),
            ViaBackend("git", repo, GitCliBackend()),
            ViaBackend("dulwich", repo, DulwichBackend()),
            ViaBackend("manager", repo, manager),
        ]
        for n in range(args.rounds):
            # Rotate the order so no runner always goes first (cold caches) or last.
            shift = n % len(runners)
            for runner in runners[shift:] + runners[:shift]:
                runner.round(n)
        plain = {op: statistics.median(v) for op, v in runners[0].times.items()}
        print(
            f"\nmedians of {args.rounds} rounds ({STATUS_REPEATS} status samples each), "
            "ms (ratio to plain git)"
        )
        print(f"{'':12}" + "".join(f"{op:>18}" for op in plain))
        for runner in runners:
            cells = []
            for op, values in runner.times.items():
                med = statistics.median(values)
                cells.append(f"{med:9.1f} ({med / plain[op]:4.2f}x)")
            print(f"{runner.label:12}" + "".join(f"{c:>18}" for c in cells))
        print(f"\nmanager choices: {manager.choices()}")
        creates = runners[3].times["create"], runners[0].times["create"]
        figure(
            f"worktree create ({args.files:,} files), manager vs plain git",
            statistics.median(creates[0]) / statistics.median(creates[1]),
            "x",
            TARGET_RATIO,
            note=f"medians of {args.rounds} rounds; best of each "
            f"{min(creates[0]) / min(creates[1]):.2f}x",
        )
        plain_status, our_status = status_pairs(repo, manager, STATUS_PAIRS)
        figure(
            f"worktree status ({args.files:,} files), manager vs plain git",
            min(our_status) / min(plain_status),
            "x",
            TARGET_RATIO,
            note=f"best of {STATUS_PAIRS} alternating pairs; medians "
            f"{statistics.median(our_status) / statistics.median(plain_status):.2f}x",
        )
        note(
            f"best {min(our_status):.1f} ms vs {min(plain_status):.1f} ms; medians "
            f"{statistics.median(our_status):.1f} ms vs {statistics.median(plain_status):.1f} ms"
        )
        print("\nsmaller operations, medians in ms")
        for name, figures in micro(repo, args.rounds).items():
            print(f"  {name:8}" + "  ".join(f"{k} {v:.1f}" for k, v in figures.items()))
        print("\ncommit counting (20 new commits), medians in ms")
        for label, value in commit_counting(repo, args.rounds).items():
            print(f"  {label:22} {value:.1f}")


if __name__ == "__main__":
    main()
