"""Workspace trust as a library (``runtime/trust.py``) on real repositories: what git tracks,
without running anything of the repository's, never hanging on a planted FIFO; where the
decision is kept; the records' seals."""

from __future__ import annotations

import json
import os
import shutil
import stat
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TypeVar

import pytest

from tests.support.git_repos import git, init_repo
from tests.support.hostile_repo import HostileRepo, hostile_repo
from tests.support.python_probe import run_python
from wave_ls.runtime import record_seal
from wave_ls.runtime.project_settings import load_layers
from wave_ls.runtime.trust import from_repository, is_trusted, set_trust, trust_status
from wave_ls.worktrees import registry_file

hostile = hostile_repo
T = TypeVar("T")


def within(seconds: float, work: Callable[[], T]) -> T:
    """``work()``, failing the test if it takes longer (a FIFO read would block forever)."""
    pool = ThreadPoolExecutor(1)
    try:
        return pool.submit(work).result(timeout=seconds)
    finally:
        pool.shutdown(wait=False)


def fifo(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
    os.mkfifo(path)


def test_tracked_is_what_the_index_lists_and_no_git_runs(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "r", {"a.txt": "a\n", ".wave/settings.json": "{}"})
    marker = tmp_path / "fsmonitor-ran"
    git(repo, "config", "core.fsmonitor", f"touch {marker}")
    (repo / "untracked.txt").write_text("u\n")
    assert from_repository(repo / ".wave" / "settings.json")
    assert from_repository(repo / "a.txt")
    assert not from_repository(repo / "untracked.txt")
    assert not from_repository(repo / ".wave" / "settings.local.json")
    assert not from_repository(tmp_path / "outside.txt")
    assert not marker.exists()  # the index was read, no git (and no fsmonitor) ran


def test_a_committed_symlink_for_the_folder_counts_as_the_repository(tmp_path: Path) -> None:
    repo = init_repo(tmp_path / "r", {"elsewhere/settings.json": "{}"})
    (repo / ".wave").symlink_to("elsewhere")
    git(repo, "add", ".wave")
    git(repo, "commit", "-qm", "link")
    assert from_repository(repo / ".wave" / "settings.json")


def test_planted_fifos_never_hang(tmp_path: Path, home: Path) -> None:
    # A FIFO as .git: not a repository; as .git/index: cannot tell, so "tracked".
    plain = tmp_path / "plain"
    fifo(plain / ".git")
    assert within(5, lambda: from_repository(plain / "x.json")) is False
    repo = init_repo(tmp_path / "r", {"a.txt": "a\n"})
    fifo(repo / ".git" / "index")
    assert within(5, lambda: from_repository(repo / "a.txt")) is True
    # A FIFO as a settings file: skipped with a warning.
    fifo(repo / ".wave" / "settings.json")
    layers, warnings = within(5, lambda: load_layers(repo, home))
    assert layers == [] and any("not a regular file" in w for w in warnings)
    # A FIFO as a registry record: not a record.
    fifo(repo / registry_file.REGISTRY_DIR / "w.json")
    assert within(5, lambda: registry_file.read_records(repo)) == []
    assert within(5, lambda: trust_status(repo, home)).held_back == ()


def test_held_back_keys_return_once_trusted(hostile: HostileRepo, home: Path) -> None:
    repo = hostile.repo
    layers, _ = load_layers(repo, home)
    assert [(layer.origin, layer.from_repository, layer.held_back) for layer in layers] == [
        ("local", True, ("hooks", "sandbox")),
        ("project", True, ("hooks", "sandbox")),
    ]
    assert all("hooks" not in layer.data and "sandbox" not in layer.data for layer in layers)
    assert layers[1].data["worktree"] == {"baseRef": "head"}  # text settings still apply
    status = set_trust(repo / "src", home, True)
    assert status.root == repo and status.trusted and status.held_back == ()
    layers, _ = load_layers(repo, home)
    assert layers[1].data["sandbox"]["enabled"] is True and layers[0].held_back == ()


def test_the_nearest_decision_wins_and_the_store_is_private(tmp_path: Path, home: Path) -> None:
    outer = tmp_path / "work"
    inner = outer / "client" / "repo"
    inner.mkdir(parents=True)
    set_trust(outer, home, True)
    assert is_trusted(inner, home)
    set_trust(inner, home, False)
    assert not is_trusted(inner / "deeper", home) and is_trusted(outer / "client", home)
    store = home / ".wave" / "trust.json"
    assert stat.S_IMODE(store.stat().st_mode) == 0o600
    saved = json.loads(store.read_text())
    assert saved["version"] == 1
    assert saved["folders"][str(inner.resolve())]["trusted"] is False
    assert isinstance(saved["folders"][str(outer.resolve())]["at"], int)
    assert [p.name for p in store.parent.iterdir()] == ["trust.json"]  # no temp file left


def test_only_records_wave_ls_sealed_are_read(
    tmp_path: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HOME", str(home))
    project = tmp_path / "p"
    record = registry_file.WorktreeRecord("a", str(tmp_path / "wt"), "", None, "head", "s", "t")
    registry_file.write_record(project, record)
    assert registry_file.read_records(project) == [record]
    key = home / record_seal.KEY_FILE
    assert stat.S_IMODE(key.stat().st_mode) == 0o600 and key.stat().st_size == 32
    saved = json.loads(registry_file.record_path(project, "a").read_text())
    # The same record under another name, or with a changed field, is not wave-ls's.
    registry_file.record_path(project, "b").write_text(json.dumps({**saved, "name": "b"}))
    changed = {**saved, "path": "/"}
    registry_file.record_path(project, "c").write_text(json.dumps(changed))
    assert registry_file.read_records(project) == [record]
    assert registry_file.read_record(project, "c") is None


def test_agent_files_that_hold_nothing_back_are_judged_without_reading_the_index(
    tmp_path: Path, home: Path
) -> None:
    # Most repositories commit agent files without hooks: nothing to hold back, so what git
    # tracks is never asked (no index read, dulwich's index reader not even imported).
    plain = "---\nname: {0}\ndescription: Plain.\n---\nBody.\n"
    repo = init_repo(
        tmp_path / "r",
        {
            ".wave/agents/reviewer.md": plain.format("reviewer"),
            ".claude/agents/team/tester.md": plain.format("tester"),
            ".mcp.json": "{}",
        },
    )
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from wave_ls.runtime.trust import trust_status\n"
        f"status = trust_status(Path({str(repo)!r}), Path({str(home)!r}))\n"
        "print(status.held_back, 'dulwich.index' in sys.modules)\n"
    )
    done = run_python(script)
    assert (done.returncode, done.stdout, done.stderr) == (0, "() False\n", "")


def test_a_committed_agent_with_hooks_is_held_back_at_any_depth_and_an_untracked_one_is_not(
    tmp_path: Path, home: Path
) -> None:
    hooks = "---\nname: {0}\ndescription: D.\nhooks:\n  Stop: []\n---\nBody.\n"
    repo = init_repo(
        tmp_path / "r",
        {
            ".wave/agents/plain.md": "---\nname: plain\ndescription: D.\n---\nB.\n",
            ".claude/agents/team/deep/hooked.md": hooks.format("hooked"),
        },
    )
    (repo / ".wave" / "agents" / "mine.md").write_text(hooks.format("mine"))  # not committed
    status = trust_status(repo, home)
    assert [(item.kind, item.path.relative_to(repo).as_posix()) for item in status.held_back] == [
        ("agentHooks", ".claude/agents/team/deep/hooked.md")
    ]
