"""Reviewing kept worktrees from the editor, end to end over LSP: ``wave/worktrees/diff`` and
``wave/worktrees/remove`` on real git repositories, with the git CLI backend and with the
dulwich backend (the server started without ``git`` on its PATH)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from tests.support.background import (
    ISOLATED_WORKER,
    delegate_bg,
    pid_of,
    script,
    send,
    sleeper,
    wait_for,
    wave_client,
    write_agent,
)
from tests.support.fake_model import FakeModelServer, reply, route
from tests.support.git_repos import (
    IDENTITY,
    branches,
    commit_all,
    git,
    init_repo,
    rev,
    write_files,
)
from tests.support.lsp import WaveClient, server_env

BACKENDS = ("git", "dulwich")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return init_repo(
        tmp_path / "project",
        {
            "README.md": "# demo\n",
            "src/app.py": "def answer():\n    return 41\n",
            "old.txt": "to be deleted\n",
            ".gitignore": "*.log\n",
        },
    )


def env_for(
    backend: str, home: Path, tmp_path: Path, base_url: str | None = None
) -> dict[str, str]:
    env = server_env(home, base_url, **IDENTITY)
    if backend == "dulwich":
        empty = tmp_path / "no-git-bin"
        empty.mkdir(exist_ok=True)
        env["PATH"] = str(empty)  # no git: every worktree operation runs on dulwich
    return env


async def session_in_worktree(client: WaveClient, project: Path, name: str) -> tuple[str, Path]:
    result = await client.request(
        "wave/session/new", {"cwd": str(project), "worktree": name, "permissionMode": "plan"}
    )
    return result["sessionId"], Path(result["worktree"]["path"])


def make_changes(worktree: Path) -> None:
    """One commit, a staged file, an unstaged edit, an untracked text and binary file, a
    deleted file and an ignored file (which must not show)."""
    write_files(worktree, {"src/app.py": "def answer():\n    return 42\n"})
    commit_all(worktree, "answer 42")
    write_files(worktree, {"docs/guide.md": "# Guide\nstep one\n"})
    git(worktree, "add", "docs/guide.md")
    write_files(worktree, {"README.md": "# demo\nmore words\n"})
    write_files(worktree, {"notes.txt": "a note\n"})
    (worktree / "logo.bin").write_bytes(b"\x89PNG\0\0\x01binary")
    (worktree / "debug.log").write_text("ignored\n")
    (worktree / "old.txt").unlink()


async def request_error(client: WaveClient, method: str, params: Any) -> JsonRpcException:
    with pytest.raises(JsonRpcException) as caught:
        await client.request(method, params)
    return caught.value


@pytest.mark.parametrize("backend", BACKENDS)
async def test_diff_shows_commits_staged_unstaged_and_untracked_files(
    backend: str, home: Path, project: Path, tmp_path: Path
) -> None:
    async with wave_client(env_for(backend, home, tmp_path)) as client:
        sid, worktree = await session_in_worktree(client, project, "review")
        base = rev(worktree, "HEAD")
        make_changes(worktree)
        status_before = git(worktree, "status", "--porcelain")

        diff = await client.request("wave/worktrees/diff", {"path": str(worktree)})

        assert diff["baseCommit"] == base
        files = {f["path"]: f for f in diff["files"]}
        assert set(files) == {
            "src/app.py",
            "docs/guide.md",
            "README.md",
            "notes.txt",
            "logo.bin",
            "old.txt",
        }
        assert files["src/app.py"] == {
            "path": "src/app.py",
            "status": "modified",
            "additions": 1,
            "deletions": 1,
        }
        assert (files["docs/guide.md"]["status"], files["docs/guide.md"]["additions"]) == (
            "added",
            2,
        )
        assert files["README.md"]["status"] == "modified"
        assert files["notes.txt"]["status"] == "added"
        assert (files["old.txt"]["status"], files["old.txt"]["deletions"]) == ("deleted", 1)
        assert files["logo.bin"]["binary"] is True
        assert (files["logo.bin"]["additions"], files["logo.bin"]["deletions"]) == (0, 0)

        patch = diff["patch"]
        assert "+    return 42" in patch and "-    return 41" in patch  # the commit
        assert "+step one" in patch  # staged
        assert "+more words" in patch  # unstaged
        assert "+a note" in patch  # untracked
        assert "Binary files" in patch and "logo.bin" in patch
        assert "PNG" not in patch  # named, never dumped
        assert "debug.log" not in patch  # ignored files are not changes
        # Reviewing changed nothing in the worktree (its own index included).
        assert git(worktree, "status", "--porcelain") == status_before
        await client.request("wave/session/close", {"sessionId": sid})


@pytest.mark.parametrize("backend", BACKENDS)
async def test_remove_refuses_changes_unless_forced_and_deletes_the_branch(
    backend: str, home: Path, project: Path, tmp_path: Path
) -> None:
    async with wave_client(env_for(backend, home, tmp_path)) as client:
        sid, worktree = await session_in_worktree(client, project, "dirty")
        _clean_sid, clean = await session_in_worktree(client, project, "clean")
        make_changes(worktree)

        # In use by a live session: refused, even with force.
        refused = await client.request(
            "wave/worktrees/remove", {"path": str(worktree), "force": True}
        )
        assert refused["removed"] is False and f"session {sid}" in refused["reason"]
        for session in (sid, _clean_sid):
            await client.request("wave/session/close", {"sessionId": session})

        refused = await client.request("wave/worktrees/remove", {"path": str(worktree)})
        assert refused["removed"] is False
        assert "changed file" in refused["reason"] and "1 commit" in refused["reason"]
        assert "force" in refused["reason"]
        assert worktree.is_dir() and "worktree-dirty" in branches(project)

        removed = await client.request(
            "wave/worktrees/remove", {"path": str(worktree), "force": True}
        )
        assert removed == {"removed": True}
        assert not worktree.exists()
        assert "worktree-dirty" not in branches(project)

        # A worktree without changes goes without force; nothing of it is left listed.
        assert await client.request("wave/worktrees/remove", {"path": str(clean)}) == {
            "removed": True
        }
        assert not clean.exists() and "worktree-clean" not in branches(project)
        listed = await client.request("wave/worktrees/list", {"cwd": str(project)})
        assert listed["worktrees"] == []
        assert "main" in branches(project) or "master" in branches(project)


async def test_unknown_paths_and_bad_params_are_invalid_params(
    home: Path, project: Path, tmp_path: Path
) -> None:
    async with wave_client(env_for("git", home, tmp_path)) as client:
        for method in ("wave/worktrees/diff", "wave/worktrees/remove"):
            error = await request_error(client, method, {"path": str(project)})
            assert error.code == -32602 and "not a wave worktree" in str(error)
            error = await request_error(client, method, {"path": "relative/path"})
            assert error.code == -32602
            error = await request_error(client, method, {})
            assert error.code == -32602 and "'path'" in str(error)
        error = await request_error(
            client, "wave/worktrees/remove", {"path": str(project), "force": "yes"}
        )
        assert error.code == -32602 and "force" in str(error)


async def test_a_running_subagents_worktree_cannot_be_removed(
    fake_model: FakeModelServer, home: Path, project: Path, tmp_path: Path, shared_dir: Path
) -> None:
    pid_file = shared_dir / "worker.pid"  # where the sandboxed subagent may write
    write_agent(project, "isolated-worker", ISOLATED_WORKER)
    fake_model.set_script(
        script(
            route(
                "work apart",
                reply("", delegate_bg("Sleep apart", subagent_type="isolated-worker")),
                reply("Started."),
            ),
            route("Sleep apart", *sleeper(pid_file)),
        )
    )
    async with wave_client(env_for("git", home, tmp_path, fake_model.base_url)) as client:
        result = await client.request(
            "wave/session/new", {"cwd": str(project), "permissionMode": "bypassPermissions"}
        )
        sid = result["sessionId"]
        await send(client, sid, "work apart")
        await pid_of(pid_file)
        listed = await client.request("wave/worktrees/list", {"cwd": str(project)})
        (entry,) = listed["worktrees"]
        refused = await client.request(
            "wave/worktrees/remove", {"path": entry["path"], "force": True}
        )
        assert refused["removed"] is False and "subagent" in refused["reason"]
        assert Path(entry["path"]).is_dir()
        await client.request("wave/session/close", {"sessionId": sid})
        # Stopped with nothing changed: the run's own rule removed it.
        await wait_for(lambda: not Path(entry["path"]).exists(), 10, "the worktree to go")


async def test_a_git_failure_in_diff_is_an_internal_error_with_gits_message(
    home: Path, project: Path, tmp_path: Path
) -> None:
    # issue 25 point 4: the error was pygls's "Error code should be in range" ValueError.
    async with wave_client(env_for("git", home, tmp_path)) as client:
        sid, worktree = await session_in_worktree(client, project, "broken")
        make_changes(worktree)
        objects = project / ".git" / "objects"
        for pack in (objects / "pack").iterdir():
            pack.unlink()
        for folder in objects.iterdir():
            if len(folder.name) == 2:
                for loose in folder.iterdir():
                    loose.unlink()

        error = await request_error(client, "wave/worktrees/diff", {"path": str(worktree)})

        assert error.code == -32603
        assert str(error).startswith("wave/worktrees/diff: ")
        assert "git" in str(error) and "Error code" not in str(error)
        await client.request("wave/session/close", {"sessionId": sid})


@pytest.mark.parametrize("backend", BACKENDS)
async def test_a_clean_worktree_wave_ls_did_not_make_goes_unless_its_commits_would_be_lost(
    backend: str, home: Path, project: Path, tmp_path: Path
) -> None:
    # Made by hand: no record, so no base commit; what counts is what no other branch holds.
    made = project / ".wave" / "worktrees"
    for name in ("plain", "held", "unique"):
        git(project, "worktree", "add", "-q", str(made / name), "-b", f"worktree-{name}")
    for name in ("held", "unique"):
        write_files(made / name, {f"{name}.txt": f"{name}\n"})
        commit_all(made / name, f"{name} work")
    git(project, "branch", "keep-held", "worktree-held")  # its commit is on another branch
    async with wave_client(env_for(backend, home, tmp_path)) as client:
        listed = await client.request("wave/worktrees/list", {"cwd": str(project)})
        paths = {Path(w["path"]).name for w in listed["worktrees"]}
        assert {"plain", "held", "unique"} <= paths

        for name in ("plain", "held"):
            removed = await client.request("wave/worktrees/remove", {"path": str(made / name)})
            assert removed == {"removed": True}, name
            assert not (made / name).exists()
        refused = await client.request("wave/worktrees/remove", {"path": str(made / "unique")})
        assert refused["removed"] is False
        assert "1 commit on worktree-unique would be lost" in refused["reason"]
        write_files(made / "unique", {"notes.txt": "draft\n"})
        refused = await client.request("wave/worktrees/remove", {"path": str(made / "unique")})
        assert "1 changed file and 1 commit" in refused["reason"]
    assert "keep-held" in branches(project) and "worktree-plain" not in branches(project)
    assert (made / "unique").is_dir() and "worktree-unique" in branches(project)
