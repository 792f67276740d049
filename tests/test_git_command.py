"""wave's own git (``runtime/git_command.py``) with real git and real repositories: what a
repository's config could make it run is off, the user's own settings stay, stdin is never
the server's, a hung command is killed with its group; dulwich never runs a repository's
filter drivers either."""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

from tests.support.git_repos import commit_all, git, init_repo, isolate_git_env, write_files
from tests.support.processes import alive
from tests.support.waiting import until_blocking
from wave_ls.runtime import git_command
from wave_ls.runtime.git_command import GitTimeout, UnsafeConfig, parse_config
from wave_ls.worktrees.dulwich_backend import DulwichBackend
from wave_ls.worktrees.git_cli import GitCliBackend


@pytest.fixture(autouse=True)
def clean_git_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git_env(tmp_path / "home", monkeypatch)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return init_repo(tmp_path / "repo", {"a.py": "a = 1\n", ".gitattributes": "*.py filter=x\n"})


def traps(repo: Path, marker: Path) -> None:
    """A repository config whose every program leaves a line in ``marker``."""

    def program(name: str) -> str:
        return f"sh -c 'echo {name} >> {marker}; cat'"

    git(repo, "config", "core.fsmonitor", f"echo fsmonitor >> {marker}; false")
    git(repo, "config", "filter.x.clean", program("clean"))
    git(repo, "config", "filter.x.smudge", program("smudge"))
    git(repo, "config", "filter.x.required", "true")
    git(repo, "config", "core.sshCommand", program("ssh"))
    git(repo, "config", "credential.helper", f"!echo helper >> {marker}")
    if "origin" not in git(repo, "remote").split():
        git(repo, "remote", "add", "origin", str(repo))
    git(repo, "config", "remote.origin.uploadpack", program("uploadpack"))
    hook = repo / ".git" / "hooks" / "post-checkout"
    hook.write_text(f"#!/bin/sh\necho hook >> {marker}\n")
    hook.chmod(0o755)


def test_a_repositorys_programs_never_run(repo: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    traps(repo, marker)
    (repo / "a.py").write_text("a = 22\n")  # another size: git must read it
    for args in (
        ("status", "--porcelain"),
        ("add", "--all"),
        ("ls-files", "-t", "-c", "-o", "-d", "--exclude-standard", "-z"),
        ("worktree", "add", "-q", "--detach", str(tmp_path / "wt")),
        ("fetch", "-q", "origin", "main"),
    ):
        done = git_command.run_git(repo, *args)
        assert done.returncode == 0, (args, done.stderr)
    assert not marker.exists(), marker.read_text()
    git(repo, "status")  # the user's own git runs them: the traps are real
    assert "fsmonitor" in marker.read_text()


def test_the_users_own_filters_still_run(repo: Path, tmp_path: Path) -> None:
    # ~/.gitconfig is the user's (git-lfs lives there): only the repository's own are off.
    marker = tmp_path / "ran"
    git(repo, "config", "--global", "filter.x.clean", f"sh -c 'echo user >> {marker}; cat'")
    (repo / "a.py").write_text("a = 22\n")  # another size: git must read it
    assert git_command.run_git(repo, "add", "--all").returncode == 0
    assert marker.read_text() == "user\n"


def test_included_config_files_count_as_the_repositorys(repo: Path, tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    (repo / "extra.cfg").write_text(f"[filter \"x\"]\n\tclean = sh -c 'echo inc >> {marker}'\n")
    git(repo, "config", "include.path", "../extra.cfg")
    git(repo, "config", "includeIf.gitdir:/nowhere/.path", "../extra.cfg")
    (repo / "a.py").write_text("a = 333\n")
    assert git_command.run_git(repo, "add", "--all").returncode == 0
    assert not marker.exists()


def test_a_filter_name_that_cannot_be_overridden_is_refused(repo: Path) -> None:
    with (repo / ".git" / "config").open("a") as handle:
        handle.write('[filter "a=b"]\n\tclean = true\n')
    with pytest.raises(UnsafeConfig):
        git_command.run_git(repo, "status")


def test_parse_config_reads_sections_subsections_and_values() -> None:
    text = (
        '[core]\n\tfsmonitor = "x y"\n[filter "a b"]  clean = c ; comment\n'
        "[remote.origin]\nuploadpack=u\n[include]\npath = ~/x\n"
    )
    entries = [(e.section, e.subsection, e.key, e.value) for e in parse_config(text)]
    assert entries == [
        ("core", None, "fsmonitor", "x y"),
        ("filter", "a b", "clean", "c"),
        ("remote", "origin", "uploadpack", "u"),
        ("include", None, "path", "~/x"),
    ]


def test_stdin_is_never_the_servers(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # git and what it starts would read the server's stdin, the editor's LSP pipe.
    got = tmp_path / "stdin"
    shim_dir = tmp_path / "shim"
    shim_dir.mkdir()
    real = shutil.which("git")
    (shim_dir / "git").write_text(
        f'#!/bin/sh\nreadlink /proc/self/fd/0 >> {got}\nexec {real} "$@"\n'
    )
    (shim_dir / "git").chmod(0o755)
    monkeypatch.setenv("PATH", f"{shim_dir}{os.pathsep}{os.environ['PATH']}")
    read, write = os.pipe()
    saved = os.dup(0)
    os.dup2(read, 0)  # our stdin: a pipe nobody writes, as the editor's
    try:
        done = git_command.run_git(repo, "status", "--porcelain", timeout=10)
    finally:
        os.dup2(saved, 0)
        for fd in (read, write, saved):
            os.close(fd)
    assert done.returncode == 0
    assert got.read_text().strip() == "/dev/null"


def test_a_hung_git_is_killed_with_its_group(repo: Path, tmp_path: Path) -> None:
    pid_file = tmp_path / "pid"
    git(repo, "config", "--global", "filter.x.clean", f"sh -c 'echo $$ > {pid_file}; sleep 60'")
    (repo / "a.py").write_text("a = 55555\n")
    started = time.monotonic()
    with pytest.raises(GitTimeout):
        git_command.run_git(repo, "add", "--all", timeout=1)
    assert time.monotonic() - started < 5
    pid = int(pid_file.read_text())
    until_blocking(lambda: not alive(pid), 2.5, "the filter's end with its git")


@pytest.mark.parametrize("backend", [GitCliBackend(), DulwichBackend()], ids=["git", "dulwich"])
def test_counting_a_worktrees_changes_runs_nothing_of_the_repository(
    backend: GitCliBackend | DulwichBackend, repo: Path, shared_dir: Path
) -> None:
    # dulwich runs filter.<x>.clean from the config by itself (in this process). The marker
    # is where the git backend's inspection sandbox may write: a trap that ran must show.
    path = repo / ".wave" / "worktrees" / "w"
    git(repo, "worktree", "add", "-q", "-b", "worktree-w", str(path))
    marker = shared_dir / "ran"
    traps(repo, marker)
    write_files(path, {"a.py": "a = 6\n", "b.py": "b = 1\n"})
    head = git(path, "rev-parse", "HEAD").strip()
    changes = backend.changes(path, head)
    assert (changes.changed_files, changes.commits) == (2, 0)
    diff = backend.diff(path, head)
    assert {change.path for change in diff.files} == {"a.py", "b.py"}
    assert not marker.exists(), marker.read_text()
    git(path, "status")  # the user's own git runs them: the traps are real
    assert "fsmonitor" in marker.read_text()
    commit_all(repo, "nothing")  # (the parent still works)
