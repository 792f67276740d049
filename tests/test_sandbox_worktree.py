"""The sandbox of an isolated worktree with real git (issue 17): git works inside it, the
branch gets the commits made on the detached HEAD, what is refused is refused, and our own
git inspection of a worktree an agent has rigged cannot write anything. Both worktree
backends, both mechanisms; real processes, real repositories."""

# ruff: noqa: F811  (the repository fixtures are imported from the lifecycle tests)

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_isolation_lifecycle import (  # noqa: F401  (fixtures)
    clean_git_env,
    git,
    home,
    manager,
    origin,
    repo,
    template,
)
from wave_ls.runtime.core import ToolContext
from wave_ls.runtime.sandbox import REFUSAL_MARKERS, confinement
from wave_ls.runtime.sandbox.bubblewrap import bwrap_path
from wave_ls.runtime.sandbox.landlock import abi_version
from wave_ls.runtime.tools.bash import BashTool, run_command
from wave_ls.worktrees import WorktreeManager, create_isolated_worktree
from wave_ls.worktrees.isolation import (
    IsolatedWorktree,
    confine_isolated_worktree,
    finish_isolated_worktree,
)
from wave_ls.worktrees.sandboxing import detach_head, isolated_writable, reattach_head

MECHANISMS = [
    pytest.param("landlock", marks=pytest.mark.skipif(abi_version() < 1, reason="no Landlock")),
    pytest.param("bubblewrap", marks=pytest.mark.skipif(bwrap_path() is None, reason="no bwrap")),
]


def git_state(repo: Path) -> dict[str, bytes]:
    """The parent's index, HEAD, config and every ref file, by path."""
    dot_git = repo / ".git"
    files = [dot_git / name for name in ("index", "HEAD", "config", "packed-refs")]
    files += [path for path in (dot_git / "refs").rglob("*") if path.is_file()]
    return {str(path.relative_to(dot_git)): path.read_bytes() for path in files if path.exists()}


def admin_head(wt: IsolatedWorktree) -> str:
    return Path(git(wt.path, "rev-parse", "--git-dir").strip(), "HEAD").read_text().strip()


async def sh(script: str, wt: IsolatedWorktree, box: object) -> tuple[int | None, str]:
    done = await run_command(script, wt.path, 60, sandbox=box)  # type: ignore[arg-type]
    return done.exit_code, done.output


@pytest.mark.parametrize("mechanism", MECHANISMS)
async def test_git_works_inside_and_the_branch_gets_the_commits(
    mechanism: str,
    repo: Path,
    manager: WorktreeManager,
    home: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("WAVE_SANDBOX", mechanism)
    wt = await create_isolated_worktree(repo, home=home, manager=manager)
    parent_before, base = git_state(repo), wt.base_commit
    box = confine_isolated_worktree(wt)
    assert box.mechanism == mechanism and box.confined
    assert wt.detached is not None and admin_head(wt) == base  # detached at the branch's tip
    tmp = Path(box.env["TMPDIR"])
    assert tmp.is_dir() and tmp in box.writable
    assert set(isolated_writable(wt.path)) < set(box.writable)

    code, out = await sh(
        "git status --short && echo one > a.py && git add a.py && git commit -qm one "
        "&& echo two >> a.py && git commit -qam two && git log --format=%s -2 "
        '&& git diff --stat HEAD~1 && echo t > "$TMPDIR/t" && cat "$TMPDIR/t" '
        # multiprocessing's semaphores live in /dev/shm: test runners with workers work.
        "&& python3 -c 'import multiprocessing as m; m.Lock(); print(\"mp-ok\")'",
        wt,
        box,
    )
    assert code == 0, out
    assert out.splitlines()[:2] == ["two", "one"] and out.rstrip().endswith("t\nmp-ok")
    (wt.path / "README.md").write_text("dirty\n")  # something for git stash to take
    for refused in (
        "git branch other",
        "git tag v1",
        "git stash",
        "git config user.name other",
        "git checkout -q -b other",
        "echo x > /tmp/wave-sandbox-escape-$$",
        f"echo x > {repo}/README.md",
    ):
        code, out = await sh(refused, wt, box)
        assert code != 0 and any(m in out for m in REFUSAL_MARKERS), (refused, out)
    assert (wt.path / "README.md").read_text() == "dirty\n"  # the failed stash lost nothing
    assert git_state(repo) == parent_before  # nothing of the parent's git moved

    outcome = await finish_isolated_worktree(wt, manager=manager)
    box.close()
    assert not tmp.exists()  # the private TMPDIR is gone
    assert wt.detached is None
    assert git(wt.path, "symbolic-ref", "HEAD").strip() == f"refs/heads/{wt.branch}"
    assert git(repo, "log", "--format=%s", "-2", wt.branch).split() == ["two", "one"]
    assert outcome.kept and outcome.commits == 2 and outcome.changed_files == 1
    after = git_state(repo)
    assert after.pop(f"refs/heads/{wt.branch}") != parent_before.pop(f"refs/heads/{wt.branch}")
    assert after == parent_before


async def test_no_commits_no_changes_the_worktree_is_removed(
    repo: Path, manager: WorktreeManager, home: Path
) -> None:
    # WT-5 still holds with the HEAD detached during the run.
    wt = await create_isolated_worktree(repo, home=home, manager=manager)
    box = confine_isolated_worktree(wt)
    outcome = await finish_isolated_worktree(wt, manager=manager)
    box.close()
    assert not outcome.kept and not wt.path.exists()
    assert wt.branch not in git(repo, "branch", "--format=%(refname:short)").split()


async def test_a_branch_moved_during_the_run_is_left_alone_and_the_work_kept(
    repo: Path, home: Path
) -> None:
    wt = await create_isolated_worktree(repo, home=home)
    detached = detach_head(wt.path)
    assert detached is not None and detached.branch == wt.branch
    (wt.path / "w.py").write_text("w\n")
    git(wt.path, "add", "w.py")
    git(wt.path, "commit", "-qm", "work")
    work = git(wt.path, "rev-parse", "HEAD").strip()
    git(repo, "branch", "-f", wt.branch, "HEAD")  # someone moves it meanwhile
    wt.detached = detached
    outcome = await finish_isolated_worktree(wt)
    assert outcome.kept and "was moved by someone else during the run" in outcome.summary
    assert f"its commits are at {work[:12]}" in outcome.summary
    assert admin_head(wt) == work  # still detached at the work: nothing lost


async def test_reattach_when_the_agent_attached_head_itself_or_left_garbage(
    repo: Path, home: Path
) -> None:
    wt = await create_isolated_worktree(repo, home=home)
    detached = detach_head(wt.path)
    assert detached is not None
    git(wt.path, "checkout", "-q", wt.branch)
    assert reattach_head(detached) is None
    assert detach_head(wt.path) is not None
    head_file = Path(git(wt.path, "rev-parse", "--git-dir").strip(), "HEAD")
    head_file.write_text("f" * 40 + "\n")
    problem = reattach_head(detached)
    assert problem is not None and "is not a commit" in problem
    assert git(repo, "rev-parse", wt.branch).strip() == detached.commit


async def test_unsandboxed_worktree_keeps_its_branch_attached_and_says_so(
    repo: Path, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WAVE_SANDBOX", "none")
    wt = await create_isolated_worktree(repo, home=home)
    box = confine_isolated_worktree(wt)
    assert not box.confined and wt.detached is None
    assert admin_head(wt) == f"ref: refs/heads/{wt.branch}"
    assert "WITHOUT a sandbox" in box.take_note() and box.take_note() == ""
    box.close()
    await finish_isolated_worktree(wt)


@pytest.mark.parametrize("mechanism", MECHANISMS)
async def test_our_git_in_a_rigged_worktree_cannot_write(
    mechanism: str, repo: Path, home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A nested repository registered as a submodule, whose core.fsmonitor runs a command:
    # the git status that counts the changes at the end would run it, outside the agent's
    # sandbox. Our inspection is confined too, so it cannot write.
    monkeypatch.setenv("WAVE_SANDBOX", mechanism)
    marker = tmp_path / "escaped-through-our-git"
    wt = await create_isolated_worktree(repo, home=home)
    box = confine_isolated_worktree(wt)
    code, out = await sh(
        f"git init -q sub && git -C sub config core.fsmonitor 'touch {marker}; false' "
        "&& git -C sub commit -q --allow-empty -m x && git add sub 2>/dev/null && echo planted",
        wt,
        box,
    )
    assert code == 0 and "planted" in out, out
    outcome = await finish_isolated_worktree(wt)
    box.close()
    assert outcome.kept and outcome.changed_files == 1
    assert not marker.exists()
    # The same status run unconfined would have written it: the trap is real.
    git(wt.path, "status", "--porcelain")
    assert marker.exists()


async def test_bash_tool_hint_and_note(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    inside, outside = tmp_path / "inside", tmp_path / "outside"
    inside.mkdir()
    outside.mkdir()
    box = confinement([inside], advice="Note: sandboxed here.")
    ctx = ToolContext(cwd=inside, home=tmp_path, sandbox=box)
    bash = BashTool()
    refused = await bash.run({"command": f"echo x > {outside}/f"}, ctx)
    assert refused.is_error and refused.content.endswith("Note: sandboxed here.\n\nExit code 1")
    other_failure = await bash.run({"command": "echo no >&2; exit 3"}, ctx)
    assert "sandboxed here" not in other_failure.content
    fine = await bash.run({"command": "echo ok > f && cat f"}, ctx)
    assert fine.content == "ok"
    box.close()
    monkeypatch.setenv("WAVE_SANDBOX", "none")
    ctx.sandbox = confinement([inside], advice="Note: sandboxed here.")
    first = await bash.run({"command": f"echo x > {outside}/f"}, ctx)
    second = await bash.run({"command": f"echo x > {outside}/f"}, ctx)
    assert "WITHOUT a sandbox" in first.content and "WITHOUT a sandbox" not in second.content
    assert "sandboxed here" not in first.content and (outside / "f").exists()
