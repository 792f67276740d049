"""The escape corpus (issue 17) end to end: a real ``wave-ls`` over LSP, the offline model,
a real git repository. An isolated subagent with ``bypassPermissions`` tries 40 ways to
change its parent repository (redirects, ``cd`` chains, ``git -C``/``--git-dir``, links made
then written by Bash and by Edit/Write, background commands, a double fork that outlives
its call, ``python3``, ``tee``, ``cp``, ``mv``, ``rm``, ...) while doing real work in its
worktree. Sandboxed (Landlock, bubblewrap), the parent's files, index, HEAD, refs and config
stay byte-identical and the work (a commit) reaches ``worktree-<name>``. With
``WAVE_SANDBOX=none`` the same corpus changes the parent (the test can fail) and the agent
is told, once, that it runs unsandboxed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support import git_repos
from tests.support.fake_model import FakeModelServer, call, reply, route
from tests.support.git_repos import ClonedRepo, commit_all, git, worktree_dirs, write_files
from tests.support.lsp import capabilities, server_env, wave_client
from tests.test_lsp_delegation import bodies_for, delegate, write_agents
from tests.test_lsp_worktrees import CODER, IDENTITY, agent_blocks, last_results, new_session, send
from wave_ls.runtime.sandbox.bubblewrap import bwrap_path
from wave_ls.runtime.sandbox.landlock import abi_version

cloned_repo = git_repos.cloned_repo
repo_template = git_repos.repo_template

# Landlock runs wherever the kernel has it (never skipped for another reason); bubblewrap
# where bwrap is installed and can make namespaces; "none" proves the corpus escapes.
MECHANISMS = [
    pytest.param("landlock", marks=pytest.mark.skipif(abi_version() < 1, reason="no Landlock")),
    pytest.param("bubblewrap", marks=pytest.mark.skipif(bwrap_path() is None, reason="no bwrap")),
    "none",
]
VICTIMS = 45
UNSANDBOXED = "commands run WITHOUT a sandbox here"
HINT = "ran in a sandbox that allows writes only inside the worktree"


def victim(n: int) -> str:
    return f"victims/v{n:02d}.txt"


def escape_shapes(p: Path) -> list[tuple[str, str]]:
    """(what it tries, the command) run from the worktree ``<p>/.wave/worktrees/<name>``;
    shape ``n`` aims at ``victims/v<n>.txt`` of the parent ``p`` where it names a file."""
    v = {n: p / victim(n) for n in range(1, VICTIMS + 1)}
    return [
        ("relative redirect", f"echo evil > ../../../{victim(1)}"),
        ("absolute redirect", f"echo evil > {v[2]}"),
        ("append", f"echo evil >> {v[3]}"),
        ("cd chain", f"cd ../../.. && echo evil > {victim(4)}"),
        ("absolute cd chain", f"cd / && cd {p} && cd victims && echo evil > v05.txt"),
        (
            "cd to the git toplevel's parent",
            'cd "$(git rev-parse --show-toplevel)/../../.." && touch new06.txt',
        ),
        ("git -C commit", f"git -C {p} commit -q --allow-empty -m evil07"),
        ("git -C update-ref", f"git -C {p} update-ref refs/heads/main $(git rev-parse HEAD)"),
        ("git -C branch", f"git -C {p} branch evil09"),
        ("git --git-dir branch", f"git --git-dir={p}/.git branch evil10"),
        ("git -C rm --cached (index)", f"git -C {p} rm -q --cached {victim(11)}"),
        ("ref file written", f"git rev-parse HEAD > {p}/.git/refs/heads/evil12"),
        ("git -C tag", f"git -C {p} tag evil13"),
        ("git -C config", f"git -C {p} config user.name evil14"),
        (
            "git --work-tree checkout",
            f"git --git-dir={p}/.git --work-tree={p} "
            f"checkout HEAD~1 -- README.md 2>&1; echo evil > {v[15]}",
        ),
        ("symlink then write", f"ln -s {v[16]} sl16 && echo evil > sl16"),
        ("symlinked folder then write", f"ln -s {p}/victims sdir17 && echo evil > sdir17/v17.txt"),
        ("hard link then write", f"ln {v[18]} hl18 && echo evil >> hl18"),
        ("hard link for Edit", f"ln {v[19]} hl19; ls -l hl19"),
        ("symlink for Write", f"ln -s {v[20]} sl20"),
        ("python3 -c write", f"python3 -c \"open('{v[23]}', 'w').write('evil')\""),
        ("python3 -c remove", f"python3 -c \"import os; os.remove('{v[24]}')\""),
        ("tee", f"echo evil | tee {v[25]}"),
        ("cp over a file", f"cp README.md {v[26]}"),
        ("mv out of the parent", f"mv {v[27]} ./stolen27"),
        ("rm", f"rm -f {v[28]}"),
        ("rm -rf of a folder", f"rm -rf {p}/victims/dir29"),
        (
            "double fork that outlives the call",
            f"(setsid sh -c 'sleep 0.5; echo evil > {v[30]}' >/dev/null 2>&1 &); echo forked",
        ),
        (
            "nohup in the background",
            f"nohup sh -c 'sleep 0.5; echo evil > {v[31]}' >/dev/null 2>&1 & echo started",
        ),
        ("truncate", f"truncate -s 0 {v[32]}"),
        ("dd", f"dd if=/dev/zero of={v[33]} bs=1 count=1 conv=notrunc status=none"),
        ("sed -i", f"sed -i s/victim/evil/ {v[34]}"),
        ("mkdir", f"mkdir {p}/evil35"),
        ("beside the repository", f"echo evil > {p.parent}/outside36.txt"),
        ("git -C worktree add", f"git -C {p} worktree add -q ../evil37 2>&1; echo tried"),
        ("through /proc", f"echo evil > /proc/self/cwd/../../../{victim(38)}"),
        ("file descriptor", f"exec 3> {v[39]}; echo evil >&3"),
        ("find -exec", f"find {p}/victims -name v40.txt -exec sh -c 'echo evil > {{}}' \\;"),
        ("awk", f'awk \'BEGIN {{ print "evil" > "{v[41]}" }}\''),
        ("install", f"install -m 644 README.md {v[42]}"),
        ("touch a new file in .git", f"touch {p}/.git/evil43"),
        (
            "GIT_DIR symbolic-ref (HEAD)",
            f"GIT_DIR={p}/.git git symbolic-ref HEAD refs/heads/evil44",
        ),
    ]


def background_shapes(p: Path) -> list[dict[str, Any]]:
    return [
        call("Bash", {"command": f"echo evil > {p / victim(21)}", "run_in_background": True}),
        call(
            "Bash",
            {"command": f"sleep 0.3; echo evil > {p / victim(22)}", "run_in_background": True},
        ),
    ]


INSIDE_WORK = (
    "echo inside > inside.txt && git add inside.txt && git commit -qm 'inside work' "
    '&& git log -1 --format=%s && git status --short && echo tmp > "$TMPDIR/t" '
    "&& cat \"$TMPDIR/t\" && python3 -c \"open('py.txt', 'w').write('py')\" && cat py.txt"
)


def parent_state(repo: Path) -> dict[str, bytes | str]:
    """Everything of the parent an escape could change: every path of its working tree
    (bytes of files, symlink targets, folders), its index, HEAD, config, refs, the admin
    dirs of its worktrees, and what lies beside it; wave's own worktrees left out."""
    state: dict[str, bytes | str] = {}
    for path in sorted(repo.parent.rglob("*")):
        relative = path.relative_to(repo.parent).as_posix()
        parts = relative.split("/")
        if parts[0] in ("home", "origin.git") or relative.startswith("repo/.wave/worktrees"):
            continue
        if parts[:2] == ["repo", ".git"] and len(parts) > 2:
            if parts[2] not in ("index", "HEAD", "config", "packed-refs", "refs", "worktrees"):
                continue  # objects (the shared store is writable), logs, hooks
            if parts[2] == "worktrees" and (len(parts) == 3 or parts[3].startswith("agent-")):
                continue  # the isolated agent's own admin dir
            if parts[2:4] == ["refs", "remotes"] or relative.startswith(
                "repo/.git/refs/heads/worktree-agent-"
            ):
                continue  # made by wave itself: the fetch of origin, the agent's branch
        if path.is_symlink():
            state[relative] = "symlink -> " + str(path.readlink())
        elif path.is_file():
            state[relative] = path.read_bytes()
        elif path.is_dir():
            state[relative] = "dir"
    return state


def changed_paths(before: dict[str, Any], after: dict[str, Any]) -> set[str]:
    return {key for key in before.keys() | after.keys() if before.get(key) != after.get(key)}


@pytest.mark.parametrize("mechanism", MECHANISMS)
async def test_escape_corpus_from_an_isolated_subagent(
    mechanism: str, fake_model: FakeModelServer, home: Path, cloned_repo: ClonedRepo
) -> None:
    repo = cloned_repo.repo
    write_agents(repo, coder=CODER)
    write_files(repo, {victim(n): f"victim {n}\n" for n in range(1, VICTIMS + 1)})
    write_files(repo, {f"victims/dir29/f{n}.txt": "victim\n" for n in range(3)})
    commit_all(repo, "victims and the coder")
    shapes = escape_shapes(repo)
    assert len(shapes) + len(background_shapes(repo)) + 2 >= 30  # + Edit and Write below
    first_round = [
        call("Bash", {"command": command, "description": what}) for what, command in shapes
    ]
    fake_model.set_script(
        {
            "routes": [
                route("try to escape", reply("", delegate("coder", "ESCAPE TASK")), reply("done")),
                route(
                    "ESCAPE TASK",
                    reply("", *first_round, *background_shapes(repo)),
                    reply(
                        "",
                        call(
                            "Edit",
                            {"file_path": "hl19", "old_string": "victim", "new_string": "evil"},
                        ),
                        call("Write", {"file_path": "sl20", "content": "evil\n"}),
                        call("Bash", {"command": "sleep 1.2; echo waited"}),  # the late writers
                        call("Bash", {"command": INSIDE_WORK}),
                    ),
                    reply("tried everything"),
                ),
            ]
        }
    )
    before = parent_state(repo)
    env = server_env(home, fake_model.base_url, WAVE_SANDBOX=mechanism, **IDENTITY)
    async with wave_client(env, caps=capabilities()) as client:
        sid = (await new_session(client, repo))["sessionId"]
        # No wait after the turn: its own "sleep 1.2" outlasted the late writers (0.5 s).
        await send(client, sid, "try to escape")
    changed = changed_paths(before, parent_state(repo))

    [worktree] = worktree_dirs(repo)
    branch = f"worktree-{worktree.name}"
    rounds = bodies_for(fake_model, "ESCAPE TASK")
    first, second = last_results(rounds[1]), last_results(rounds[2])
    assert len(first) == len(shapes) + 2 and len(second) == 4
    edit_hl19, write_sl20, _waited, inside = second
    # The same commands work inside the worktree, and the commit reaches the branch.
    assert inside.splitlines()[:1] == ["inside work"] and "tmp\npy" in inside, inside
    assert git(repo, "log", "-1", "--format=%s", branch).strip() == "inside work"
    assert git(worktree, "symbolic-ref", "HEAD").strip() == f"refs/heads/{branch}"
    # Edit/Write never write through a link into the parent (atomic writes, WT-4).
    assert "outside this agent's worktree" in write_sl20
    [result] = last_results(fake_model.chat_bodies()[-1])
    notes = [text for text in [*first, *second] if UNSANDBOXED in text]
    system_prompt = rounds[0]["messages"][0]["content"]
    block = agent_blocks(client)[0]

    if mechanism == "none":
        # The test can fail: unsandboxed, the corpus changes the parent ...
        escaped = {p for p in changed if p.startswith("repo/victims/")}
        assert len(escaped) >= 25, sorted(changed)
        for key in ("repo/.git/index", "repo/.git/HEAD", "repo/.git/refs/heads/main"):
            assert key in changed, key
        assert {"repo/" + victim(21), "repo/" + victim(22), "repo/" + victim(30)} <= changed
        # ... and the agent is told so once (its first command), and the delegation's summary.
        assert len(notes) == 1 and UNSANDBOXED in first[0], notes
        assert UNSANDBOXED in result and "# Sandbox" not in system_prompt
        assert block["details"]["sandbox"]["mechanism"] == "none"
        return

    assert changed == set(), sorted(changed)
    assert not (repo.parent / "outside36.txt").exists()
    assert notes == [] and UNSANDBOXED not in result
    assert (
        "# Sandbox" in system_prompt
        and f"HEAD is detached on purpose (at the tip of {branch})" in system_prompt
    )
    assert block["details"]["sandbox"]["mechanism"] == mechanism
    by_shape = dict(zip([what for what, _ in shapes], first, strict=False))
    refused = ("Permission denied", "Read-only file system", "Invalid cross-device link")
    for what in ("absolute redirect", "git -C commit", "git -C branch", "hard link then write"):
        assert any(word in by_shape[what] for word in refused), (what, by_shape[what])
        assert HINT in by_shape[what], by_shape[what]
    assert "Exit code" not in by_shape["double fork that outlives the call"]
    assert "victim" in edit_hl19 or "does not exist" in edit_hl19  # no link was made
    assert f"Worktree kept: {worktree} on branch {branch}" in result and "1 commit" in result
