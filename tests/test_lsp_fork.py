"""Fork mode end to end over LSP (SPEC section 9, FORK-1, FORK-2): what the forked subagent
received compared with the parent's own request, where it ran, and the parent's history."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.support import git_repos
from tests.support.fake_model import FakeModelServer, call, reply, route
from tests.support.git_repos import (
    ClonedRepo,
    branches,
    porcelain,
    snapshot,
    worktree_dirs,
)
from tests.test_lsp_delegation import bodies_for, delegate, tool_names
from tests.test_lsp_worktrees import (
    agent_blocks,
    last_results,
    new_session,
    same_path,
    send,
    server,
)

TASK_LIST_TOOLS = {"TaskCreate", "TaskGet", "TaskUpdate", "TaskList"}

# The repository fixtures, found by pytest under these names.
cloned_repo = git_repos.cloned_repo
repo_template = git_repos.repo_template


def fork(prompt: str, description: str = "Try an alternative", **extra: Any) -> dict[str, Any]:
    return call("Agent", {"description": description, "prompt": prompt, "fork": True, **extra})


def main_requests(fake: FakeModelServer) -> list[dict[str, Any]]:
    """The main agent's requests (the only agent that has the Agent tool)."""
    return [body for body in fake.chat_bodies() if "Agent" in tool_names(body)]


def is_agent_mention_reminder(message: dict[str, Any]) -> bool:
    text = message.get("content") or ""
    return message["role"] == "user" and "<system-reminder>" in text and "subagent_type" in text


async def test_without_fork_the_subagent_starts_empty(
    fake_model: FakeModelServer, home: Path, cloned_repo: ClonedRepo
) -> None:
    # FORK-1: fork false (explicit or by default): only the system prompt and the task
    repo = cloned_repo.repo
    fake_model.set_script(
        {
            "routes": [
                route("EARLIER QUESTION", reply("EARLIER ANSWER")),
                route(
                    "now delegate",
                    reply(
                        "",
                        delegate("general-purpose", "DEFAULT TASK"),
                        delegate("general-purpose", "FALSE TASK", fork=False),
                    ),
                    reply("ok"),
                ),
                route("DEFAULT TASK", reply("default done")),
                route("FALSE TASK", reply("false done")),
            ]
        }
    )
    async with server(fake_model, home) as client:
        sid = (await new_session(client, repo))["sessionId"]
        await send(client, sid, "EARLIER QUESTION")
        await send(client, sid, "now delegate")
    for task in ("DEFAULT TASK", "FALSE TASK"):
        [first] = bodies_for(fake_model, task)
        assert [m["role"] for m in first["messages"]] == ["system", "user"]
        assert first["messages"][1]["content"] == task
        assert "EARLIER" not in str(first["messages"])
    assert worktree_dirs(repo) == []  # not isolated either


async def test_fork_continues_a_copy_of_the_conversation_in_its_own_worktree(
    fake_model: FakeModelServer, home: Path, cloned_repo: ClonedRepo
) -> None:
    # FORK-2 in a git repository: the parent's messages up to the call, the main agent's
    # prompt and tools minus Agent and the task list, its own session id and worktree; the
    # parent's history untouched; no @agent reminder in the copy.
    repo = cloned_repo.repo
    (repo / "AGENTS.md").write_text("PROJECT MEMORY LINE\n")
    before = snapshot(repo)
    text = "[@agent:Explore] try two alternatives"
    fake_model.set_script(
        {
            "routes": [
                route(
                    "FIRST QUESTION",
                    reply("Let me look.", call("Read", {"file_path": "README.md"})),
                    reply("first answer"),
                ),
                route(
                    "try two alternatives",
                    reply(
                        "Forking.",
                        fork("FORK CHANGE"),
                        fork("FORK NOCHANGE", subagent_type="Explore"),  # ignored
                    ),
                    reply("forks done"),
                ),
                route(
                    "FORK CHANGE",
                    reply(
                        "",
                        call("Bash", {"command": "pwd -P"}),
                        call("Write", {"file_path": "fork.txt", "content": "fork\n"}),
                    ),
                    reply("fork changed"),
                ),
                route(
                    "FORK NOCHANGE",
                    reply("", call("Bash", {"command": "pwd -P"})),
                    reply("fork looked"),
                ),
            ]
        }
    )
    async with server(fake_model, home) as client:
        sid = (await new_session(client, repo))["sessionId"]
        await send(client, sid, "FIRST QUESTION")
        params = {"sessionId": sid}
        history = (await client.request("wave/session/messages", params))["messages"]
        await send(client, sid, text)
        after = (await client.request("wave/session/messages", params))["messages"]

    [parent] = [b for b in main_requests(fake_model) if text in str(b["messages"])][:1]
    # The reminder was in the parent's request and is the only message missing in the copy.
    inherited = [m for m in parent["messages"] if not is_agent_mention_reminder(m)]
    assert len(inherited) == len(parent["messages"]) - 1
    for prompt in ("FORK CHANGE", "FORK NOCHANGE"):
        first = bodies_for(fake_model, prompt)[0]
        assert first["messages"] == [*inherited, {"role": "user", "content": prompt}]
        assert first["model"] == parent["model"]
        parent_tools = tool_names(parent)
        assert set(parent_tools) >= TASK_LIST_TOOLS
        expected = [n for n in parent_tools if n != "Agent" and n not in TASK_LIST_TOOLS]
        assert tool_names(first) == expected
    # What the copy holds: the same system prompt and memory, the earlier turn in order.
    copy = bodies_for(fake_model, "FORK CHANGE")[0]["messages"]
    assert copy[0]["role"] == "system" and copy[0]["content"] == parent["messages"][0]["content"]
    assert "PROJECT MEMORY LINE" in copy[1]["content"]
    assert [m["role"] for m in copy[2:]] == [
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
        "user",
    ]
    assert copy[2]["content"] == "FIRST QUESTION" and copy[5]["content"] == "first answer"

    # Each fork ran in its own worktree under the main repository.
    [changed_pwd, _] = last_results(bodies_for(fake_model, "FORK CHANGE")[1])
    [looked_pwd] = last_results(bodies_for(fake_model, "FORK NOCHANGE")[1])
    # (a fork hears about its sandbox after its first command's output)
    changed, looked = (Path(pwd.splitlines()[0]) for pwd in (changed_pwd, looked_pwd))
    assert "# Sandbox" in changed_pwd and "HEAD is detached on purpose" in changed_pwd
    assert changed.parent == looked.parent == repo / ".wave" / "worktrees"
    assert changed != looked
    changed_result, looked_result = last_results(main_requests(fake_model)[-1])
    branch = f"worktree-{changed.name}"
    assert changed_result.startswith("fork changed\n\n")
    assert f"Worktree kept: {changed} on branch {branch} — 1 changed file" in changed_result
    assert "NOT applied to the parent directory" in changed_result
    assert worktree_dirs(repo) == [changed] and (changed / "fork.txt").read_text() == "fork\n"
    assert branch in branches(repo)
    assert looked_result.startswith("fork looked\n\n")
    assert "Worktree removed: no changes" in looked_result
    assert not looked.exists() and f"worktree-{looked.name}" not in branches(repo)
    assert snapshot(repo) == before and porcelain(repo) == "?? AGENTS.md\n"

    # The parent's history: unchanged, plus only this turn's own messages.
    assert after[: len(history)] == history
    added = after[len(history) :]
    assert [(m["role"], m.get("meta", {}).get("reminder")) for m in added] == [
        ("user", None),
        ("user", "agent"),
        ("assistant", None),
        ("tool", None),
        ("tool", None),
        ("assistant", None),
    ]
    assert added[0]["content"] == text and added[-1]["content"] == "forks done"
    assert [m["content"] for m in added[3:5]] == [changed_result, looked_result]
    # Each fork has its own session id; the client sees it as a fork.
    blocks = agent_blocks(client)
    assert len(blocks) == 2
    ids = {b["details"]["subagentId"] for b in blocks}
    assert len(ids) == 2 and all(re.fullmatch(r"sub-[0-9a-f]{8}", i) for i in ids)
    assert {b["details"]["subagentType"] for b in blocks} == {"fork"}


async def test_fork_outside_git_runs_in_place_and_says_so(
    fake_model: FakeModelServer, home: Path, tmp_path: Path
) -> None:
    # FORK-2 without git: in place, said in the result; an explicit isolation request
    # is never silently dropped (WT-11)
    folder = tmp_path / "plain"
    folder.mkdir()
    fake_model.set_script(
        {
            "routes": [
                route(
                    "fork here",
                    reply(
                        "",
                        fork("IN PLACE FORK"),
                        fork("ISOLATED FORK", isolation="worktree"),
                    ),
                    reply("ok"),
                ),
                route(
                    "IN PLACE FORK",
                    reply(
                        "",
                        call("Bash", {"command": "pwd -P"}),
                        call("Write", {"file_path": "forked.txt", "content": "in place\n"}),
                    ),
                    reply("forked in place"),
                ),
                route("ISOLATED FORK", reply("must never run")),
            ]
        }
    )
    async with server(fake_model, home) as client:
        sid = (await new_session(client, folder))["sessionId"]
        await send(client, sid, "fork here")

    [pwd, _] = last_results(bodies_for(fake_model, "IN PLACE FORK")[1])
    assert same_path(pwd, folder)
    assert (folder / "forked.txt").read_text() == "in place\n"
    in_place, isolated = last_results(main_requests(fake_model)[-1])
    assert in_place.startswith("forked in place\n\n")
    assert f"The fork ran in place in {folder}" in in_place
    assert "not inside a git repository" in in_place
    assert isolated.startswith("Agent delegation failed: Cannot run in an isolated worktree")
    assert bodies_for(fake_model, "ISOLATED FORK") == []
    assert not (folder / ".wave").exists()


async def test_background_forks_report_their_worktree_or_that_they_ran_in_place(
    fake_model: FakeModelServer, home: Path, cloned_repo: ClonedRepo, tmp_path: Path
) -> None:
    # FORK-2 with run_in_background (WTC-4): the copy is cut at the call; the completion
    # notice carries the worktree summary, or says the fork ran in place.
    repo = cloned_repo.repo
    folder = tmp_path / "plain"
    folder.mkdir()
    notice = "A background agent completed a task:"
    fake_model.set_script(
        {
            "routes": [
                route(
                    "fork in the background",
                    reply("", fork("BG FORK", run_in_background=True)),
                    reply("started"),
                ),
                route(
                    "BG FORK",
                    reply("", call("Write", {"file_path": "bg.txt", "content": "bg\n"})),
                    reply("bg fork done", delay=0.3),
                ),
                route(notice, reply("noted")),
            ]
        }
    )

    def notices() -> list[str]:
        found = []
        for body in main_requests(fake_model):
            last = body["messages"][-1]
            if last["role"] == "user" and last["content"].startswith(notice):
                found.append(last["content"])
        return found

    def noted(sid: str) -> Callable[[dict[str, Any]], bool]:
        return lambda u: (
            u.get("sessionId") == sid and u["kind"] == "turnEnded" and u["text"] == "noted"
        )

    async with server(fake_model, home) as client:
        for cwd in (repo, folder):
            sid = (await new_session(client, cwd))["sessionId"]
            await send(client, sid, "fork in the background")
            await client.wait_update(noted(sid))  # the turn the notice started answered it

    in_git, in_place = notices()
    [worktree] = worktree_dirs(repo)
    assert (worktree / "bg.txt").read_text() == "bg\n" and not (repo / "bg.txt").exists()
    assert "<status>completed</status>" in in_git and "<result>bg fork done</result>" in in_git
    assert f"<worktree>Worktree kept: {worktree} on branch worktree-{worktree.name}" in in_git
    assert (folder / "bg.txt").read_text() == "bg\n"
    assert "<status>completed</status>" in in_place
    assert f"The fork ran in place in {folder}" in in_place
    # The copy: the parent's request that made the call, then the fork prompt.
    [parent, *_] = [b for b in main_requests(fake_model) if b["messages"][-1]["role"] == "user"]
    first = bodies_for(fake_model, "BG FORK")[0]
    assert first["messages"] == [*parent["messages"], {"role": "user", "content": "BG FORK"}]
