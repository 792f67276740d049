"""The Neovim plugin (``editors/neovim``) end to end: headless Neovim 0.11, a real
``wave-ls`` started by the plugin, the offline model. Each test runs one Lua scenario from
``tests/neovim/`` (what it checks is written there)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.fake_model import FakeModelServer, call, reply, route
from tests.support.git_repos import init_repo
from tests.support.neovim import nvim_env, run_scenario

REVIEWER = """\
---
name: reviewer
description: Reviews a change for bugs.
tools: Read, Grep
---
You review changes.
"""


def write_agent(root: Path, name: str, text: str) -> None:
    folder = root / ".wave" / "agents"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.md").write_text(text, encoding="utf-8")


def test_setup_starts_one_client_per_root_and_attaches_to_agent_files(
    project: Path, home: Path, tmp_path: Path
) -> None:
    write_agent(project, "reviewer", REVIEWER)
    write_agent(home, "mine", REVIEWER.replace("reviewer", "mine"))
    other = init_repo(tmp_path / "other", {"README.md": "# other\n"})
    write_agent(other, "helper", REVIEWER.replace("reviewer", "helper"))
    env = nvim_env(home, WAVE_TEST_OTHER_PROJECT=str(other))
    run_scenario("setup_and_attach", project, env)


def test_at_completion_offers_explore_first_and_shows_the_tag_as_a_mention(
    project: Path, home: Path
) -> None:
    write_agent(project, "reviewer", REVIEWER)
    run_scenario("mention_completion", project, nvim_env(home))


def test_an_agents_color_on_its_completion_item_mention_and_block(
    project: Path, home: Path
) -> None:
    # Issue 24: the frontmatter color, from the real server's completion and the block's
    # details (with the turn-limit and model-tier notes).
    painter = REVIEWER.replace("reviewer", "painter").replace("tools: Read, Grep", "color: cyan")
    write_agent(project, "painter", painter)
    run_scenario("agent_colors", project, nvim_env(home))


def slow(**step: Any) -> dict[str, Any]:
    return {**step, "chunk_size": 6, "chunk_delay": 0.03}


DELEGATION = {
    "routes": [
        route(
            "where are the tests?",
            slow(
                content="I'll ask Explore to look.",
                tool_calls=[
                    call(
                        "Agent",
                        {
                            "subagent_type": "Explore",
                            "description": "Find the tests",
                            "prompt": "Find the test files for app.py",
                        },
                    )
                ],
            ),
            slow(content="The tests are in tests/test_app.py; test_answer checks answer()."),
        ),
        route(
            "Find the test files for app.py",
            reply("", call("Grep", {"pattern": "def test"}), delay=0.3),
            reply("Found tests/test_app.py with test_answer.", delay=0.3),
        ),
    ]
}


def test_a_delegating_turn_streams_and_its_agent_block_ends_with_the_summary(
    project: Path, home: Path
) -> None:
    with FakeModelServer(DELEGATION) as model:
        run_scenario("chat_delegation", project, nvim_env(home, model))


PERMISSIONS = {
    "routes": [
        route(
            "fix the answer",
            reply(
                "",
                call(
                    "Edit",
                    {
                        "file_path": "src/app.py",
                        "old_string": "return 41",
                        "new_string": "return 42",
                    },
                ),
            ),
            reply(
                "",
                call(
                    "Edit",
                    {
                        "file_path": "src/app.py",
                        "old_string": "def answer()",
                        "new_string": "def answer_value()",
                    },
                ),
            ),
            reply("", call("Bash", {"command": "touch made.txt"})),
            reply("Both edits are made; I could not run it."),
        )
    ]
}


def test_permission_prompt_answered_through_vim_ui_select_with_a_diff_preview(
    project: Path, home: Path
) -> None:
    with FakeModelServer(PERMISSIONS) as model:
        run_scenario("permission_prompt", project, nvim_env(home, model))


STORY = {
    "routes": [
        route(
            "write a long story",
            reply(
                "Once upon a time " + "there was a server. " * 200 + "The end.", chunk_delay=0.05
            ),
        ),
        route("are you there?", reply("Still here.")),
    ]
}


def test_wave_stop_cancels_the_turn_and_the_chat_goes_on(project: Path, home: Path) -> None:
    with FakeModelServer(STORY) as model:
        run_scenario("stop", project, nvim_env(home, model))


def test_checkhealth_reports_server_endpoint_and_agents(project: Path, home: Path) -> None:
    write_agent(project, "reviewer", REVIEWER)
    with FakeModelServer({"routes": []}) as model:
        run_scenario("health", project, nvim_env(home, model))


CONVERSATIONS = {
    "routes": [
        route("first question", reply("first answer")),
        route("follow up", reply("follow-up answer")),
        route("second question", reply("second answer")),
        route("after restart", reply("back again")),
    ]
}


def test_sessions_are_listed_and_resumed_after_a_restart(project: Path, home: Path) -> None:
    with FakeModelServer(CONVERSATIONS) as model:
        env = nvim_env(home, model)
        first = run_scenario("sessions_save", project, env)
        saved = first.stdout.split("SESSION ", 1)[1].split()[0]
        run_scenario("sessions_resume", project, {**env, "WAVE_TEST_SESSION": saved})
        follow_up = next(
            body
            for body in model.chat_bodies()
            if body["messages"][-1].get("content") == "follow up"
        )
        after_restart = next(
            body
            for body in model.chat_bodies()
            if body["messages"][-1].get("content") == "after restart"
        )
    for body in (after_restart, follow_up):
        said = [m.get("content") for m in body["messages"]]
        assert "first question" in said
        assert "first answer" in said


def test_worktrees_listed_diffed_in_a_tab_and_removed_after_confirmation(
    project: Path, home: Path
) -> None:
    run_scenario("worktrees", project, nvim_env(home))


WATCHER = {
    "routes": [
        route(
            "start the watcher",
            reply("", call("Bash", {"command": "sleep 30", "run_in_background": True})),
            reply("Watching."),
        )
    ],
    "default": {"content": "Noted."},
}


def test_mode_switch_and_stopping_a_background_task(project: Path, home: Path) -> None:
    with FakeModelServer(WATCHER) as model:
        run_scenario("mode_and_tasks", project, nvim_env(home, model))


def test_added_to_the_runtimepath_later_with_setup_and_its_help_tags(
    project: Path, home: Path
) -> None:
    run_scenario("runtimepath_and_help", project, nvim_env(home), on_runtimepath=False)
