"""Workspace trust over ACP (issue 25, point 1): a real ``wave-ls acp``, the ``acp`` client.

A cloned repository whose committed ``.wave/settings.json`` switches the session sandbox on
(which would let every command run unasked) is asked about at the first prompt with
``session/request_permission`` ("Trust <root>?"); the answer is kept in
``~/.wave/trust.json`` and asked once; until it is trusted, the sandbox setting is held back
(commands are asked about) and the session says what it held back, once.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.acp_client import AcpAgent, acp_agent
from tests.support.fake_model import FakeModelServer, call, reply, route
from tests.support.git_repos import commit_all, write_files
from tests.support.lsp import server_env
from tests.test_acp import new_session, say

SANDBOX_ON = json.dumps({"sandbox": {"enabled": True}})
SCRIPT = {
    "routes": [
        route(
            "make the file", reply("", call("Bash", {"command": "touch made.txt"})), reply("Made.")
        ),
    ],
    "default": {"content": "Noted."},
}


def committed_sandbox(project: Path) -> Path:
    """The repository ships ``.wave/settings.json`` with ``sandbox.enabled`` (committed)."""
    write_files(project, {".wave/settings.json": SANDBOX_ON})
    commit_all(project, "ship settings")
    return project


def trust_requests(agent: AcpAgent) -> list[dict[str, Any]]:
    return [
        r
        for r in agent.client.permission_requests
        if r["toolCall"]["toolCallId"].startswith("trust-")
    ]


def kept(home: Path) -> dict[str, Any]:
    path = home / ".wave" / "trust.json"
    return json.loads(path.read_text()).get("folders", {}) if path.exists() else {}


def answering(trust: str | None, others: str = "allow_once") -> Any:
    """Answer the trust question with ``trust`` (None: cancelled), any other with ``others``."""

    def answer(request: dict[str, Any]) -> str | None:
        if request["toolCall"]["toolCallId"].startswith("trust-"):
            return trust
        return others

    return answer


async def test_trusting_at_the_first_prompt_applies_the_repositorys_settings_and_is_asked_once(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    committed_sandbox(project)
    fake_model.set_script(SCRIPT)
    async with acp_agent(server_env(home, fake_model.base_url)) as agent:
        agent.client.permission_answer = answering("allow_always")
        sid = await new_session(agent, project)
        assert agent.client.permission_requests == []  # nothing asked before the prompt
        assert await say(agent, sid, "make the file") == "end_turn"
        (request,) = agent.client.permission_requests  # the trust question, and no other
        root = project.resolve()
        assert request["toolCall"]["title"] == f"Trust {root}?"
        assert [(o["kind"], o["name"]) for o in request["options"]] == [
            ("allow_always", "Trust this folder"),
            ("reject_always", "Don't trust"),
        ]
        shown = agent.client.tool_calls(sid)[request["toolCall"]["toolCallId"]]
        assert shown[0]["kind"] == "other" and shown[0]["title"] == f"Trust {root}?"
        question = shown[0]["content"][0]["content"]["text"]
        assert ".wave/settings.json" in question and "sandbox" in question
        assert shown[-1]["status"] == "completed"
        assert (project / "made.txt").exists()  # the trusted sandbox setting: no prompt
        assert kept(home)[str(root)]["trusted"] is True
        assert "holding back" not in agent.client.text(sid)
        other = await new_session(agent, project)
        assert await say(agent, other, "hello again") == "end_turn"
        assert len(agent.client.permission_requests) == 1  # asked once per folder


async def test_not_trusting_holds_the_settings_back_and_says_so_once_per_session(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    committed_sandbox(project)
    fake_model.set_script(SCRIPT)
    async with acp_agent(server_env(home, fake_model.base_url)) as agent:
        agent.client.permission_answer = answering("reject_always", others="reject_once")
        sid = await new_session(agent, project)
        assert await say(agent, sid, "make the file") == "end_turn"
        trust, bash = agent.client.permission_requests  # the sandbox setting did not apply
        assert trust["toolCall"]["toolCallId"].startswith("trust-")
        assert "touch made.txt" in bash["toolCall"]["title"]
        assert not (project / "made.txt").exists()
        assert kept(home)[str(project.resolve())]["trusted"] is False
        said = agent.client.text(sid)
        assert said.count("holding back") == 1 and "you chose not to trust it" in said
        assert "`.wave/settings.json`" in said
        assert said.index("holding back") < said.index("Made.")  # before the turn's answer
        assert await say(agent, sid, "hello") == "end_turn"
        assert agent.client.text(sid).count("holding back") == 1  # once per session
        other = await new_session(agent, project)
        assert await say(agent, other, "hello again") == "end_turn"
        assert len(trust_requests(agent)) == 1  # the refusal is kept: not asked again
        assert agent.client.text(other).count("holding back") == 1


async def test_a_cancelled_trust_question_keeps_nothing_and_is_asked_again(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    committed_sandbox(project)
    fake_model.set_script(SCRIPT)
    async with acp_agent(server_env(home, fake_model.base_url)) as agent:
        agent.client.permission_answer = answering(None)
        sid = await new_session(agent, project)
        assert await say(agent, sid, "hello") == "end_turn"
        assert kept(home) == {}
        assert "nobody answered" in agent.client.text(sid)
        other = await new_session(agent, project)
        assert await say(agent, other, "hello again") == "end_turn"
        assert len(trust_requests(agent)) == 2


async def test_a_folder_with_nothing_held_back_is_never_asked_about(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # Untracked settings are the user's own (written on this machine): they apply untrusted.
    write_files(project, {".wave/settings.json": SANDBOX_ON})
    fake_model.set_script(SCRIPT)
    async with acp_agent(server_env(home, fake_model.base_url)) as agent:
        agent.client.permission_answer = answering("allow_always", others="reject_once")
        sid = await new_session(agent, project)
        assert await say(agent, sid, "make the file") == "end_turn"
        assert agent.client.permission_requests == []
        assert (project / "made.txt").exists()
        assert "holding back" not in agent.client.text(sid)
        assert kept(home) == {}


async def test_slash_trust_asks_again_after_a_refusal_and_the_trust_applies_to_the_session(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    committed_sandbox(project)
    fake_model.set_script(SCRIPT)
    async with acp_agent(server_env(home, fake_model.base_url)) as agent:
        answers = ["reject_always", "allow_always"]
        agent.client.permission_answer = lambda request: (
            answers.pop(0) if request["toolCall"]["toolCallId"].startswith("trust-") else None
        )
        sid = await new_session(agent, project)
        assert await say(agent, sid, "hello") == "end_turn"
        offered = await agent.client.wait_for(
            lambda: [
                u
                for u in agent.client.of(sid, "available_commands_update")
                if "trust" in [c["name"] for c in u["availableCommands"]]
            ]
        )
        assert "send `/trust`" in agent.client.text(sid)
        asked_model = len(fake_model.chat_bodies())
        assert await say(agent, sid, "/trust") == "end_turn"
        assert len(fake_model.chat_bodies()) == asked_model  # answered without a model turn
        assert len(trust_requests(agent)) == 2
        assert kept(home)[str(project.resolve())]["trusted"] is True
        assert "_Trusted `" in agent.client.text(sid)
        assert offered[-1]["availableCommands"][-1]["name"] == "trust"  # after the subagents
        assert await say(agent, sid, "make the file") == "end_turn"
        assert len(agent.client.permission_requests) == 2  # the sandbox applies: no prompt
        assert (project / "made.txt").exists()
