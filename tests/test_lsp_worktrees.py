"""Worktree isolation end to end over LSP (SPEC section 6): a real ``wave-ls`` subprocess,
the offline model, real git repositories cloned from a bare origin that is ahead of them.

Each test asserts on what the model received (tool results), on the files and branches on
disk, and on what the client received."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import shutil
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from tests.support import git_repos
from tests.support.fake_model import FakeModelServer, call, reply, route
from tests.support.git_repos import (
    IDENTITY,
    ClonedRepo,
    branches,
    git,
    porcelain,
    rev,
    snapshot,
    worktree_dirs,
)
from tests.support.lsp import WaveClient, capabilities, server_env, wave_client
from tests.support.waiting import until
from tests.test_lsp_delegation import bodies_for, delegate, write_agents

CODER = """\
---
name: coder
description: Changes code in its own worktree.
isolation: worktree
---
You are the coder.
"""

SAFETY = "outside this agent's worktree"

# The repository fixtures, found by pytest under these names.
cloned_repo = git_repos.cloned_repo
repo_template = git_repos.repo_template


@asynccontextmanager
async def server(
    fake: FakeModelServer, home: Path, *, root: Path | None = None, **extra: str
) -> AsyncIterator[WaveClient]:
    env = server_env(home, fake.base_url, **IDENTITY, **extra)
    async with wave_client(env, caps=capabilities(), root=root) as client:
        yield client


async def new_session(client: WaveClient, cwd: Path, **params: Any) -> dict[str, Any]:
    result: dict[str, Any] = await client.request(
        "wave/session/new", {"cwd": str(cwd), "permissionMode": "bypassPermissions", **params}
    )
    return result


async def send(client: WaveClient, session_id: str, text: str) -> dict[str, Any]:
    result: dict[str, Any] = await client.request(
        "wave/chat/send", {"sessionId": session_id, "text": text}
    )
    assert result["status"] == "completed", result
    return result


def agent_blocks(client: WaveClient) -> list[dict[str, Any]]:
    """The last update of each finished ``Agent`` tool block, in order of completion."""
    return [
        u
        for u in client.updates
        if u["kind"] == "toolBlock"
        and u["name"] == "Agent"
        and u["status"] in ("completed", "failed")
    ]


def add_coder(repo: Path) -> None:
    """The ``coder`` definition, committed (so the parent's status starts clean)."""
    write_agents(repo, coder=CODER)
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "add the coder")


def last_results(body: dict[str, Any]) -> list[str]:
    """The tool results the model gets in this request (those after its last answer)."""
    messages = body["messages"]
    last = max(i for i, m in enumerate(messages) if m["role"] == "assistant")
    return [m["content"] for m in messages[last + 1 :] if m["role"] == "tool"]


def same_path(text: str, path: Path) -> bool:
    return Path(text.strip()).resolve() == path.resolve()


async def test_isolated_subagent_works_in_its_worktree_and_keeps_its_changes(
    fake_model: FakeModelServer, home: Path, cloned_repo: ClonedRepo
) -> None:
    # WT-1, WT-2 (fresh), WT-4, WT-6, WTC-2
    repo = cloned_repo.repo
    add_coder(repo)
    before, parent_head = snapshot(repo), cloned_repo.head
    outside = repo / "evil.txt"
    fake_model.set_script(
        {
            "routes": [
                route("change the code", reply("", delegate("coder", "CODER TASK")), reply("ok")),
                route(
                    "CODER TASK",
                    reply(
                        "",
                        call("Bash", {"command": "pwd -P"}),
                        call("Write", {"file_path": "new.txt", "content": "NEW\n"}),
                        call(
                            "Edit",
                            {
                                "file_path": "README.md",
                                "old_string": "# demo",
                                "new_string": "# changed by coder",
                            },
                        ),
                        call("Read", {"file_path": "README.md"}),
                        call("Grep", {"pattern": "_MARKER", "output_mode": "content"}),
                        call("Glob", {"pattern": "*.py"}),
                    ),
                    reply(
                        "",
                        call(
                            "Bash",
                            {
                                "command": f"ln -s {repo / 'src'} link && git add new.txt link "
                                "&& git commit -qm 'sub work'"
                            },
                        ),
                        call("Write", {"file_path": str(outside), "content": "escaped\n"}),
                        call(
                            "Edit",
                            {
                                "file_path": "../../../README.md",
                                "old_string": "# demo",
                                "new_string": "# escaped",
                            },
                        ),
                        call("Write", {"file_path": "link/app.py", "content": "escaped\n"}),
                    ),
                    reply("coder finished"),
                ),
            ]
        }
    )
    async with server(fake_model, home) as client:
        sid = (await new_session(client, repo))["sessionId"]
        await send(client, sid, "change the code")

    [worktree] = worktree_dirs(repo)
    name = worktree.name
    assert re.fullmatch(r"agent-[0-9a-f]{8}", name)
    branch = f"worktree-{name}"  # WT-2
    assert branch in branches(repo)
    sub = bodies_for(fake_model, "CODER TASK")
    assert len(sub) == 3
    pwd, wrote, _edited, read, grep, glob = last_results(sub[1])
    assert same_path(pwd, worktree)  # WT-1: Bash runs in the worktree
    assert str(worktree / "new.txt") in wrote
    assert "# changed by coder" in read
    # WT-2 fresh: origin/main (fetched, ahead of the local HEAD), not the parent's HEAD.
    assert "ORIGIN_MARKER" in grep and "LOCAL_MARKER" not in grep
    assert "origin_only.py" in glob and "local_only.py" not in glob
    assert rev(worktree, "HEAD~1") == cloned_repo.origin_main != parent_head
    # WT-4: writes into the parent repository are refused, even under bypassPermissions.
    _commit, escaped_write, escaped_edit, escaped_link = last_results(sub[2])
    assert SAFETY in escaped_write and SAFETY in escaped_edit  # absolute, and ../
    assert SAFETY in escaped_link  # through a symlink into the parent
    assert not outside.exists()
    # The parent's working tree is byte-identical, its status clean, its HEAD unchanged.
    assert snapshot(repo) == before
    assert porcelain(repo) == ""
    assert cloned_repo.head == parent_head
    # The worktree holds the work: one commit, one uncommitted file.
    assert (worktree / "new.txt").read_text() == "NEW\n"
    assert (worktree / "README.md").read_text() == "# changed by coder\n"
    assert git(worktree, "log", "-1", "--format=%s").strip() == "sub work"
    # WT-6: what the main model received.
    [result] = last_results(fake_model.chat_bodies()[-1])
    assert result.startswith("coder finished\n\n")
    assert f"Worktree kept: {worktree} on branch {branch}" in result
    assert "1 changed file, 1 commit" in result
    assert "NOT applied to the parent directory" in result
    # And the client's Agent block.
    [block] = agent_blocks(client)
    assert block["details"]["worktree"]["kept"] is True
    assert block["details"]["worktree"]["branch"] == branch


async def test_head_base_local_copies_and_nothing_changed_removes_the_worktree(
    fake_model: FakeModelServer, home: Path, cloned_repo: ClonedRepo
) -> None:
    # WT-2 (baseRef head), WT-3 (copies), WT-5, WT-9
    repo = cloned_repo.repo
    write_agents(repo, coder=CODER)
    (repo / ".wave" / "settings.json").write_text(json.dumps({"worktree": {"baseRef": "head"}}))
    (repo / ".wave" / "settings.local.json").write_text('{"local": "LOCAL SETTINGS"}')
    (repo / ".env").write_text("SECRET=from-the-parent\n")  # gitignored
    (repo / ".worktreeinclude").write_text(".env\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "settings")  # .env and settings.local.json stay untracked
    before, parent_head = snapshot(repo), cloned_repo.head
    fake_model.set_script(
        {
            "routes": [
                route("look around", reply("", delegate("coder", "LOOK TASK")), reply("ok")),
                route(
                    "LOOK TASK",
                    reply(
                        "",
                        call(
                            "Bash",
                            {"command": "pwd -P; git rev-parse HEAD; cat .env; ls *.py"},
                        ),
                        call("Read", {"file_path": ".wave/settings.local.json"}),
                        call("EnterWorktree", {"name": "nested"}),
                        call("ExitWorktree", {"action": "remove", "discard_changes": True}),
                    ),
                    reply("looked"),
                ),
            ]
        }
    )
    async with server(fake_model, home) as client:
        sid = (await new_session(client, repo))["sessionId"]
        await send(client, sid, "look around")

    shell, local_settings, enter, exit_ = last_results(bodies_for(fake_model, "LOOK TASK")[1])
    where, head, secret, *python_files = shell.splitlines()
    worktree = Path(where)
    assert worktree.parent == repo / ".wave" / "worktrees"
    assert head == parent_head  # WT-2: baseRef head = the parent's HEAD, not origin/main
    assert "local_only.py" in python_files and "origin_only.py" not in python_files
    assert secret == "SECRET=from-the-parent"  # WT-3: .worktreeinclude copies
    assert "LOCAL SETTINGS" in local_settings  # WT-3: .wave/settings.local.json copied
    # WT-9: the session's worktree tools are refused inside an isolated subagent.
    for text, tool in ((enter, "EnterWorktree"), (exit_, "ExitWorktree")):
        assert f"{tool} is not available inside an isolated subagent" in text
    assert not (repo / ".wave" / "worktrees" / "nested").exists()
    # WT-5: nothing changed (the copies do not count): folder and branch removed, and said.
    assert not worktree.exists() and worktree_dirs(repo) == []
    assert f"worktree-{worktree.name}" not in branches(repo)
    assert "worktree-nested" not in branches(repo)
    [result] = last_results(fake_model.chat_bodies()[-1])
    assert result.startswith("looked\n\n")
    assert (
        f"Worktree removed: no changes ({worktree}, branch worktree-{worktree.name} deleted)"
        in (result)
    )
    assert snapshot(repo) == before and cloned_repo.head == parent_head
    [block] = agent_blocks(client)
    assert block["details"]["worktree"]["kept"] is False


def py_hook(code: str) -> str:
    """A hook command running ``code`` with this Python (no jq needed)."""
    return f"{shlex.quote(sys.executable)} -c {shlex.quote(code)}"


CREATE_HOOK = """\
import json, os, subprocess, sys
data = json.load(sys.stdin)
project = os.environ["WAVE_PROJECT_DIR"]
target = os.path.join(os.path.dirname(project), "hooked-" + data["name"])
subprocess.run(["git", "-C", project, "worktree", "add", "-q", "--detach", target, "HEAD"],
               check=True, stdout=sys.stderr)
with open(os.path.join(os.path.dirname(project), "create-hook.json"), "w") as f:
    json.dump(data, f)
print(target)
"""

REMOVE_HOOK = """\
import json, os, subprocess, sys
data = json.load(sys.stdin)
project = os.environ["WAVE_PROJECT_DIR"]
subprocess.run(["git", "-C", project, "worktree", "remove", "--force", data["worktree_path"]],
               check=True)
with open(os.path.join(os.path.dirname(project), "remove-hook.json"), "w") as f:
    json.dump(data, f)
"""


async def test_worktree_create_hook_makes_the_worktree(
    fake_model: FakeModelServer, home: Path, cloned_repo: ClonedRepo
) -> None:
    # WT-3: the WorktreeCreate hook makes it (path = its stdout); WorktreeRemove removes it
    repo = cloned_repo.repo
    write_agents(repo, coder=CODER)
    settings = {
        "hooks": {
            "WorktreeCreate": [{"command": py_hook(CREATE_HOOK)}],
            "WorktreeRemove": [py_hook(REMOVE_HOOK)],
        }
    }
    (repo / ".wave" / "settings.json").write_text(json.dumps(settings))
    before = snapshot(repo)
    fake_model.set_script(
        {
            "routes": [
                route("use the hook", reply("", delegate("coder", "HOOK TASK")), reply("ok")),
                route("HOOK TASK", reply("", call("Bash", {"command": "pwd -P"})), reply("hooked")),
            ]
        }
    )
    async with server(fake_model, home) as client:
        sid = (await new_session(client, repo))["sessionId"]
        await send(client, sid, "use the hook")

    created = json.loads((repo.parent / "create-hook.json").read_text())
    assert created["hook_event_name"] == "WorktreeCreate"
    assert re.fullmatch(r"agent-[0-9a-f]{8}", created["name"])
    hooked = repo.parent / f"hooked-{created['name']}"
    [pwd] = last_results(bodies_for(fake_model, "HOOK TASK")[1])
    assert same_path(pwd, hooked)  # the subagent ran where the hook said
    assert worktree_dirs(repo) == []  # git did not make one of its own
    # Nothing changed: the WorktreeRemove hook removed it.
    removed = json.loads((repo.parent / "remove-hook.json").read_text())
    assert same_path(removed["worktree_path"], hooked) and "name" not in removed
    assert not hooked.exists()
    [result] = last_results(fake_model.chat_bodies()[-1])
    assert "Worktree removed by the WorktreeRemove hook" in result
    assert snapshot(repo) == before


async def test_failed_or_unknowable_runs_keep_their_worktree(
    fake_model: FakeModelServer, home: Path, cloned_repo: ClonedRepo
) -> None:
    # WT-7 (failure after a change: kept), WT-8 (changes cannot be determined: kept), FAIL-2
    repo = cloned_repo.repo
    add_coder(repo)
    before = snapshot(repo)
    fake_model.set_script(
        {
            "routes": [
                route(
                    "two risky runs",
                    reply("", delegate("coder", "FAIL TASK"), delegate("coder", "BREAK TASK")),
                    reply("ok"),
                ),
                route(
                    "FAIL TASK",
                    reply("", call("Write", {"file_path": "half.txt", "content": "half\n"})),
                    reply("never", fault={"status": 400}),
                ),
                route(
                    "BREAK TASK",
                    # A worktree whose index is garbage: git cannot tell what changed.
                    reply(
                        "",
                        call(
                            "Bash",
                            {"command": 'pwd -P && echo junk > "$(git rev-parse --git-dir)/index"'},
                        ),
                    ),
                    reply("broke it"),
                ),
            ]
        }
    )
    async with server(fake_model, home) as client:
        sid = (await new_session(client, repo))["sessionId"]
        await send(client, sid, "two risky runs")

    failed, broken = last_results(fake_model.chat_bodies()[-1])
    [half] = [p for p in worktree_dirs(repo) if (p / "half.txt").exists()]
    assert (half / "half.txt").read_text() == "half\n"  # WT-7: kept with the change
    assert failed.startswith("Agent delegation failed: ")
    assert "HTTP 400" in failed
    assert f"Worktree kept: {half} on branch worktree-{half.name} — 1 changed file" in failed
    assert f"worktree-{half.name}" in branches(repo)
    [pwd] = last_results(bodies_for(fake_model, "BREAK TASK")[1])
    unknown = Path(pwd.strip())
    assert unknown.is_dir()  # WT-8: kept, and said why
    assert broken.startswith("broke it\n\n")
    assert f"Worktree kept: {unknown} on branch worktree-{unknown.name}" in broken
    assert "could not be determined" in broken and "kept to be safe" in broken
    assert f"worktree-{unknown.name}" in branches(repo)
    assert snapshot(repo) == before and porcelain(repo) == ""
    statuses = sorted(b["details"]["status"] for b in agent_blocks(client))
    assert statuses == ["completed", "failed"]


async def test_two_isolated_subagents_edit_the_same_file_in_parallel_and_are_listed_after_restart(
    fake_model: FakeModelServer, home: Path, cloned_repo: ClonedRepo
) -> None:
    # WT-1, WT-6 in parallel; wave/worktrees/list after a restart (issue 6, item 4)
    repo = cloned_repo.repo
    add_coder(repo)
    before = snapshot(repo)

    def edit(text: str) -> dict[str, Any]:
        args = {"file_path": "src/app.py", "old_string": "41", "new_string": text}
        return call("Edit", args)

    fake_model.set_script(
        {
            "routes": [
                route(
                    "edit twice",
                    reply("", delegate("coder", "EDIT ONE"), delegate("coder", "EDIT TWO")),
                    reply("ok"),
                ),
                route("EDIT ONE", reply("", edit("1001"), delay=0.3), reply("one")),
                route("EDIT TWO", reply("", edit("2002"), delay=0.3), reply("two")),
            ]
        }
    )
    async with server(fake_model, home) as client:
        sid = (await new_session(client, repo))["sessionId"]
        await send(client, sid, "edit twice")

    one, two = last_results(fake_model.chat_bodies()[-1])
    paths = []
    for text, value in ((one, "1001"), (two, "2002")):
        found = re.search(r"Worktree kept: (\S+) on branch (\S+) — 1 changed file, 0 commits", text)
        assert found, text
        path = Path(found[1])
        assert "return " + value in (path / "src" / "app.py").read_text()
        assert found[2] == f"worktree-{path.name}"
        paths.append(path)
    assert paths[0] != paths[1]
    assert sorted(paths) == worktree_dirs(repo)
    assert snapshot(repo) == before and porcelain(repo) == ""
    assert (repo / "src" / "app.py").read_text() == "def answer():\n    return 41\n"

    # A new server (the old one is gone) still finds both, with who made them; without a
    # cwd the list is the workspace root's.
    async with server(fake_model, home, root=repo) as client:
        listed = (await client.request("wave/worktrees/list", {"cwd": str(repo)}))["worktrees"]
        assert (await client.request("wave/worktrees/list", {}))["worktrees"] == listed
    assert [Path(w["path"]) for w in listed] == sorted(paths)
    for entry in listed:
        assert entry["branch"] == f"worktree-{Path(entry['path']).name}"
        assert entry["changedFiles"] == 1 and entry["commits"] == 0
        assert (
            entry["owner"].startswith("subagent sub-")
            and "(coder) of session " + sid in (entry["owner"])
        )


async def test_isolation_in_the_call_and_its_validation(
    fake_model: FakeModelServer, home: Path, cloned_repo: ClonedRepo, tmp_path: Path
) -> None:
    # WTC-1, WTC-3, WT-11
    repo = cloned_repo.repo
    folder = tmp_path / "not-a-repo"
    folder.mkdir()
    (folder / "notes.md").write_text("plain folder\n")
    before_repo, before_folder = snapshot(repo), snapshot(folder)
    fake_model.set_script(
        {
            "routes": [
                route(
                    "three calls",
                    reply(
                        "",
                        delegate("general-purpose", "ASKED TASK", isolation="worktree"),
                        delegate("general-purpose", "BAD TASK", isolation="sandbox"),
                        delegate("general-purpose", "IN PLACE TASK"),
                    ),
                    reply("ok"),
                ),
                route(
                    "ASKED TASK",
                    reply(
                        "",
                        call("Bash", {"command": "pwd -P"}),
                        call("Write", {"file_path": "asked.txt", "content": "x\n"}),
                    ),
                    reply("asked done"),
                ),
                route("BAD TASK", reply("must never run")),
                route("IN PLACE TASK", reply("", call("Bash", {"command": "pwd -P"})), reply("in")),
                route(
                    "no git here",
                    reply("", delegate("general-purpose", "NOGIT TASK", isolation="worktree")),
                    reply("ok"),
                ),
                route("NOGIT TASK", reply("must never run")),
            ]
        }
    )
    async with server(fake_model, home) as client:
        sid = (await new_session(client, repo))["sessionId"]
        await send(client, sid, "three calls")
        other = (await new_session(client, folder))["sessionId"]
        await send(client, other, "no git here")

    asked, bad, in_place = last_results(bodies_for(fake_model, "three calls")[1])
    [worktree] = worktree_dirs(repo)  # only the asked-for one: the bad call made none
    [pwd, _write] = last_results(bodies_for(fake_model, "ASKED TASK")[1])
    assert same_path(pwd, worktree)  # WTC-1: isolated because the call asked for it
    assert (worktree / "asked.txt").exists() and "Worktree kept" in asked
    # WTC-3: a validation error, nothing started: no worktree, no model request.
    assert 'isolation must be "worktree"' in bad and "nothing was started" in bad
    assert bodies_for(fake_model, "BAD TASK") == []
    assert {b for b in branches(repo) if b.startswith("worktree-")} == {f"worktree-{worktree.name}"}
    # Without isolation the same subagent runs in place (the control).
    [here] = last_results(bodies_for(fake_model, "IN PLACE TASK")[1])
    assert same_path(here, repo) and "Worktree" not in in_place
    assert snapshot(repo) == before_repo
    # WT-11: not a git repository and no hook: a clear failure, never in place.
    [failure] = last_results(bodies_for(fake_model, "no git here")[1])
    assert failure.startswith("Agent delegation failed: Cannot run in an isolated worktree: ")
    assert str(folder) in failure and "not inside a git repository" in failure
    assert "WorktreeCreate hook" in failure
    assert bodies_for(fake_model, "NOGIT TASK") == []
    assert snapshot(folder) == before_folder and not (folder / ".wave").exists()


async def test_session_worktree_and_subagents_started_from_it(
    fake_model: FakeModelServer, home: Path, cloned_repo: ClonedRepo
) -> None:
    # wave/session/new with worktree; EnterWorktree/ExitWorktree of the main agent; WT-4 in a
    # session worktree; WT-10: an isolated subagent from there goes under the main repo.
    repo = cloned_repo.repo
    add_coder(repo)
    before = snapshot(repo)
    sess = repo / ".wave" / "worktrees" / "sess"
    fake_model.set_script(
        {
            "routes": [
                route(
                    "session work",
                    reply(
                        "",
                        call("Bash", {"command": "pwd -P"}),
                        call("Write", {"file_path": "s.txt", "content": "session\n"}),
                        call("Write", {"file_path": str(repo / "outside.txt"), "content": "x"}),
                        delegate("coder", "SUB IN SESSION"),
                    ),
                    reply("", call("ExitWorktree", {"action": "remove"})),
                    reply("", call("ExitWorktree", {"action": "remove", "discard_changes": True})),
                    reply(
                        "",
                        call("Bash", {"command": "pwd -P"}),
                        call("EnterWorktree", {"name": "second"}),
                    ),
                    reply("", call("ExitWorktree", {"action": "keep"})),
                    reply("session done"),
                ),
                route(
                    "SUB IN SESSION",
                    reply("", call("Bash", {"command": "pwd -P; git rev-parse HEAD"})),
                    reply("sub done"),
                ),
            ]
        }
    )
    async with server(fake_model, home) as client:
        created = await new_session(client, repo, worktree="sess")
        info = created["worktree"]
        assert Path(info["path"]) == sess and info["branch"] == "worktree-sess"
        assert info["isNew"] is True and sess.is_dir()
        sid = created["sessionId"]
        await send(client, sid, "session work")
        listed = (await client.request("wave/worktrees/list", {"cwd": str(repo)}))["worktrees"]
        # A kept session worktree is entered again as it is by a new session.
        again = (await new_session(client, repo, worktree="second"))["worktree"]

    main = bodies_for(fake_model, "session work")
    pwd, wrote, refused, sub = last_results(main[1])
    assert same_path(pwd, sess)  # the session's tools run in its worktree
    assert str(sess / "s.txt") in wrote
    assert SAFETY in refused and not (repo / "outside.txt").exists()
    # WT-10: not nested under the session's worktree; based on origin/main.
    sub_pwd, sub_head = last_results(bodies_for(fake_model, "SUB IN SESSION")[1])[0].split()
    assert Path(sub_pwd).parent == repo / ".wave" / "worktrees"
    assert sub_head == cloned_repo.origin_main
    assert sub.startswith("sub done\n\n") and "Worktree removed: no changes" in sub
    # ExitWorktree remove: refused while there are changes, done with discard_changes.
    [refusal] = last_results(main[2])
    assert "You have 1 uncommitted file. These will be lost if you remove the worktree." in refusal
    assert "?? s.txt" in refusal
    [removed] = last_results(main[3])
    assert "Worktree removed: changes discarded" in removed
    assert not sess.exists() and "worktree-sess" not in branches(repo)
    back, entered = last_results(main[4])
    assert same_path(back, repo)
    assert f"Created worktree at {repo / '.wave' / 'worktrees' / 'second'}" in entered
    assert "on branch worktree-second" in entered
    [kept] = last_results(main[5])
    assert "Worktree kept" in kept and "no changes" in kept
    assert (repo / ".wave" / "worktrees" / "second").is_dir()
    assert "worktree-second" in branches(repo)
    [entry] = listed
    assert entry["path"] == str(repo / ".wave" / "worktrees" / "second")
    assert entry["owner"] == f"session {sid}" and entry["changedFiles"] == 0
    assert again["isNew"] is False and again["path"] == entry["path"]
    assert snapshot(repo) == before and porcelain(repo) == ""


async def test_a_session_started_in_a_worktree_tells_the_model_where_it_works(
    fake_model: FakeModelServer, home: Path, cloned_repo: ClonedRepo
) -> None:
    # wave/session/new with worktree = the CLI's -w: the agent works in the worktree
    # (reference/worktree.md: "its working directory is set to the new worktree path").
    repo = cloned_repo.repo
    fake_model.set_script({"routes": [route("where am I", reply("here"))]})
    async with server(fake_model, home) as client:
        created = await new_session(client, repo, worktree="where")
        await send(client, created["sessionId"], "where am I")
    system = fake_model.chat_bodies()[0]["messages"][0]["content"]
    assert f"Working directory: {created['worktree']['path']}\n" in system


async def test_stopping_a_turn_applies_the_keep_remove_rule(
    fake_model: FakeModelServer, home: Path, cloned_repo: ClonedRepo
) -> None:
    # WT-7 (stop): the user cancels the turn while two isolated subagents wait for their
    # model; the one that changed a file keeps its worktree, the other is removed.
    repo = cloned_repo.repo
    add_coder(repo)
    before = snapshot(repo)
    fake_model.set_script(
        {
            "routes": [
                route(
                    "start and stop",
                    reply("", delegate("coder", "DIRTY TASK"), delegate("coder", "CLEAN TASK")),
                ),
                route(
                    "DIRTY TASK",
                    reply("", call("Write", {"file_path": "wip.txt", "content": "wip\n"})),
                    reply("never", fault={"hang": True}),
                ),
                route(
                    "CLEAN TASK",
                    reply("", call("Bash", {"command": "pwd -P"})),
                    reply("never", fault={"hang": True}),
                ),
            ]
        }
    )
    async with server(fake_model, home) as client:
        sid = (await new_session(client, repo))["sessionId"]
        msg_id, sending = client.start_request(
            "wave/chat/send", {"sessionId": sid, "text": "start and stop"}
        )
        await until(
            lambda: all(len(bodies_for(fake_model, t)) == 2 for t in ("DIRTY TASK", "CLEAN TASK")),
            10,
            "both subagents waiting for their second answer",
        )
        client.send_cancel(msg_id)
        assert (await sending)["status"] == "cancelled"
        [pwd] = last_results(bodies_for(fake_model, "CLEAN TASK")[1])
        clean = Path(pwd.strip())
        await until(lambda: not clean.exists(), 5, "the clean worktree's removal")
        blocks = agent_blocks(client)

    [dirty] = worktree_dirs(repo)
    assert (dirty / "wip.txt").read_text() == "wip\n"
    assert f"worktree-{dirty.name}" in branches(repo)
    assert not clean.exists() and f"worktree-{clean.name}" not in branches(repo)
    assert snapshot(repo) == before and porcelain(repo) == ""
    assert len(blocks) == 2 and {b["status"] for b in blocks} == {"failed"}


def hold_worktree_add(home: Path, action: str, after: str = "") -> str:
    """The server's ``PATH`` with a ``git`` in front that runs ``action`` (shell) before
    every ``git worktree add``, and ``after`` once git is done (``$target``: the new
    worktree's path). wave's own git runs no repository hook, so a hook cannot hold it."""
    shim_dir = home.parent / "git-shim"
    shim_dir.mkdir(exist_ok=True)
    real = shutil.which("git")
    assert real is not None
    shim = shim_dir / "git"
    shim.write_text(
        "#!/bin/sh\n"
        'case " $* " in *" worktree add "*) ;; *) exec ' + real + ' "$@";; esac\n'
        "eval target=\\${$(($# - 1))}\n"
        f"{action}\n"
        f'{real} "$@"\n'
        "code=$?\n"
        f"{after}\n"
        "exit $code\n"
    )
    shim.chmod(0o755)
    return f"{shim_dir}{os.pathsep}{os.environ['PATH']}"


async def test_the_first_model_request_does_not_wait_for_the_checkout(
    fake_model: FakeModelServer, home: Path, cloned_repo: ClonedRepo
) -> None:
    # Issue 18: git's checkout overlaps the subagent's first model request; its first tool
    # call waits for the worktree and runs in it (WT-1).
    repo = cloned_repo.repo
    add_coder(repo)
    path = hold_worktree_add(home, "sleep 3")
    fake_model.set_script(
        {
            "routes": [
                route("slow checkout", reply("", delegate("coder", "CODER TASK")), reply("ok")),
                route(
                    "CODER TASK",
                    reply(
                        "",
                        call("Bash", {"command": "pwd -P"}),
                        call("Write", {"file_path": "new.txt", "content": "NEW\n"}),
                    ),
                    reply("coder finished"),
                ),
            ]
        }
    )
    async with server(fake_model, home, PATH=path) as client:
        sid = (await new_session(client, repo))["sessionId"]
        await send(client, sid, "slow checkout")

    posts = [r for r in fake_model.requests() if r["method"] == "POST"]
    main_first = posts[0]["time"]
    sub_first = next(r["time"] for r in posts if "CODER TASK" in json.dumps(r["body"]))
    assert sub_first - main_first < 2.0  # the shim holds the checkout for 3 s
    [worktree] = worktree_dirs(repo)
    pwd, wrote = last_results(bodies_for(fake_model, "CODER TASK")[1])
    assert same_path(pwd, worktree)
    assert str(worktree / "new.txt") in wrote
    assert (worktree / "new.txt").read_text() == "NEW\n"
    [block] = agent_blocks(client)
    assert block["details"]["worktree"]["kept"] is True
    assert block["details"]["worktree"]["baseCommit"] == cloned_repo.origin_main


async def test_a_checkout_that_fails_after_the_first_request_fails_the_delegation_cleanly(
    fake_model: FakeModelServer, home: Path, cloned_repo: ClonedRepo
) -> None:
    # WT-11's rule when git fails only after the first model request went out: the
    # delegation fails with git's reason, no tool ran anywhere, nothing is left behind.
    repo = cloned_repo.repo
    add_coder(repo)
    path = hold_worktree_add(home, "sleep 0.5; echo 'refused by the test hook' >&2; exit 1")
    before = snapshot(repo)
    fake_model.set_script(
        {
            "routes": [
                route("doomed checkout", reply("", delegate("coder", "CODER TASK")), reply("ok")),
                route(
                    "CODER TASK",
                    reply("", call("Write", {"file_path": "new.txt", "content": "NEW\n"})),
                    reply("coder finished"),
                ),
            ]
        }
    )
    async with server(fake_model, home, PATH=path) as client:
        sid = (await new_session(client, repo))["sessionId"]
        await send(client, sid, "doomed checkout")

    [result] = last_results(fake_model.chat_bodies()[-1])
    assert result.startswith("Agent delegation failed: Could not create the worktree")
    assert "refused by the test hook" in result
    assert len(bodies_for(fake_model, "CODER TASK")) <= 1  # never a round after a tool
    assert worktree_dirs(repo) == []
    assert not [b for b in branches(repo) if b.startswith("worktree-")]
    assert snapshot(repo) == before and porcelain(repo) == ""
    [block] = agent_blocks(client)
    assert block["status"] == "failed"


async def test_stopping_a_turn_while_the_checkout_runs_leaves_nothing_behind(
    fake_model: FakeModelServer, home: Path, cloned_repo: ClonedRepo
) -> None:
    # WT-7 (stop) while git still checks the worktree out beside the subagent's first model
    # request: the turn ends at once, and the worktree, once made, is removed by the rule.
    repo = cloned_repo.repo
    add_coder(repo)
    checked_out = repo.parent / "checked-out.txt"  # where the worktree was, once git is done
    path = hold_worktree_add(home, "sleep 4", f'echo "$target" > {checked_out}')
    before = snapshot(repo)
    fake_model.set_script(
        {
            "routes": [
                route("start and stop", reply("", delegate("coder", "CODER TASK"))),
                route("CODER TASK", reply("never", fault={"hang": True})),
            ]
        }
    )
    async with server(fake_model, home, PATH=path) as client:
        sid = (await new_session(client, repo))["sessionId"]
        msg_id, sending = client.start_request(
            "wave/chat/send", {"sessionId": sid, "text": "start and stop"}
        )
        # The subagent's first request arrived; git is still held.
        await until(lambda: bodies_for(fake_model, "CODER TASK"), 5, "the subagent's request")
        client.send_cancel(msg_id)
        started = asyncio.get_running_loop().time()
        assert (await sending)["status"] == "cancelled"
        stopped_in = asyncio.get_running_loop().time() - started
        # git ends the checkout once the shim lets it run,
        await until(checked_out.exists, 10, "the end of the checkout")
        made = Path(os.path.realpath(checked_out.read_text().strip()))
        # then the rule removes it, in the background.
        await until(
            lambda: not made.exists() and not [b for b in branches(repo) if "worktree-" in b],
            10,
            "the worktree's removal",
        )

    assert made.parent == repo.resolve() / ".wave" / "worktrees"
    assert not made.exists() and worktree_dirs(repo) == []
    assert not [b for b in branches(repo) if b.startswith("worktree-")]
    assert snapshot(repo) == before and porcelain(repo) == ""
    assert stopped_in < 2.5  # the stop did not wait for git
