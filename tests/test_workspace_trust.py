"""Workspace trust end to end over LSP (issue 25, point 1): a cloned repository's committed
hooks, sandbox settings, settings.local.json, registry record and agent keys do nothing until
the user trusts the folder; a folder with nothing held back works as before, unasked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcInvalidParams

from tests.support import git_repos
from tests.support.fake_model import FakeModelServer, call, reply, route
from tests.support.git_repos import IDENTITY, ClonedRepo, worktree_dirs
from tests.support.hostile_repo import AGENT, HostileRepo, hostile_repo, mark
from tests.support.lsp import WaveClient, capabilities, server_env, wave_client
from tests.test_lsp_delegation import delegate
from wave_ls.runtime.sandbox.landlock import abi_version

cloned_repo = git_repos.cloned_repo
repo_template = git_repos.repo_template
hostile = hostile_repo

KINDS = {"hooks", "sandbox", "agentHooks", "permissionMode", "registryRecord"}


def allow_all(_params: dict[str, Any]) -> dict[str, Any]:
    return {"allowed": True}


def bash_prompts(client: WaveClient, session_id: str) -> list[str]:
    return [
        r["summary"]
        for r in client.permission_requests
        if r["sessionId"] == session_id and r["toolName"] == "Bash"
    ]


def trust_updates(client: WaveClient, session_id: str) -> list[dict[str, Any]]:
    return client.updates_for(session_id, "workspaceTrust")


async def new_session(client: WaveClient, cwd: Path) -> str:
    return str((await client.request("wave/session/new", {"cwd": str(cwd)}))["sessionId"])


async def chat(client: WaveClient, session_id: str, text: str) -> None:
    done = await client.request("wave/chat/send", {"sessionId": session_id, "text": text})
    assert done["status"] == "completed", done


def rounds(tag: str, outside: Path) -> dict[str, Any]:
    """Bash writing outside the project, the hostile agent's Bash, then EnterWorktree."""
    return route(
        f"{tag} work",
        reply("", call("Bash", {"command": f"echo {tag} > {outside}/{tag}.txt"})),
        reply("", delegate(AGENT, f"{tag.upper()} AGENT TASK")),
        reply("", call("EnterWorktree", {"name": f"{tag}-wt"})),
        reply("done"),
    )


def agent_round(tag: str) -> dict[str, Any]:
    return route(
        f"{tag.upper()} AGENT TASK",
        reply("", call("Bash", {"command": f"echo {tag} > agent-{tag}.txt"})),
        reply("agent done"),
    )


async def test_a_hostile_clone_acts_only_once_trusted(
    fake_model: FakeModelServer, home: Path, hostile: HostileRepo
) -> None:
    repo = hostile.repo
    fake_model.set_script(
        {
            "routes": [
                rounds("untrusted", hostile.outside),
                agent_round("untrusted"),
                rounds("trusted", hostile.outside),
                agent_round("trusted"),
                route(
                    "live session, trusted now",
                    reply("", call("Bash", {"command": "echo live > live.txt"})),
                    reply("done"),
                ),
            ]
        }
    )
    env = server_env(home, fake_model.base_url, **IDENTITY)
    async with wave_client(env, caps=capabilities(permission=True)) as client:
        client.permission_answer = allow_all
        first = await new_session(client, repo)
        announced = await client.wait_update(
            lambda u: u["sessionId"] == first and u["kind"] == "workspaceTrust"
        )
        status = await client.request("wave/workspace/status", {"cwd": str(repo)})
        await chat(client, first, "untrusted work")
        # The Remove click on the worktree the committed record names.
        with pytest.raises(JsonRpcInvalidParams, match="is not a wave worktree"):
            await client.request("wave/worktrees/remove", {"path": str(hostile.hooked)})
        untrusted_marks = hostile.marks_written()
        untrusted_prompts = bash_prompts(client, first)
        untrusted_worktrees = [p.name for p in worktree_dirs(repo)]

        trusted = await client.request("wave/workspace/trust", {"cwd": str(repo), "trusted": True})
        told = await client.wait_update(
            lambda u: u["sessionId"] == first and u["kind"] == "workspaceTrust" and u["trusted"]
        )
        prompts_before = len(bash_prompts(client, first))
        await chat(client, first, "live session, trusted now")  # its next round: sandboxed
        live_prompts = bash_prompts(client, first)[prompts_before:]
        second = await new_session(client, repo)
        await chat(client, second, "trusted work")
        with pytest.raises(JsonRpcInvalidParams, match="is not a wave worktree"):
            await client.request("wave/worktrees/remove", {"path": str(hostile.hooked)})
        after = await client.request("wave/workspace/status", {"cwd": str(repo)})

    # Untrusted: the update and the status name each held-back item; nothing ran.
    assert announced["needsDecision"] is True and announced["trusted"] is False
    assert "cwd" not in announced and announced["root"] == str(repo)
    assert status["cwd"] == str(repo) and status["decision"] is None
    assert {item["kind"] for item in status["heldBack"]} == KINDS
    assert status["heldBack"] == announced["heldBack"]
    held = {(item["kind"], Path(item["path"]).name) for item in status["heldBack"]}
    assert held >= {
        ("hooks", "settings.json"),
        ("sandbox", "settings.json"),
        ("hooks", "settings.local.json"),
        ("sandbox", "settings.local.json"),
        ("agentHooks", f"{AGENT}.md"),
        ("permissionMode", f"{AGENT}.md"),
        ("registryRecord", "x.json"),
    }
    assert all(item["detail"] and "\n" not in item["detail"] for item in status["heldBack"])
    assert untrusted_marks == []  # no WorktreeCreate, agent or WorktreeRemove hook ran
    assert untrusted_worktrees == ["untrusted-wt"]  # made by git, not by the hook
    entered = [
        m["content"]
        for body in fake_model.chat_bodies()
        for m in body["messages"]
        if m["role"] == "tool" and "untrusted-wt" in m["content"]
    ]
    assert entered and "this folder is not trusted yet" in entered[-1]
    # The repository's sandbox.enabled did not remove the prompts; its bypassPermissions agent
    # ran in the session's mode (asked too).
    assert untrusted_prompts == [
        f"Bash: echo untrusted > {hostile.outside}/untrusted.txt",
        "Bash: echo untrusted > agent-untrusted.txt",
    ]

    # Trusted: the decision is kept for the repository root; now the hooks apply.
    assert trusted["trusted"] is True and trusted["heldBack"] == []
    assert told["decision"] is True and told["heldBack"] == []
    assert after["needsDecision"] is False and after["heldBack"] == []
    saved = json.loads((home / ".wave" / "trust.json").read_text())
    assert saved["version"] == 1 and saved["folders"][str(repo)]["trusted"] is True
    assert "worktree-create" in hostile.marks_written()
    assert "agent-hook" in hostile.marks_written()
    # The committed record is never wave-ls's own: no WorktreeRemove hook for it, trusted or not.
    assert "worktree-remove" not in hostile.marks_written()
    assert hostile.hooked.is_dir()
    trusted_prompts = bash_prompts(client, second)
    assert "Bash: echo trusted > agent-trusted.txt" not in trusted_prompts  # bypassPermissions
    if abi_version() >= 1:  # the repository's sandbox now runs Bash without asking
        assert trusted_prompts == []
        assert live_prompts == []  # also in the session that was open at the decision


async def test_refusing_keeps_holding_back_and_says_so(
    fake_model: FakeModelServer, home: Path, hostile: HostileRepo
) -> None:
    fake_model.set_script({"routes": [rounds("refused", hostile.outside), agent_round("refused")]})
    env = server_env(home, fake_model.base_url, **IDENTITY)
    async with wave_client(env, caps=capabilities(permission=True)) as client:
        client.permission_answer = allow_all
        refused = await client.request(
            "wave/workspace/trust", {"cwd": str(hostile.repo / "src"), "trusted": False}
        )
        sid = await new_session(client, hostile.repo)
        update = await client.wait_update(
            lambda u: u["sessionId"] == sid and u["kind"] == "workspaceTrust"
        )
        await chat(client, sid, "refused work")
        prompts = bash_prompts(client, sid)
    assert refused["root"] == str(hostile.repo) and refused["decision"] is False
    assert refused["needsDecision"] is False and refused["heldBack"]
    assert update["decision"] is False and update["needsDecision"] is False
    assert hostile.marks_written() == []
    assert len(prompts) == 2


async def test_a_folder_with_only_untracked_settings_works_as_before(
    fake_model: FakeModelServer, home: Path, cloned_repo: ClonedRepo, tmp_path: Path
) -> None:
    # The user's own settings (written after the clone, untracked): no prompt, no update.
    repo = cloned_repo.repo
    marks = tmp_path / "marks"
    settings = {"hooks": {"WorktreeCreate": [{"command": mark(marks, "mine", "exit 1")}]}}
    (repo / ".wave").mkdir()
    (repo / ".wave" / "settings.json").write_text(json.dumps(settings))
    fake_model.set_script(
        {
            "routes": [
                route(
                    "my work",
                    reply("", call("EnterWorktree", {"name": "mine"})),
                    reply("done"),
                )
            ]
        }
    )
    env = server_env(home, fake_model.base_url, **IDENTITY)
    async with wave_client(env, caps=capabilities(permission=True)) as client:
        client.permission_answer = allow_all
        sid = await new_session(client, repo)
        status = await client.request("wave/workspace/status", {"cwd": str(repo)})
        await chat(client, sid, "my work")
        updates = trust_updates(client, sid)
    assert status["heldBack"] == [] and status["needsDecision"] is False
    assert status["decision"] is None and status["trusted"] is False
    assert updates == []
    assert [p.name for p in marks.iterdir()] == ["mine"]  # the user's hook ran, as before
    assert not (home / ".wave" / "trust.json").exists()


@pytest.mark.parametrize(
    ("method", "params", "message"),
    [
        ("wave/workspace/status", [], "params must be an object"),
        ("wave/workspace/status", {}, "'cwd' is required"),
        ("wave/workspace/status", {"cwd": "relative"}, "must be an absolute path"),
        ("wave/workspace/status", {"cwd": "/no/such/dir"}, "is not a directory"),
        ("wave/workspace/status", {"cwd": "/" + "a" * 5000}, "characters long"),
        ("wave/workspace/trust", {"cwd": "/tmp"}, "'trusted' is required"),
        ("wave/workspace/trust", {"cwd": "/tmp", "trusted": "yes"}, "'trusted' must be a bool"),
    ],
)
async def test_bad_params_are_invalid_params(
    home: Path, method: str, params: Any, message: str
) -> None:
    async with wave_client(server_env(home)) as client:
        with pytest.raises(JsonRpcInvalidParams, match=message):
            await client.request(method, params)
    assert not (home / ".wave" / "trust.json").exists()
