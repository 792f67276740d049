"""Subagent worktree isolation end to end (SPEC section 6): create, copy, hooks, the
keep/remove rule, the registry and ``list_wave_worktrees``, on real repositories cloned from
a real bare "origin", through both backends."""

from __future__ import annotations

import asyncio
import json
import re
import shlex
import shutil
import sys
from pathlib import Path

import pytest

from tests.support.git_repos import (
    branches,
    commit_all,
    git,
    isolate_git_env,
    origin_and_clone,
)
from tests.support.waiting import until
from wave_ls.worktrees import (
    IsolatedWorktree,
    IsolationError,
    WorktreeManager,
    create_isolated_worktree,
    finish_isolated_worktree,
    list_wave_worktrees,
)
from wave_ls.worktrees.registry_file import REGISTRY_DIR, read_record, read_records


def write_settings(repo: Path, data: dict[str, object], name: str = "settings.json") -> None:
    target = repo / ".wave" / name
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(data), encoding="utf-8")


def py_hook(code: str) -> str:
    """A hook command running ``code`` with this Python (no jq needed)."""
    return f"{shlex.quote(sys.executable)} -c {shlex.quote(code)}"


@pytest.fixture(scope="session")
def template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``origin.git`` (bare, default branch main) and ``repo``, a clone of it."""
    files = {
        "README.md": "hello\n",
        "pkg/mod.py": "x = 1\n",
        ".gitignore": ".env\n*.local\n*.txt\nbuild/\n",
    }
    return origin_and_clone(tmp_path_factory.mktemp("template"), files)


@pytest.fixture(autouse=True)
def clean_git_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    isolate_git_env(tmp_path / "home", monkeypatch)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def origin(template: Path, tmp_path: Path) -> Path:
    target = tmp_path / "origin.git"
    shutil.copytree(template / "origin.git", target, symlinks=True)
    return target.resolve()


@pytest.fixture
def repo(template: Path, tmp_path: Path, origin: Path) -> Path:
    """A clone with its own origin (so a test may push to it) and one local-only commit."""
    target = tmp_path / "repo"
    shutil.copytree(template / "repo", target, symlinks=True)
    git(target, "remote", "set-url", "origin", str(origin))
    (target / "local.py").write_text("local = True\n")
    commit_all(target, "local only")
    return target.resolve()


@pytest.fixture(params=["git", "dulwich"])
def manager(request: pytest.FixtureRequest) -> WorktreeManager:
    """The default manager (git where it is faster) and a pure-dulwich one."""
    return WorktreeManager() if request.param == "git" else WorktreeManager(git_available=False)


async def create(
    repo: Path, manager: WorktreeManager, home: Path, **kw: object
) -> IsolatedWorktree:
    return await create_isolated_worktree(repo, home=home, manager=manager, **kw)  # type: ignore[arg-type]


def head(path: Path) -> str:
    return git(path, "rev-parse", "HEAD").strip()


# ---------------------------------------------------------------------- create


async def test_fresh_base_is_origin_default_branch(
    repo: Path, manager: WorktreeManager, home: Path
):
    # WT-2: <main>/.wave/worktrees/agent-<8 hex>, branch worktree-<name>, base origin/main
    wt = await create(repo, manager, home, owner="subagent sub-1 (test-runner)")
    assert re.fullmatch(r"agent-[0-9a-f]{8}", wt.name)
    assert wt.path == repo / ".wave" / "worktrees" / wt.name
    assert wt.branch == f"worktree-{wt.name}"
    assert wt.is_new and not wt.hook_created and wt.main_repo == repo
    assert wt.base_commit == head(wt.path) == git(repo, "rev-parse", "origin/main").strip()
    assert wt.base_commit != head(repo)  # the local-only commit is not in a fresh worktree
    assert not (wt.path / "local.py").exists()
    assert git(wt.path, "rev-parse", "--abbrev-ref", "HEAD").strip() == wt.branch


async def test_fresh_fetches_origin_first(repo: Path, origin: Path, tmp_path: Path, home: Path):
    # WT-2: fresh means origin's current default branch, not the last fetched one
    other = tmp_path / "other"
    git(tmp_path, "clone", "-q", str(origin), str(other))
    (other / "new.py").write_text("new = 1\n")
    pushed = commit_all(other, "pushed later")
    git(other, "push", "-q", "origin", "main")
    wt = await create(repo, WorktreeManager(), home)
    assert wt.base_commit == pushed and (wt.path / "new.py").exists()


async def test_head_base_is_parent_head(repo: Path, manager: WorktreeManager, home: Path):
    # WT-2: worktree.baseRef "head" = the parent's current HEAD, local commits included
    write_settings(repo, {"worktree": {"baseRef": "head"}})
    wt = await create(repo, manager, home)
    assert wt.base_commit == head(repo) and (wt.path / "local.py").exists()
    assert wt.notes == []


async def test_no_remote_falls_back_to_head_with_a_note(
    repo: Path, manager: WorktreeManager, home: Path
):
    # WT-2: fresh without an origin remote: HEAD, and the run is told so
    git(repo, "remote", "remove", "origin")
    wt = await create(repo, manager, home)
    assert wt.base_commit == head(repo)
    assert "no origin remote: based on HEAD" in wt.notes


async def test_parent_status_stays_clean(repo: Path, manager: WorktreeManager, home: Path):
    # Our folder is excluded through info/exclude: the parent's `git status` shows nothing.
    wt = await create(repo, manager, home)
    (wt.path / "README.md").write_text("changed in the worktree\n")
    (wt.path / "added.py").write_text("y = 2\n")
    assert git(repo, "status", "--porcelain") == ""
    assert (repo / "README.md").read_text() == "hello\n"


async def test_parent_in_a_worktree_goes_under_the_main_repo(
    repo: Path, manager: WorktreeManager, home: Path
):
    # WT-10: started from a linked worktree: no nesting, base still origin/<default>
    side = repo.parent / "side"
    git(repo, "worktree", "add", "-q", "-b", "side", str(side))
    (side / "pkg" / "side.py").write_text("s = 1\n")
    side_head = commit_all(side, "side work")
    wt = await create(side / "pkg", manager, home)
    assert wt.path.parent == repo / ".wave" / "worktrees"
    assert wt.main_repo == repo
    assert wt.base_commit == git(repo, "rev-parse", "origin/main").strip()
    assert wt.cwd == wt.path / "pkg"  # the caller's subfolder, mapped into the worktree
    # baseRef head: the parent's HEAD is the linked worktree's, not the main one's
    write_settings(repo, {"worktree": {"baseRef": "head"}})
    wt2 = await create(side, manager, home)
    assert wt2.path.parent == repo / ".wave" / "worktrees"
    assert wt2.base_commit == side_head


async def test_not_a_git_repo_without_hook_fails_clearly(tmp_path: Path, home: Path):
    # WT-11: a clear error, nothing created, never the parent directory
    plain = tmp_path / "plain"
    plain.mkdir()
    (plain / "file.txt").write_text("x\n")
    with pytest.raises(IsolationError) as caught:
        await create(plain, WorktreeManager(), home)
    message = str(caught.value)
    assert "not inside a git repository" in message and "WorktreeCreate hook" in message
    assert sorted(p.name for p in plain.iterdir()) == ["file.txt"]


async def test_invalid_name_is_refused(repo: Path, home: Path):
    with pytest.raises(IsolationError, match="Invalid worktree name"):
        await create(repo, WorktreeManager(), home, name="../escape")


# ---------------------------------------------------------------------- copies


async def test_new_worktree_gets_local_settings_and_worktreeinclude_files(
    repo: Path, manager: WorktreeManager, home: Path
):
    # WT-3: .wave/settings.local.json and the ignored files matched by .worktreeinclude
    write_settings(repo, {"permissions": {}}, "settings.local.json")
    (repo / ".env").write_text("TOKEN=1\n")
    (repo / "pkg" / "dev.local").write_text("local config\n")
    (repo / "pkg" / "other.local").write_text("not listed\n")
    (repo / "notes.md").write_text("untracked, not ignored\n")
    (repo / "build").mkdir()
    (repo / "build" / "out.bin").write_text("artifact\n")
    (repo / ".worktreeinclude").write_text(
        "# local files\n.env\npkg/dev.local\nnotes.md\n../outside.env\n/etc/hosts\n~/.ssh/id\n"
    )
    wt = await create(repo, manager, home)
    assert (wt.path / ".wave" / "settings.local.json").read_text() == '{"permissions": {}}'
    assert (wt.path / ".env").read_text() == "TOKEN=1\n"
    assert (wt.path / "pkg" / "dev.local").read_text() == "local config\n"
    assert not (wt.path / "pkg" / "other.local").exists()
    assert not (wt.path / "notes.md").exists()  # not gitignored: never copied
    assert not (wt.path / "build").exists()
    assert sorted(wt.copied) == [".env", ".wave/settings.local.json", "pkg/dev.local"]
    refused = [note for note in wt.notes if "refused" in note]
    assert len(refused) == 3
    assert any("'..' escapes the repository" in note for note in refused)
    assert any("/etc/hosts" in note for note in refused)
    # The copies are not changes: the worktree is removed at the end (WT-5).
    outcome = await finish_isolated_worktree(wt, manager=manager)
    assert not outcome.kept and not wt.path.exists()
    assert git(repo, "status", "--porcelain") == "?? .worktreeinclude\n?? notes.md\n"


async def test_without_worktreeinclude_nothing_but_local_settings_is_copied(
    repo: Path, manager: WorktreeManager, home: Path
):
    # WT-3: ignored files stay behind when there is no .worktreeinclude (and no listing runs)
    (repo / ".env").write_text("TOKEN=1\n")
    (repo / "build").mkdir()
    (repo / "build" / "out.bin").write_text("artifact\n")
    wt = await create(repo, manager, home)
    assert wt.copied == []
    assert not (wt.path / ".env").exists() and not (wt.path / "build").exists()
    assert set(wt.timings) >= {"prepare", "base", "create", "include", "registry"}
    outcome = await finish_isolated_worktree(wt, manager=manager)
    assert not outcome.kept
    assert set(outcome.timings) >= {"status", "remove", "registry"}


async def test_record_written_in_the_background_is_complete_for_readers_and_the_end(
    repo: Path, manager: WorktreeManager, home: Path
):
    # The registry write is off the launch's path, yet every reader sees it, and it is on
    # disk when the run ends (a kept worktree's record outlives the process).
    wt = await create(repo, manager, home, owner="subagent sub-1 of session s")
    listed = list_wave_worktrees(repo, manager=manager)
    assert [(e["name"], e["owner"], e["baseCommit"]) for e in listed] == [
        (wt.name, "subagent sub-1 of session s", wt.base_commit)
    ]
    (wt.path / "new.py").write_text("n = 1\n")
    outcome = await finish_isolated_worktree(wt, manager=manager)
    assert outcome.kept
    saved = json.loads((repo / REGISTRY_DIR / f"{wt.name}.json").read_text())
    assert (saved["name"], saved["owner"]) == (wt.name, "subagent sub-1 of session s")


async def test_many_records_written_in_the_background_all_land(repo: Path, home: Path):
    # Parallel launches: every record is written, none lost or half-written.
    made = await asyncio.gather(*(create(repo, WorktreeManager(), home) for _ in range(6)))
    names = {record.name for record in read_records(repo)}
    assert names == {wt.name for wt in made}
    for wt in made:
        assert (await finish_isolated_worktree(wt)).kept is False
    assert read_records(repo) == []


# ---------------------------------------------------------------------- finish


async def test_no_changes_removes_directory_and_branch(
    repo: Path, manager: WorktreeManager, home: Path
):
    # WT-5; and only worktree-<name> is deleted, never another branch
    git(repo, "branch", "feature")
    wt = await create(repo, manager, home)
    assert read_record(repo, wt.name) is not None
    outcome = await finish_isolated_worktree(wt, manager=manager)
    assert not outcome.kept
    assert (outcome.changed_files, outcome.commits) == (0, 0)
    assert outcome.summary == (
        f"Worktree removed: no changes ({wt.path}, branch {wt.branch} deleted)."
    )
    assert not wt.path.exists()
    assert branches(repo) == {"main", "feature"}
    assert read_record(repo, wt.name) is None
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1


async def test_changes_keep_worktree_and_branch_with_summary(
    repo: Path, manager: WorktreeManager, home: Path
):
    # WT-6: path, branch, changed files and commits; NOT applied to the parent
    wt = await create(repo, manager, home)
    (wt.path / "feature.py").write_text("f = 1\n")
    commit_all(wt.path, "feature")
    (wt.path / "README.md").write_text("edited\n")
    outcome = await finish_isolated_worktree(wt, manager=manager)
    assert outcome.kept and wt.path.is_dir() and wt.branch in branches(repo)
    assert (outcome.changed_files, outcome.commits) == (1, 1)
    assert outcome.summary.startswith(
        f"Worktree kept: {wt.path} on branch {wt.branch} — 1 changed file, 1 commit. "
        "The changes were NOT applied to the parent directory; review and merge them "
        f"yourself (git -C {repo} merge {wt.branch})."
    )
    assert (repo / "README.md").read_text() == "hello\n"
    assert not (repo / "feature.py").exists()


async def test_failed_cleanup_is_only_reported(repo: Path, manager: WorktreeManager, home: Path):
    # WT-7: the removal fails (the worktree is locked): kept, reported, never raised
    wt = await create(repo, manager, home)
    git(repo, "worktree", "lock", str(wt.path))
    outcome = await finish_isolated_worktree(wt, manager=manager)
    assert outcome.kept and wt.path.is_dir()
    assert outcome.summary.startswith(f"Worktree kept: cleanup of {wt.path} failed (")
    assert f"git -C {repo} worktree remove --force {wt.path}" in outcome.summary
    assert outcome.notes == [outcome.summary]


async def test_undeterminable_changes_keep_the_worktree(
    repo: Path, manager: WorktreeManager, home: Path
):
    # WT-8: rev-list cannot run against an unknown base: keep, and say so
    wt = await create(repo, manager, home)
    wt.base_commit = "0" * 40
    outcome = await finish_isolated_worktree(wt, manager=manager)
    assert outcome.kept and wt.path.is_dir() and wt.branch in branches(repo)
    assert outcome.changed_files is None and outcome.commits is None
    assert "its changes could not be determined" in outcome.summary
    assert "kept to be safe" in outcome.summary


async def test_only_worktree_branch_is_deleted(repo: Path, manager: WorktreeManager, home: Path):
    # The subagent switched its worktree to another branch: that one survives the cleanup.
    wt = await create(repo, manager, home)
    git(wt.path, "checkout", "-q", "-b", "subagent-made")
    outcome = await finish_isolated_worktree(wt, manager=manager)
    assert not outcome.kept
    assert "subagent-made" in branches(repo) and wt.branch not in branches(repo)


async def test_existing_worktree_is_reused_without_copies_and_kept(
    repo: Path, manager: WorktreeManager, home: Path
):
    # Same name again: reused (is_new False), no copying, always kept, changes reported.
    (repo / ".env").write_text("TOKEN=1\n")
    (repo / ".worktreeinclude").write_text(".env\n")
    first = await create(repo, manager, home, name="shared", owner="subagent sub-a")
    assert first.is_new and (first.path / ".env").exists()
    (first.path / ".env").unlink()
    (first.path / "work.py").write_text("w = 1\n")
    commit_all(first.path, "first run")
    assert (await finish_isolated_worktree(first, manager=manager)).kept

    again = await create(repo, manager, home, name="shared", owner="subagent sub-b")
    assert not again.is_new and again.path == first.path and again.branch == "worktree-shared"
    assert not (again.path / ".env").exists() and again.copied == []
    assert again.base_commit == first.base_commit  # counted from the first creation
    outcome = await finish_isolated_worktree(again, manager=manager)
    assert outcome.kept and outcome.commits == 1 and outcome.changed_files == 0
    assert "never removed automatically" in outcome.summary
    assert read_record(repo, "shared").owner == "subagent sub-a"  # type: ignore[union-attr]


async def test_cancelled_creation_cleans_up_after_itself(repo: Path, home: Path):
    # WT-7 (stop): the caller is cancelled mid-creation; the worktree is made, then removed.
    task = asyncio.create_task(create(repo, WorktreeManager(), home, name="stopped"))
    await asyncio.sleep(0)  # a yield, not a wait: creation starts, then is cancelled
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    path = repo / ".wave" / "worktrees" / "stopped"
    await until(
        lambda: not path.exists() and "worktree-stopped" not in branches(repo),
        10,
        "the cancelled worktree's removal",
    )


# ---------------------------------------------------------------------- hooks


CREATE_HOOK = py_hook(
    "import json, os, sys\n"
    "data = json.load(sys.stdin)\n"
    "path = os.path.join(os.environ['WAVE_PROJECT_DIR'], 'hooked', data['name'])\n"
    "os.makedirs(path)\n"
    "open(os.path.join(os.environ['WAVE_PROJECT_DIR'], 'create-input.json'), 'w')"
    ".write(json.dumps(data))\n"
    "print('preparing...')\n"
    "print(path)\n"
)
REMOVE_HOOK = py_hook(
    "import json, os, shutil, sys\n"
    "data = json.load(sys.stdin)\n"
    "open(os.path.join(os.environ['WAVE_PROJECT_DIR'], 'remove-input.json'), 'w')"
    ".write(json.dumps(data))\n"
    "shutil.rmtree(data['worktree_path'])\n"
)


def stdin_field(key: str) -> str:
    """Shell text that prints ``key`` of the hook's JSON input."""
    return py_hook(f"import json, sys; print(json.load(sys.stdin)[{key!r}])")


GIT_WORKTREE_HOOK = (
    f'name=$({stdin_field("name")}); p="$WAVE_PROJECT_DIR/.wave/worktrees/$name"; '
    'git worktree add -q -b "hook-$name" "$p" HEAD >&2 && echo "$p"'
)


async def test_create_hook_makes_the_worktree(repo: Path, home: Path):
    # WT-3: the first hook that succeeds gives the path (stdout); git is not used
    write_settings(
        repo,
        {"hooks": {"WorktreeCreate": [{"command": "exit 3"}, {"command": CREATE_HOOK}]}},
    )
    wt = await create(repo, WorktreeManager(), home, name="hk")
    assert wt.hook_created and wt.is_new and wt.path == repo / "hooked" / "hk"
    assert wt.branch == "" and wt.base_commit is None
    assert git(repo, "worktree", "list", "--porcelain").count("worktree ") == 1
    assert "worktree-hk" not in branches(repo)
    assert any(n.startswith("WorktreeCreate hook failed: exit 3: exit code 3") for n in wt.notes)
    payload = json.loads((repo / "create-input.json").read_text())
    assert payload["hook_event_name"] == "WorktreeCreate" and payload["name"] == "hk"
    assert payload["cwd"] == str(repo) and payload["repo"] == str(repo)
    assert payload["branch"] == "worktree-hk" and payload["baseRef"] == "fresh"
    # Not a git worktree: changes unknown, and no WorktreeRemove hook: kept with the warning.
    outcome = await finish_isolated_worktree(wt)
    assert outcome.kept and wt.path.is_dir()


async def test_hook_worktree_without_remove_hook_is_kept_with_warning(repo: Path, home: Path):
    write_settings(repo, {"hooks": {"WorktreeCreate": [GIT_WORKTREE_HOOK]}})
    wt = await create(repo, WorktreeManager(), home, name="hg")
    assert wt.hook_created and wt.branch == "hook-hg" and wt.base_commit == head(repo)
    outcome = await finish_isolated_worktree(wt)
    assert outcome.kept and wt.path.is_dir()
    assert outcome.summary == (
        f"Worktree kept: No WorktreeRemove hook configured, hook-based worktree left at: {wt.path}."
    )


async def test_hook_worktree_without_changes_is_removed_by_the_remove_hook(repo: Path, home: Path):
    remove = f'git worktree remove --force "$({stdin_field("worktree_path")})"'
    write_settings(
        repo,
        {
            "hooks": {
                "WorktreeCreate": [{"hooks": [{"type": "command", "command": GIT_WORKTREE_HOOK}]}],
                "WorktreeRemove": [{"hooks": [{"type": "command", "command": remove}]}],
            }
        },
    )
    wt = await create(repo, WorktreeManager(), home, name="hr")
    outcome = await finish_isolated_worktree(wt)
    assert not outcome.kept and not wt.path.exists()
    assert outcome.summary == f"Worktree removed by the WorktreeRemove hook ({wt.path})."
    assert "hook-hr" in branches(repo)  # the hook owns its branch; we delete nothing else


async def test_remove_hook_gets_worktree_path_and_no_name(repo: Path, home: Path):
    from wave_ls.worktrees import exit_session_worktree

    write_settings(
        repo, {"hooks": {"WorktreeCreate": [CREATE_HOOK], "WorktreeRemove": [REMOVE_HOOK]}}
    )
    wt = await create(repo, WorktreeManager(), home, name="rm")
    outcome = await exit_session_worktree(wt, "remove", discard_changes=True)
    assert not outcome.kept and not wt.path.exists()
    payload = json.loads((repo / "remove-input.json").read_text())
    assert payload["hook_event_name"] == "WorktreeRemove"
    assert payload["worktree_path"] == str(wt.path) and "name" not in payload


async def test_failing_hooks_fall_through_to_git(repo: Path, manager: WorktreeManager, home: Path):
    # Every hook fails (exit code, no path, a path that does not exist): git makes it, noted.
    write_settings(
        repo,
        {
            "hooks": {
                "WorktreeCreate": [
                    "echo broken >&2; exit 1",
                    "true",
                    "echo /does/not/exist",
                    {"command": "sleep 5", "timeout": 0.3},
                ]
            }
        },
    )
    wt = await create(repo, manager, home)
    assert not wt.hook_created and wt.is_new and wt.branch == f"worktree-{wt.name}"
    failures = [n for n in wt.notes if n.startswith("WorktreeCreate hook failed:")]
    assert failures == [
        "WorktreeCreate hook failed: echo broken >&2; exit 1: broken; falling back to git",
        "WorktreeCreate hook failed: true: printed no path on stdout; falling back to git",
        "WorktreeCreate hook failed: echo /does/not/exist: printed '/does/not/exist', which is "
        "not an existing directory; falling back to git",
        "WorktreeCreate hook failed: sleep 5: timed out after 0.3 s; falling back to git",
    ]


async def test_failing_hook_outside_git_is_a_clear_error(tmp_path: Path, home: Path):
    plain = tmp_path / "plain"
    plain.mkdir()
    write_settings(plain, {"hooks": {"WorktreeCreate": ["exit 2"]}})
    with pytest.raises(IsolationError) as caught:
        await create(plain, WorktreeManager(), home)
    assert "WorktreeCreate hook failed: exit 2: exit code 2" in str(caught.value)


async def test_hook_works_outside_git(tmp_path: Path, home: Path):
    # reference: with a WorktreeCreate hook, a non-git folder can be isolated
    plain = tmp_path / "plain"
    plain.mkdir()
    write_settings(plain, {"hooks": {"WorktreeCreate": [CREATE_HOOK]}})
    wt = await create(plain, WorktreeManager(), home, name="ng")
    assert wt.hook_created and wt.path == plain.resolve() / "hooked" / "ng"
    assert wt.main_repo == plain.resolve()


# ---------------------------------------------------------------------- registry + list


async def test_registry_and_list_survive_a_restart(
    repo: Path, manager: WorktreeManager, home: Path
):
    kept = await create(repo, manager, home, owner="subagent sub-1 (coder) of session s1")
    (kept.path / "a.py").write_text("a = 1\n")
    commit_all(kept.path, "a")
    (kept.path / "b.py").write_text("b = 1\n")
    await finish_isolated_worktree(kept, manager=manager)
    gone = await create(repo, manager, home, owner="subagent sub-2")
    await finish_isolated_worktree(gone, manager=manager)
    manual = repo / ".wave" / "worktrees" / "manual"
    git(repo, "worktree", "add", "-q", "-b", "manual-branch", str(manual))
    git(repo, "worktree", "add", "-q", "-b", "elsewhere", str(repo.parent / "elsewhere"))
    registry = repo / REGISTRY_DIR
    assert sorted(p.name for p in registry.iterdir()) == [f"{kept.name}.json"]  # no temp files

    # "Restart": nothing but the disk is shared with the run above.
    listed = list_wave_worktrees(repo, manager=WorktreeManager())
    created = [entry.pop("createdAt", None) for entry in listed]
    assert listed == [
        {
            "path": str(kept.path),
            "branch": kept.branch,
            "changedFiles": 1,
            "commits": 1,
            "owner": "subagent sub-1 (coder) of session s1",
            "name": kept.name,
            "hookCreated": False,
            "baseCommit": kept.base_commit,
            "mainRepo": str(repo),
        },
        {
            "path": str(manual),
            "branch": "manual-branch",
            "changedFiles": 0,
            "commits": None,  # no record: the base is unknown
            "name": "manual",
            "hookCreated": False,
            "mainRepo": str(repo),
        },
    ]
    assert created[0] is not None and re.match(r"\d{4}-\d\d-\d\dT", created[0])
    assert [e["path"] for e in list_wave_worktrees(kept.path)] == [str(kept.path), str(manual)]


async def test_list_outside_git_and_corrupt_record(tmp_path: Path, home: Path):
    plain = tmp_path / "plain"
    plain.mkdir()
    write_settings(plain, {"hooks": {"WorktreeCreate": [CREATE_HOOK]}})
    wt = await create(plain, WorktreeManager(), home, name="ng", owner="session s9")
    (plain / REGISTRY_DIR / "broken.json").write_text("{not json")
    listed = list_wave_worktrees(plain)
    assert [(e["path"], e["changedFiles"], e["owner"]) for e in listed] == [
        (str(wt.path), None, "session s9")
    ]
    assert list_wave_worktrees(tmp_path / "missing") == []
