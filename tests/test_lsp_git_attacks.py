"""wave-ls's own git against what an isolated agent (or a shipped ``.git``) planted (issue 25
point 3), end to end: a real ``wave-ls`` over LSP, the offline model, real repositories.

- a git dir the agent made (objects a link to ``$HOME``, a ``core.fsmonitor``), named by its
  worktree's ``.git``: ``wave/worktrees/diff`` writes nothing outside;
- a shipped ``.git/config`` whose ``core.fsmonitor`` copies its stdin: it never gets the
  editor's LSP messages (``wave/worktrees/list``, the first ``@`` completion), and its
  filter and diff programs never run (``wave/worktrees/diff``, an isolated delegation);
- the agent rewrites a loose object of the parent: the parent's file as git reads it is
  unchanged, and the agent's own commits still arrive in the parent;
- FIFOs planted as the admin dir's ``HEAD`` and as ``.git``: ``wave/worktrees/list`` answers
  within its bound, and the user's ``git worktree list`` works after the run.
"""

from __future__ import annotations

import asyncio
import json
import os
import stat
import subprocess
import zlib
from pathlib import Path

from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pygls.uris import from_fs_path

from tests.support import git_repos
from tests.support.fake_model import FakeModelServer, call, reply, route
from tests.support.git_repos import ClonedRepo, commit_all, git, rev, write_files
from tests.support.lsp import capabilities, server_env, wave_client
from tests.support.waiting import until
from tests.test_lsp_delegation import bodies_for, delegate, write_agents
from tests.test_lsp_worktrees import CODER, IDENTITY, add_coder, last_results, new_session, send

cloned_repo = git_repos.cloned_repo
repo_template = git_repos.repo_template

LIST_BOUND = 15.0  # seconds: wave/worktrees/list must answer within this
SECRET = "SECRET-DOCUMENT-TEXT-0xC0FFEE"


def env_for(home: Path, fake: FakeModelServer) -> dict[str, str]:
    return server_env(home, fake.base_url, **IDENTITY)


async def wait_for_file(path: Path, timeout: float = 30) -> None:
    await until(path.exists, timeout, f"{path} to appear")


async def wait_for_rounds(fake: FakeModelServer, text: str, count: int) -> None:
    await until(lambda: len(bodies_for(fake, text)) >= count, 20, f"{count} {text} requests")


def home_entries(home: Path) -> set[str]:
    """What lies in ``$HOME`` besides wave's own folder."""
    return {entry.name for entry in home.iterdir() if entry.name != ".wave"}


async def test_a_planted_git_dir_makes_diff_write_nothing_outside(
    fake_model: FakeModelServer, home: Path, cloned_repo: ClonedRepo, shared_dir: Path
) -> None:
    # The agent's background command (it outlives the agent, still confined) waits for the
    # end of the run, then points the worktree's .git at a git dir it made: objects a link
    # to $HOME, core.fsmonitor writing there. Today's diff took its writable object store
    # from that dir and ran git add there: the fsmonitor wrote into $HOME.
    repo = cloned_repo.repo
    add_coder(repo)
    pwned = home / "pwned-by-fsmonitor"
    planted = shared_dir / "planted"
    plant = (
        "until git symbolic-ref -q HEAD >/dev/null 2>&1; do sleep 0.05; done; "  # run ended
        'P="$PWD/planted" && git init -q --bare "$P/common" '
        f'&& rm -rf "$P/common/objects" && ln -s {home} "$P/common/objects" '
        f"&& git config -f \"$P/common/config\" core.fsmonitor 'touch {pwned}; false' "
        '&& mkdir -p "$P/admin" && echo "ref: refs/heads/main" > "$P/admin/HEAD" '
        '&& echo "$P/common" > "$P/admin/commondir" '
        f'&& echo "gitdir: $P/admin" > .git && echo done > {planted}'
    )
    fake_model.set_script(
        {
            "routes": [
                route("review later", reply("", delegate("coder", "PLANT TASK")), reply("ok")),
                route(
                    "PLANT TASK",
                    reply(
                        "",
                        call("Write", {"file_path": "new.txt", "content": "NEW\n"}),
                        call("Bash", {"command": plant, "run_in_background": True}),
                    ),
                    reply("planted"),
                ),
            ]
        }
    )
    async with wave_client(env_for(home, fake_model), caps=capabilities()) as client:
        sid = (await new_session(client, repo))["sessionId"]
        await send(client, sid, "review later")
        await wait_for_file(planted)
        [entry] = (await client.request("wave/worktrees/list", {"cwd": str(repo)}))["worktrees"]
        worktree = Path(entry["path"])
        assert "planted/admin" in (worktree / ".git").read_text()
        before = home_entries(home)
        try:
            diff = await client.request("wave/worktrees/diff", {"path": str(worktree)})
        except JsonRpcException as error:  # what today's diff answered, after the damage
            diff = {"error": str(error), "files": []}

    assert not pwned.exists()
    assert home_entries(home) == before  # no object written into $HOME either
    assert "new.txt" in {f["path"] for f in diff["files"]}, diff
    assert not os.path.islink(home / ".wave")


def ship_hostile_config(repo: Path, stolen: Path, ran: Path) -> None:
    """What an unpacked archive can bring in its ``.git/config`` (its committed
    ``.gitattributes`` name the drivers): an fsmonitor that copies its stdin, a filter, an
    external diff and a diff driver, each leaving a trace."""
    git(repo, "config", "core.fsmonitor", f"cat >> {stolen}; false")
    for key in ("filter.evil.clean", "filter.evil.smudge"):
        git(repo, "config", key, f"sh -c 'echo {key} >> {ran}; cat'")
    git(repo, "config", "filter.evil.required", "true")
    git(repo, "config", "diff.external", f"sh -c 'echo diff.external >> {ran}'")
    git(repo, "config", "diff.evil.command", f"sh -c 'echo diff.command >> {ran}'")
    git(repo, "config", "diff.evil.textconv", f"sh -c 'echo textconv >> {ran}; cat'")


async def test_a_shipped_git_config_never_reads_the_editors_messages_nor_runs(
    fake_model: FakeModelServer, home: Path, cloned_repo: ClonedRepo, shared_dir: Path
) -> None:
    repo = cloned_repo.repo
    stolen, ran = shared_dir / "stolen", shared_dir / "ran"
    write_agents(repo, coder=CODER)
    write_files(
        repo,
        {
            ".gitattributes": "*.py filter=evil diff=evil\n",
            # Isolated worktrees check out HEAD, which holds the attributes and *.py files.
            ".wave/settings.json": json.dumps({"worktree": {"baseRef": "head"}}),
        },
    )
    commit_all(repo, "attributes, the coder, baseRef head")
    worktree = repo / ".wave" / "worktrees" / "kept"
    git(repo, "worktree", "add", "-q", "-b", "worktree-kept", str(worktree))
    write_files(worktree, {"src/app.py": "def answer():\n    return 43\n"})  # a change to count
    ship_hostile_config(repo, stolen, ran)
    fake_model.set_script(
        {
            "routes": [
                route("isolate", reply("", delegate("coder", "CODER TASK")), reply("ok")),
                route("CODER TASK", reply("", call("Bash", {"command": "ls"})), reply("done")),
            ]
        }
    )
    env = env_for(home, fake_model)
    async with wave_client(env, caps=capabilities(), root=repo) as client:
        listing = asyncio.ensure_future(client.request("wave/worktrees/list", {"cwd": str(repo)}))
        completion = asyncio.ensure_future(
            client.request("wave/chatInput/completion", {"text": "@app"})
        )
        # What a planted reader of the server's stdin would get: the next messages.
        client.protocol.notify(
            types.TEXT_DOCUMENT_DID_OPEN,
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(
                    uri=from_fs_path(str(repo / "notes.md")) or "",
                    language_id="markdown",
                    version=1,
                    text=SECRET,
                )
            ),
        )
        listed = await asyncio.wait_for(listing, LIST_BOUND)
        offered = await asyncio.wait_for(completion, LIST_BOUND)
        [entry] = listed["worktrees"]
        assert entry["changedFiles"] == 1
        labels = [item["label"] for item in offered["items"]]
        assert any("app.py" in label for label in labels), labels
        diff = await asyncio.wait_for(
            client.request("wave/worktrees/diff", {"path": str(worktree)}), LIST_BOUND
        )
        assert "+    return 43" in diff["patch"]
        sid = (await new_session(client, repo))["sessionId"]
        await send(client, sid, "isolate")  # git worktree add checks out *.py files
        await asyncio.wait_for(client.request("wave/session/close", {"sessionId": sid}), 10)

    assert not stolen.exists() or stolen.read_bytes() == b""
    assert not ran.exists(), ran.read_text()
    # The traps are real: the user's own git runs them.
    subprocess.run(
        ["git", "status", "--porcelain"], cwd=worktree, stdin=subprocess.DEVNULL, check=True
    )
    assert stolen.exists()
    git(worktree, "diff")
    assert "filter.evil.clean" in ran.read_text()


def loose_object(repo: Path, sha: str) -> Path:
    return repo / ".git" / "objects" / sha[:2] / sha[2:]


async def test_the_agent_cannot_substitute_a_parent_object_and_its_commits_arrive(
    fake_model: FakeModelServer, home: Path, cloned_repo: ClonedRepo, tmp_path: Path
) -> None:
    repo = cloned_repo.repo
    add_coder(repo)
    original = "def needle():\n    return 'the real one'\n"
    write_files(repo, {"src/needle.py": original})
    commit_all(repo, "the needle")
    blob = rev(repo, "HEAD:src/needle.py")
    target = loose_object(repo, blob)
    assert target.is_file()  # loose: what git reads without checking its hash
    stored = target.read_bytes()
    evil = b"print('the agent was here')\n"
    forged = tmp_path / "forged-object"  # a valid loose object of other content, same name
    forged.write_bytes(zlib.compress(b"blob %d\0" % len(evil) + evil))
    forge = (
        f"chmod u+w {target}; cp {forged} {target} 2>&1; mv {forged} {target} 2>&1; "
        f"rm -rf {repo}/.git/objects/pack 2>&1; echo tried"
    )
    work = (
        "echo mine > mine.txt && git add mine.txt && git commit -qm 'agent work' "
        "&& git rev-parse HEAD"
    )
    fake_model.set_script(
        {
            "routes": [
                route("substitute", reply("", delegate("coder", "FORGE TASK")), reply("ok")),
                route(
                    "FORGE TASK",
                    reply("", call("Bash", {"command": forge}), call("Bash", {"command": work})),
                    reply("forged"),
                ),
            ]
        }
    )
    async with wave_client(env_for(home, fake_model), caps=capabilities()) as client:
        sid = (await new_session(client, repo))["sessionId"]
        await send(client, sid, "substitute")

    tried, committed = last_results(bodies_for(fake_model, "FORGE TASK")[1])
    assert "tried" in tried
    assert target.read_bytes() == stored  # refused: the object and the packs are all there
    assert git(repo, "cat-file", "-p", "HEAD:src/needle.py") == original
    (repo / "src" / "needle.py").unlink()
    git(repo, "checkout", "--", "src/needle.py")
    assert (repo / "src" / "needle.py").read_text() == original
    # The agent's commit is in the parent's own store, on its branch.
    agent_commit = committed.strip().splitlines()[-1]
    [worktree] = git_repos.worktree_dirs(repo)
    branch = f"worktree-{worktree.name}"
    assert rev(repo, branch) == agent_commit
    assert git(repo, "log", "-1", "--format=%s", branch).strip() == "agent work"
    assert git(repo, "cat-file", "-t", agent_commit).strip() == "commit"
    assert not (repo / ".wave" / "worktrees" / ".objects" / worktree.name).exists()
    git(repo, "fsck", "--no-progress")
    assert git(worktree, "show", "HEAD:mine.txt") == "mine\n"


PLANT_HEAD_FIFO = 'd=$(git rev-parse --git-dir) && rm "$d/HEAD" && mkfifo "$d/HEAD" && pwd -P'


def fifos_left(*paths: Path) -> bool:
    return any(os.path.lexists(p) and stat.S_ISFIFO(os.lstat(p).st_mode) for p in paths)


def git_worktree_list_ends(repo: Path) -> bool:
    try:
        subprocess.run(
            ["git", "worktree", "list"],
            cwd=repo,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=10,
            check=True,
        )
    except subprocess.TimeoutExpired:
        return False
    return True


async def test_fifos_planted_as_head_and_dot_git_never_hang_the_listing(
    fake_model: FakeModelServer, home: Path, cloned_repo: ClonedRepo
) -> None:
    repo = cloned_repo.repo
    add_coder(repo)
    fake_model.set_script(
        {
            "routes": [
                route(
                    "plant fifos",
                    reply("", delegate("coder", "HEAD FIFO"), delegate("coder", "GIT FIFO")),
                ),
                route(
                    "HEAD FIFO",
                    reply("", call("Bash", {"command": PLANT_HEAD_FIFO})),
                    reply("never", fault={"hang": True}),
                ),
                route(
                    "GIT FIFO",
                    reply("", call("Bash", {"command": "rm .git && mkfifo .git && pwd -P"})),
                    reply("never", fault={"hang": True}),
                ),
            ]
        }
    )
    async with wave_client(env_for(home, fake_model), caps=capabilities()) as client:
        sid = (await new_session(client, repo))["sessionId"]
        msg_id, sending = client.start_request(
            "wave/chat/send", {"sessionId": sid, "text": "plant fifos"}
        )
        await wait_for_rounds(fake_model, "HEAD FIFO", 2)
        await wait_for_rounds(fake_model, "GIT FIFO", 2)
        [head_dir] = last_results(bodies_for(fake_model, "HEAD FIFO")[1])
        [git_dir] = last_results(bodies_for(fake_model, "GIT FIFO")[1])
        head_wt, dot_git_wt = Path(head_dir.strip()), Path(git_dir.strip())
        assert stat.S_ISFIFO(os.lstat(dot_git_wt / ".git").st_mode)
        listed = await asyncio.wait_for(
            client.request("wave/worktrees/list", {"cwd": str(repo)}), LIST_BOUND
        )
        by_path = {Path(w["path"]): w for w in listed["worktrees"]}
        assert by_path[head_wt]["changedFiles"] is None  # cannot be told: not a hang
        assert by_path[dot_git_wt]["changedFiles"] == 0  # counted from its registration
        client.send_cancel(msg_id)
        assert (await asyncio.wait_for(sending, 30))["status"] == "cancelled"
        # The runs' ends put git's files back (or removed the unchanged worktrees).
        heads = [Path(git(repo, "rev-parse", "--git-common-dir").strip(), "worktrees")]

        def admin_heads() -> list[Path]:
            return [a / "HEAD" for a in heads[0].iterdir()] if heads[0].is_dir() else []

        await until(
            lambda: not fifos_left(dot_git_wt / ".git", *admin_heads()), 20, "git's files back"
        )
        heads_then = admin_heads()
        again = await asyncio.wait_for(
            client.request("wave/worktrees/list", {"cwd": str(repo)}), LIST_BOUND
        )

    assert not fifos_left(dot_git_wt / ".git", *heads_then)
    assert git_worktree_list_ends(repo)  # the user's git no longer hangs on them
    for entry in again["worktrees"]:
        assert entry["changedFiles"] is not None, entry


async def test_a_fresh_server_lists_a_worktree_with_fifos_within_its_bound(
    fake_model: FakeModelServer, home: Path, cloned_repo: ClonedRepo
) -> None:
    # What a crashed run (or a command that outlived it) leaves: nothing repaired it.
    repo = cloned_repo.repo
    worktree = repo / ".wave" / "worktrees" / "agent-0badf1f0"
    other = repo / ".wave" / "worktrees" / "agent-0badf1f1"
    git(repo, "worktree", "add", "-q", "-b", "worktree-agent-0badf1f0", str(worktree))
    git(repo, "worktree", "add", "-q", "-b", "worktree-agent-0badf1f1", str(other))
    admin = Path(git(worktree, "rev-parse", "--absolute-git-dir").strip())
    (admin / "HEAD").unlink()  # from now on, plain git worktree list hangs here
    os.mkfifo(admin / "HEAD")
    (other / ".git").unlink()
    os.mkfifo(other / ".git")
    async with wave_client(env_for(home, fake_model), caps=capabilities()) as client:
        listed = await asyncio.wait_for(
            client.request("wave/worktrees/list", {"cwd": str(repo)}), LIST_BOUND
        )
        completion = await asyncio.wait_for(
            client.request("wave/chatInput/completion", {"text": "@READ"}), LIST_BOUND
        )
    by_name = {w["name"]: w for w in listed["worktrees"]}
    assert by_name["agent-0badf1f0"]["changedFiles"] is None
    assert "items" in completion
