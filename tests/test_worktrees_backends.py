"""Worktree manager: one suite run on both backends, on real repositories cloned from a
real bare "origin", plus dulwich's pitfalls and the manager's routing (SPEC section 6)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from dulwich import porcelain

from tests.support.git_repos import (
    branches,
    commit_all,
    git,
    isolate_git_env,
    origin_and_clone,
)
from wave_ls.worktrees import (
    Changes,
    DulwichBackend,
    GitCliBackend,
    WorktreeBackend,
    WorktreeError,
    WorktreeInfo,
    worktree_location,
)
from wave_ls.worktrees.manager import PREFERRED, WorktreeManager


@pytest.fixture(scope="session")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``origin.git`` (bare, default branch main) and ``repo``, a clone of it."""
    files = {
        "README.md": "hello\n",
        "app/main.py": "print('hi')\n",
        ".gitignore": "*.tmp\nbuild/\n",
    }
    return origin_and_clone(tmp_path_factory.mktemp("template"), files)


@pytest.fixture(autouse=True)
def clean_git_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git_env(tmp_path / "home", monkeypatch)


@pytest.fixture
def repo(template: Path, tmp_path: Path) -> Path:
    target = tmp_path / "repo"
    shutil.copytree(template / "repo", target, symlinks=True)
    return target.resolve()


@pytest.fixture
def origin_main(repo: Path) -> str:
    return git(repo, "rev-parse", "origin/main").strip()


@pytest.fixture(params=["dulwich", "git"])
def backend(request: pytest.FixtureRequest) -> WorktreeBackend:
    return DulwichBackend() if request.param == "dulwich" else GitCliBackend()


def new_worktree(
    backend: WorktreeBackend, repo: Path, name: str = "task", base: str = "origin/main"
) -> WorktreeInfo:
    path, branch = worktree_location(repo, name)
    return backend.create(repo, path, branch, base)


# ---------------------------------------------------------------------- create


def test_create_from_origin_default_branch(backend: WorktreeBackend, repo: Path, origin_main: str):
    # WT-2: <main repo>/.wave/worktrees/<name>, branch worktree-<name>, base origin/<default>
    git(repo, "commit", "-q", "--allow-empty", "-m", "local only")
    info = new_worktree(backend, repo, "fresh")
    assert info.path == repo / ".wave" / "worktrees" / "fresh"
    assert info.branch == "worktree-fresh"
    assert info.is_new and info.head == origin_main and info.base_commit == origin_main
    assert (info.path / "app" / "main.py").read_text() == "print('hi')\n"
    assert git(info.path, "rev-parse", "--abbrev-ref", "HEAD").strip() == "worktree-fresh"
    assert git(info.path, "rev-parse", "HEAD").strip() == origin_main
    assert git(info.path, "status", "--porcelain") == ""
    # The parent's checkout is untouched.
    assert git(repo, "rev-parse", "--abbrev-ref", "HEAD").strip() == "main"


def test_create_from_head(backend: WorktreeBackend, repo: Path, origin_main: str):
    # WT-2: baseRef "head" = the parent's current HEAD, not origin's
    (repo / "local.txt").write_text("not pushed\n")
    local = commit_all(repo, "local work")
    info = new_worktree(backend, repo, "from-head", base="HEAD")
    assert info.head == local != origin_main
    assert (info.path / "local.txt").exists()


def test_create_from_sha(backend: WorktreeBackend, repo: Path, origin_main: str):
    info = new_worktree(backend, repo, "by-sha", base=origin_main)
    assert info.base_commit == origin_main
    assert git(info.path, "rev-parse", "HEAD").strip() == origin_main


def test_create_with_unknown_base_fails_and_leaves_nothing(backend: WorktreeBackend, repo: Path):
    with pytest.raises(WorktreeError, match="unknown base ref"):
        new_worktree(backend, repo, "nope", base="origin/does-not-exist")
    assert not (repo / ".wave").exists()
    assert "worktree-nope" not in branches(repo)
    assert not (repo / ".git" / "worktrees").exists() or not any(
        (repo / ".git" / "worktrees").iterdir()
    )


def test_create_refuses_an_existing_branch(backend: WorktreeBackend, repo: Path):
    git(repo, "branch", "worktree-taken")
    with pytest.raises(WorktreeError, match="already exists"):
        new_worktree(backend, repo, "taken")
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1


def test_create_refuses_a_folder_that_is_not_a_worktree(backend: WorktreeBackend, repo: Path):
    path, branch = worktree_location(repo, "occupied")
    path.mkdir(parents=True)
    (path / "keep.txt").write_text("mine\n")
    with pytest.raises(WorktreeError, match="not a worktree"):
        backend.create(repo, path, branch, "origin/main")
    assert (path / "keep.txt").read_text() == "mine\n"
    assert branch not in branches(repo)


def test_the_repositorys_hooks_never_run_in_our_git(
    backend: WorktreeBackend, repo: Path, tmp_path: Path
):
    # A repository's hooks (a shipped .git, or one an agent wrote) run nothing of ours
    # (issue 25): core.hooksPath is /dev/null for wave's git; dulwich runs none here.
    ran = tmp_path / "hook-ran"
    for name in ("post-checkout", "reference-transaction", "pre-auto-gc"):
        hook = repo / ".git" / "hooks" / name
        hook.write_text(f"#!/bin/sh\necho {name} >> {ran}\n")
        hook.chmod(0o755)
    info = new_worktree(backend, repo, "hooked")
    assert info.is_new and (info.path / "README.md").exists()
    assert info.branch in branches(repo)
    assert backend.changes(info.path, info.base_commit or "") == Changes(0, 0)
    backend.remove(repo, info.path, info.branch)
    assert not ran.exists()
    git(repo, "checkout", "-q", "-b", "other")  # the hook is real: git itself runs it
    assert "post-checkout" in ran.read_text()


def test_existing_worktree_is_reused(backend: WorktreeBackend, repo: Path):
    # WT edge case: an existing worktree of the same name is reused (isNew: false)
    first = new_worktree(backend, repo, "again")
    (first.path / "work.txt").write_text("in progress\n")
    git(first.path, "add", "work.txt")
    git(first.path, "commit", "-q", "-m", "work")
    second = new_worktree(backend, repo, "again")
    assert second.is_new is False
    assert second.path == first.path and second.branch == "worktree-again"
    assert second.head == git(first.path, "rev-parse", "HEAD").strip()
    assert (first.path / "work.txt").read_text() == "in progress\n"


def test_a_registered_worktree_whose_folder_was_deleted_can_be_recreated(
    backend: WorktreeBackend, repo: Path
):
    first = new_worktree(backend, repo, "gone")
    shutil.rmtree(first.path)
    assert backend.changes(first.path, first.base_commit or "").determinable is False  # WT-8
    again = backend.create(repo, first.path, "worktree-gone-2", "origin/main")
    assert again.is_new and (again.path / "README.md").exists()
    assert git(again.path, "status", "--porcelain") == ""


# ---------------------------------------------------------------------- changes


def modify(wt: Path) -> None:
    (wt / "README.md").write_text("changed\n")


def untracked(wt: Path) -> None:
    (wt / "notes").mkdir()
    (wt / "notes" / "a.md").write_text("a\n")
    (wt / "notes" / "b.md").write_text("b\n")


def staged(wt: Path) -> None:
    (wt / "new.py").write_text("x = 1\n")
    git(wt, "add", "new.py")
    git(wt, "rm", "-q", "app/main.py")


def committed(wt: Path) -> None:
    for i in range(2):
        (wt / f"c{i}.txt").write_text(f"{i}\n")
        commit_all(wt, f"commit {i}")


def committed_and_dirty(wt: Path) -> None:
    committed(wt)
    modify(wt)


def ignored_only(wt: Path) -> None:
    (wt / "scratch.tmp").write_text("ignored by .gitignore\n")
    (wt / "build").mkdir()
    (wt / "build" / "out.bin").write_text("ignored dir\n")


@pytest.mark.parametrize(
    ("mutate", "files", "commits"),
    [
        (lambda wt: None, 0, 0),
        (modify, 1, 0),
        (untracked, 2, 0),
        (staged, 2, 0),
        (committed, 0, 2),
        (committed_and_dirty, 1, 2),
        (ignored_only, 0, 0),
    ],
    ids=["none", "modified", "untracked", "staged", "committed", "committed+dirty", "ignored"],
)
def test_changes(
    backend: WorktreeBackend, repo: Path, mutate: Callable[[Path], None], files: int, commits: int
):
    # WT-5/WT-6: changed files = status entries, commits = new since the creation HEAD
    info = new_worktree(backend, repo)
    mutate(info.path)
    changes = backend.changes(info.path, info.base_commit or "")
    assert changes == Changes(changed_files=files, commits=commits)
    assert changes.has_changes is bool(files or commits)


def test_status_taken_again_sees_every_change(backend: WorktreeBackend, repo: Path):
    # WT-5/WT-6: our git reuses its scratch git dir (and the index copied there) between
    # statuses; every change to a worktree, its index or its HEAD shows in the next one,
    # also with another worktree's status between them.
    first, other = new_worktree(backend, repo), new_worktree(backend, repo, "other")
    base = first.base_commit or ""

    def status() -> Changes:
        assert backend.changes(other.path, other.base_commit or "") == Changes(0, 0)
        return backend.changes(first.path, base)

    assert backend.changes(first.path, base) == Changes(0, 0)
    assert backend.changes(first.path, base) == Changes(0, 0)
    modify(first.path)
    assert backend.changes(first.path, base) == Changes(1, 0)
    git(first.path, "add", "README.md")  # the index changes, the work tree does not
    assert backend.changes(first.path, base) == Changes(1, 0)
    staged(first.path)
    assert status() == Changes(3, 0)
    (first.path / "late.txt").write_text("late\n")
    assert backend.changes(first.path, base) == Changes(4, 0)
    commit_all(first.path, "all of it")  # a stale copy of the index would lack late.txt
    assert backend.changes(first.path, base) == Changes(0, 1)
    git(first.path, "reset", "-q", "--hard", base)
    assert status() == Changes(0, 0)
    assert backend.changes(first.path, base) == Changes(0, 0)


def test_changes_undeterminable_means_keep(backend: WorktreeBackend, repo: Path):
    # WT-8: rev-list fails on an unknown base -> not determinable, counts as changes
    info = new_worktree(backend, repo)
    changes = backend.changes(info.path, "0123456789abcdef0123456789abcdef01234567")
    assert changes.determinable is False and changes.has_changes
    assert changes.error


def test_changes_count_from_the_worktree_head_at_creation(backend: WorktreeBackend, repo: Path):
    # WT edge case: change counting uses the worktree's own HEAD at creation as the base
    (repo / "ahead.txt").write_text("parent moved on\n")
    commit_all(repo, "parent commit")
    info = new_worktree(backend, repo, base="origin/main")
    assert backend.changes(info.path, info.base_commit or "") == Changes(0, 0)


def test_packed_refs_are_read(backend: WorktreeBackend, repo: Path):
    # branches live in packed-refs after `git gc`; lookups read them too
    info = new_worktree(backend, repo)
    git(repo, "branch", "worktree-packed")
    git(repo, "pack-refs", "--all")
    assert not (repo / ".git" / "refs" / "heads" / "worktree-task").exists()
    assert backend.changes(info.path, info.base_commit or "") == Changes(0, 0)
    (info.path / "n.txt").write_text("n\n")
    commit_all(info.path, "one")
    git(repo, "pack-refs", "--all")
    assert backend.changes(info.path, info.base_commit or "") == Changes(0, 1)
    with pytest.raises(WorktreeError, match="already exists"):
        new_worktree(backend, repo, "packed")
    assert backend.default_branch(repo) == "main"


# ---------------------------------------------------------------------- remove


def test_remove_clean_worktree_and_its_branch(backend: WorktreeBackend, repo: Path):
    # WT-5: no changes -> worktree directory and branch removed
    info = new_worktree(backend, repo, "done")
    backend.remove(repo, info.path, info.branch)
    assert not info.path.exists()
    assert "worktree-done" not in branches(repo)
    assert str(info.path) not in git(repo, "worktree", "list", "--porcelain")
    assert not list((repo / ".git").glob("worktrees/*"))
    assert {"main"} <= branches(repo)


def test_remove_refuses_a_dirty_worktree_unless_forced(backend: WorktreeBackend, repo: Path):
    # dulwich's worktree_remove deletes dirty worktrees; WT-6 keeps them
    info = new_worktree(backend, repo, "dirty")
    (info.path / "unsaved.txt").write_text("work\n")
    with pytest.raises(WorktreeError):
        backend.remove(repo, info.path, info.branch)
    assert (info.path / "unsaved.txt").read_text() == "work\n"
    assert "worktree-dirty" in branches(repo)
    backend.remove(repo, info.path, info.branch, force=True)
    assert not info.path.exists() and "worktree-dirty" not in branches(repo)


def test_remove_never_deletes_a_branch_checked_out_elsewhere(backend: WorktreeBackend, repo: Path):
    # dulwich's branch_delete deletes a checked-out branch; only worktree-<name> may go
    git(repo, "checkout", "-q", "-b", "feature")
    info = new_worktree(backend, repo, "side")
    other = new_worktree(backend, repo, "other")
    backend.remove(repo, info.path, "feature")
    assert not info.path.exists()
    assert {"feature", "main", "worktree-side", "worktree-other"} <= branches(repo)
    backend.remove(repo, other.path, "worktree-side")  # not checked out anywhere now
    assert "worktree-side" not in branches(repo) and "feature" in branches(repo)


def test_remove_respects_a_lock_unless_forced(backend: WorktreeBackend, repo: Path):
    info = new_worktree(backend, repo, "locked")
    git(repo, "worktree", "lock", "--reason", "someone else's", str(info.path))
    with pytest.raises(WorktreeError, match="locked"):
        backend.remove(repo, info.path, info.branch)
    assert info.path.exists()
    backend.remove(repo, info.path, info.branch, force=True)
    assert not info.path.exists() and "worktree-locked" not in branches(repo)


@pytest.mark.parametrize("where", ["main", "stranger"])
def test_remove_refuses_what_is_not_a_linked_worktree(
    backend: WorktreeBackend, repo: Path, tmp_path: Path, where: str
):
    target = repo if where == "main" else tmp_path / "stranger"
    target.mkdir(exist_ok=True)
    (target / "precious.txt").write_text("keep\n")
    with pytest.raises(WorktreeError, match="not a linked worktree"):
        backend.remove(repo, target, "main", force=True)
    assert (target / "precious.txt").exists() and "main" in branches(repo)


# ---------------------------------------------------------------------- lookups


def test_main_repo_from_anywhere(backend: WorktreeBackend, repo: Path, tmp_path: Path):
    # WT-10: from inside a worktree, the main repository is still found
    info = new_worktree(backend, repo)
    assert backend.main_repo(repo) == repo
    assert backend.main_repo(repo / "app") == repo
    assert backend.main_repo(repo / "app" / "main.py") == repo
    assert backend.main_repo(info.path / "app") == repo
    outside = tmp_path / "plain"
    outside.mkdir()
    assert backend.main_repo(outside) is None  # WT-11


def test_default_branch_from_origin_head(backend: WorktreeBackend, repo: Path):
    assert backend.default_branch(repo) == "main"


def test_default_branch_follows_the_symref(backend: WorktreeBackend, repo: Path):
    git(repo, "update-ref", "refs/remotes/origin/trunk", "origin/main")
    git(repo, "symbolic-ref", "refs/remotes/origin/HEAD", "refs/remotes/origin/trunk")
    assert backend.default_branch(repo) == "trunk"


def test_default_branch_falls_back_to_main_or_master(backend: WorktreeBackend, repo: Path):
    # `git init` + `remote add` + `fetch` leaves no origin/HEAD
    git(repo, "remote", "set-head", "origin", "--delete")
    assert backend.default_branch(repo) == "main"
    git(repo, "branch", "-q", "-m", "main", "local")
    git(repo, "update-ref", "refs/remotes/origin/master", "origin/main")
    git(repo, "update-ref", "-d", "refs/remotes/origin/main")
    assert backend.default_branch(repo) == "master"


def test_default_branch_without_remote(backend: WorktreeBackend, tmp_path: Path):
    lonely = tmp_path / "lonely"
    lonely.mkdir()
    git(lonely, "init", "-q", "-b", "main")
    git(lonely, "commit", "-q", "--allow-empty", "-m", "x")
    assert backend.default_branch(lonely) is None


def test_list(backend: WorktreeBackend, repo: Path, origin_main: str):
    b = new_worktree(backend, repo, "b")
    a = new_worktree(backend, repo, "a")
    git(b.path, "checkout", "-q", "--detach")
    listed = backend.list(b.path)
    assert [w.path for w in listed] == [repo, a.path, b.path]
    assert [w.is_main for w in listed] == [True, False, False]
    assert [w.branch for w in listed] == ["main", "worktree-a", None]
    assert [w.head for w in listed] == [origin_main] * 3


def test_ensure_excluded_keeps_the_parent_status_clean(backend: WorktreeBackend, repo: Path):
    exclude = repo / ".git" / "info" / "exclude"
    exclude.write_text("# mine\n*.secret")  # no final newline
    info = new_worktree(backend, repo)
    assert "?? .wave/" in git(repo, "status", "--porcelain")
    backend.ensure_excluded(info.path)  # from inside the worktree: still the main repo's
    backend.ensure_excluded(repo)
    assert exclude.read_text() == "# mine\n*.secret\n.wave/worktrees/\n"
    assert git(repo, "status", "--porcelain") == ""


# ---------------------------------------------------------------------- dulwich pitfalls


def test_two_worktrees_with_the_same_folder_name_stay_separate(
    backend: WorktreeBackend, repo: Path
):
    # dulwich names the admin dir after the folder and silently reuses an existing one
    first = backend.create(repo, repo / ".wave" / "worktrees" / "x", "worktree-x", "origin/main")
    second = backend.create(repo, repo / "elsewhere" / "x", "worktree-x2", "origin/main")
    assert second.is_new and second.path != first.path
    listed = git(repo, "worktree", "list", "--porcelain")
    assert f"worktree {first.path}\n" in listed and f"worktree {second.path}\n" in listed
    assert git(first.path, "rev-parse", "--abbrev-ref", "HEAD").strip() == "worktree-x"
    assert git(second.path, "rev-parse", "--abbrev-ref", "HEAD").strip() == "worktree-x2"
    backend.remove(repo, second.path, second.branch)
    assert git(first.path, "status", "--porcelain") == ""
    assert backend.changes(first.path, first.base_commit or "") == Changes(0, 0)


def test_create_called_from_inside_a_worktree_uses_the_main_repo(
    backend: WorktreeBackend, repo: Path
):
    # dulwich's worktree_add on a linked worktree fails with KeyError b'HEAD' and leaves debris
    outer = new_worktree(backend, repo, "outer")
    (outer.path / "outer.txt").write_text("x\n")
    outer_head = commit_all(outer.path, "outer work")
    path, branch = worktree_location(repo, "inner")
    inner = backend.create(outer.path / "app", path, branch, "HEAD")
    assert inner.head == outer_head  # "HEAD" is the caller's HEAD
    assert str(inner.path) in git(repo, "worktree", "list", "--porcelain")
    admin = Path(git(outer.path, "rev-parse", "--git-dir").strip())
    assert not (admin / "worktrees").exists()
    assert not (outer.path / ".wave").exists()


def test_status_in_a_worktree_honours_the_main_info_exclude(backend: WorktreeBackend, repo: Path):
    # dulwich does not read info/exclude inside linked worktrees; git reads the common one
    (repo / ".git" / "info" / "exclude").write_text("*.log\ncache/\n")
    info = new_worktree(backend, repo)
    (info.path / "debug.log").write_text("noise\n")
    (info.path / "cache").mkdir()
    (info.path / "cache" / "blob").write_text("noise\n")
    assert git(info.path, "status", "--porcelain", "--untracked-files=all") == ""
    assert backend.changes(info.path, info.base_commit or "") == Changes(0, 0)
    backend.remove(repo, info.path, info.branch)
    assert not info.path.exists()


def test_real_git_reads_what_we_wrote(backend: WorktreeBackend, repo: Path):
    # never relative gitdir links: git < 2.48 cannot read them
    info = new_worktree(backend, repo)
    listed = git(repo, "worktree", "list", "--porcelain")
    assert f"worktree {info.path}\nHEAD {info.head}\nbranch refs/heads/{info.branch}" in listed
    assert git(info.path, "status", "--porcelain") == ""
    admin = Path(git(info.path, "rev-parse", "--absolute-git-dir").strip())
    gitdir = (admin / "gitdir").read_text().strip()
    assert os.path.isabs(gitdir) and Path(gitdir) == info.path / ".git"
    assert os.path.isabs((info.path / ".git").read_text().removeprefix("gitdir:").strip())
    assert "relativeworktrees" not in (repo / ".git" / "config").read_text().lower()
    git(repo, "worktree", "prune")
    assert str(info.path) in git(repo, "worktree", "list", "--porcelain")
    (info.path / "a.txt").write_text("a\n")
    commit_all(info.path, "git commits in it")
    assert backend.changes(info.path, info.base_commit or "") == Changes(0, 1)


# ---------------------------------------------------------------------- no git installed


def test_an_unchanged_worktree_is_removed_in_process_as_git_would(repo: Path):
    # The end of an unchanged isolated run (WT-5): the status was just taken, so removal
    # starts no process; git sees it gone, branch and admin dir included; a lock still holds.
    manager = WorktreeManager()
    info = new_worktree(manager, repo, "unchanged")
    locked = new_worktree(manager, repo, "held")
    git(repo, "worktree", "lock", str(locked.path))
    with no_processes():
        manager.remove_unchanged(repo, info.path, info.branch)
        with pytest.raises(WorktreeError, match="locked"):
            manager.remove_unchanged(repo, locked.path, locked.branch)
    assert not info.path.exists() and locked.path.is_dir()
    assert "worktree-unchanged" not in branches(repo) and "worktree-held" in branches(repo)
    listed = git(repo, "worktree", "list", "--porcelain")
    assert str(info.path) not in listed and str(locked.path) in listed
    assert [p.name for p in (repo / ".git" / "worktrees").iterdir()] == ["held"]


@pytest.fixture
def no_git_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """PATH holding only python: no git binary to be found."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "python").symlink_to(sys.executable)
    monkeypatch.setenv("PATH", str(bin_dir))
    assert shutil.which("git") is None


class NoProcess(subprocess.Popen[bytes]):
    def __init__(self, *args: object, **kwargs: object) -> None:
        raise AssertionError(f"a process was started: {args}")


@contextmanager
def no_processes() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(subprocess, "Popen", NoProcess)
        yield


def dulwich_commit(wt: Path, name: str) -> None:
    (wt / name).write_text("n\n")
    porcelain.add(str(wt), [str(wt / name)])
    # dulwich runs (absent) hooks through subprocess: outside the no-process guard
    porcelain.commit(str(wt), message=b"work", author=b"A <a@b>", committer=b"A <a@b>")


def test_dulwich_backend_works_without_git(repo: Path, no_git_on_path: None):
    with no_processes():
        manager = WorktreeManager()
    assert set(manager.choices().values()) == {"dulwich"}
    for backend in (DulwichBackend(), manager):
        name = f"nogit-{backend.name}"
        with no_processes():
            assert backend.main_repo(repo / "app") == repo
            assert backend.default_branch(repo) == "main"
            backend.ensure_excluded(repo)
            info = new_worktree(backend, repo, name)
            assert backend.changes(info.path, info.base_commit or "") == Changes(0, 0)
        dulwich_commit(info.path, "new.txt")
        (info.path / "README.md").write_text("changed\n")
        with no_processes():
            assert backend.changes(info.path, info.base_commit or "") == Changes(1, 1)
            assert [w.branch for w in backend.list(repo)] == ["main", f"worktree-{name}"]
            with pytest.raises(WorktreeError):
                backend.remove(repo, info.path, info.branch)
            backend.remove(repo, info.path, info.branch, force=True)
        assert not info.path.exists()
    assert porcelain.status(str(repo)).untracked == []


def test_git_backend_without_git_fails_safe(repo: Path, no_git_on_path: None):
    # WT-8: changes that cannot be determined are kept; other calls raise a readable error
    changes = GitCliBackend().changes(repo, "0" * 40)
    assert changes.determinable is False and changes.has_changes
    with pytest.raises(WorktreeError, match="cannot run git"):
        GitCliBackend().list(repo)


# ---------------------------------------------------------------------- manager


def test_manager_routes_each_operation(repo: Path):
    manager = WorktreeManager()
    assert manager.choices() == dict(PREFERRED)
    assert WorktreeManager(git_available=False).choices() == {op: "dulwich" for op in PREFERRED}
    forced = WorktreeManager(prefer={"create": "dulwich"})
    assert forced.choices()["create"] == "dulwich"


@pytest.mark.parametrize(("maker", "reader"), [("git", "dulwich"), ("dulwich", "git")])
def test_backends_read_each_others_worktrees(repo: Path, maker: str, reader: str):
    # the manager mixes backends per operation, so each must read what the other wrote
    make = DulwichBackend() if maker == "dulwich" else GitCliBackend()
    read = DulwichBackend() if reader == "dulwich" else GitCliBackend()
    info = new_worktree(make, repo)
    assert read.changes(info.path, info.base_commit or "") == Changes(0, 0)
    assert read.list(repo)[1].branch == info.branch
    assert read.create(repo, info.path, "ignored", "HEAD").is_new is False
    modify(info.path)
    assert read.changes(info.path, info.base_commit or "") == Changes(1, 0)
    with pytest.raises(WorktreeError):
        read.remove(repo, info.path, info.branch)
    read.remove(repo, info.path, info.branch, force=True)
    assert not info.path.exists() and info.branch not in branches(repo)
