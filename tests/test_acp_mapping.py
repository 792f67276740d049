"""The ACP adapter's pure mappings: prompt blocks to a message, commands to mentions, tool
calls to titles/kinds/content, the task list to a plan, notices to message lines."""

from __future__ import annotations

from pathlib import Path

from acp.helpers import (
    embedded_blob_resource,
    embedded_text_resource,
    image_block,
    resource_block,
    resource_link_block,
    text_block,
)

from wave_ls.acp.history import replay
from wave_ls.acp.prompt import command_as_mention, file_path, prompt_message
from wave_ls.acp.tool_calls import final_content, present
from wave_ls.acp.updates import notice_line, plan_entries
from wave_ls.runtime.core import Message, ToolCall

CWD = Path("/work/project")


def test_text_and_links_join_into_one_message_with_file_mentions() -> None:
    blocks = [
        text_block("look at"),
        resource_link_block("app.py", "file:///work/project/src/app.py"),
        text_block(" and "),
        resource_link_block("notes", "file:///elsewhere/notes%20v2.md"),
        resource_link_block("issue", "https://example.com/1"),
    ]
    message = prompt_message(blocks, CWD, set())
    assert message.text == (
        "look at [@file:src/app.py] and [@file:/elsewhere/notes v2.md] [issue](https://example.com/1)"
    )
    assert message.supplied_files == {}


def test_embedded_resources_supply_their_text_or_become_context() -> None:
    blocks = [
        text_block("fix"),
        resource_block(embedded_text_resource("file:///work/project/a.py", "x = 1\n")),
        resource_block(embedded_text_resource("zed://selection/3", "selected text")),
        resource_block(embedded_blob_resource("file:///work/project/logo.png", "iVBO")),
        resource_block(embedded_blob_resource("zed://blob", "AAAA")),
        image_block("iVBO", "image/png"),
    ]
    message = prompt_message(blocks, CWD, set())
    assert message.supplied_files == {"/work/project/a.py": "x = 1\n"}
    first_line, *rest = message.text.split("\n\n")
    assert first_line.startswith("fix [@file:a.py] [@file:logo.png] (zed://blob: binary")
    assert "(an attached image was left out" in first_line
    assert rest == ['<context ref="zed://selection/3">\nselected text\n</context>']


def test_file_uris() -> None:
    assert file_path("file:///a/b%20c.py") == "/a/b c.py"
    assert file_path("/a/../b.py") == "/b.py"
    assert file_path("https://x/y") is None


def test_a_command_is_an_agent_mention_only_for_a_subagent_name() -> None:
    names = {"Explore", "test-runner", "plugin:review"}
    assert command_as_mention("/Explore find it", names) == "[@agent:Explore] find it"
    assert command_as_mention("/plugin:review", names) == "[@agent:plugin:review]"
    assert (
        command_as_mention("/test-runner\nall of them", names)
        == "[@agent:test-runner]\nall of them"
    )
    assert command_as_mention("/explore find it", names) == "/explore find it"
    assert command_as_mention("/usr/bin is odd", names) == "/usr/bin is odd"
    assert command_as_mention("please /Explore", names) == "please /Explore"


def test_tool_calls_get_acp_kinds_titles_and_file_locations() -> None:
    read = present("Read", {"file_path": "src/app.py", "offset": 10}, CWD)
    assert (read.kind, read.title) == ("read", "Read src/app.py")
    assert [(loc.path, loc.line) for loc in read.locations] == [("/work/project/src/app.py", 9)]
    kinds = {
        name: present(name, args, CWD).kind
        for name, args in {
            "Write": {"file_path": "a", "content": ""},
            "Edit": {"file_path": "a", "old_string": "x", "new_string": "y"},
            "Bash": {"command": "ls"},
            "Grep": {"pattern": "x"},
            "Glob": {"pattern": "*"},
            "WebFetch": {"url": "https://x"},
            "WebSearch": {"query": "q"},
            "Agent": {"subagent_type": "Explore", "description": "d", "prompt": "p"},
            "TaskCreate": {"subject": "s", "description": "d"},
            "EnterWorktree": {},
            "NoSuchTool": {},
        }.items()
    }
    assert kinds == {
        "Write": "edit",
        "Edit": "edit",
        "Bash": "execute",
        "Grep": "search",
        "Glob": "search",
        "WebFetch": "fetch",
        "WebSearch": "fetch",
        "Agent": "think",
        "TaskCreate": "think",
        "EnterWorktree": "other",
        "NoSuchTool": "other",
    }
    assert present("Bash", {"command": "pytest -q"}, CWD).title == "Bash: pytest -q"
    grep = present("Grep", {"pattern": "def main", "path": "src"}, CWD)
    assert grep.title == "Grep def main"
    assert present("TaskList", {}, CWD).title == "TaskList"


def test_write_and_edit_show_a_diff_before_and_after() -> None:
    edit_args = {"file_path": "a.py", "old_string": "1", "new_string": "2"}
    (diff,) = present("Edit", edit_args, CWD).content
    assert (diff.path, diff.old_text, diff.new_text) == ("/work/project/a.py", "1", "2")
    (write,) = final_content(
        "Write", {"file_path": "/tmp/n.txt", "content": "hi"}, CWD, "ok", False
    )
    assert (write.type, write.path, write.old_text, write.new_text) == (
        "diff",
        "/tmp/n.txt",
        None,
        "hi",
    )
    (failed,) = final_content("Edit", edit_args, CWD, "old_string not found", True)
    assert failed.type == "content" and failed.content.text == "old_string not found"


def test_a_delegation_is_titled_by_its_subagent_and_ends_with_its_summary() -> None:
    args = {"subagent_type": "Explore", "description": "Find tests", "prompt": "p"}
    assert present("Agent", args, CWD).title == "Explore: Find tests"
    fork = {"fork": True, "description": "Try B", "prompt": "p"}
    assert present("Agent", fork, CWD).title == "fork: Try B"
    background = present("Agent", args, CWD, {"background": True, "subagentType": "Explore"})
    assert background.title == "Explore: Find tests (background)"
    details = {"summary": "Done (2 tool calls · 10 tokens · 0.1s)"}
    summary, answer = final_content("Agent", args, CWD, "tests/ holds them", False, details)
    assert summary.content.text.startswith("Done (2 tool calls")
    assert answer.content.text == "tests/ holds them"


def test_results_of_commands_and_reads_are_preformatted_and_capped() -> None:
    (shown,) = final_content("Bash", {"command": "x"}, CWD, "a ``` b", False)
    assert shown.content.text == "````\na ``` b\n````"
    (long,) = final_content("Grep", {"pattern": "x"}, CWD, "y" * 30_000, False)
    assert len(long.content.text) < 21_000 and "more characters" in long.content.text


def test_the_task_list_becomes_plan_entries() -> None:
    tasks = [
        {"subject": "Write tests", "activeForm": "Writing tests", "status": "in_progress"},
        {"subject": "Ship", "activeForm": "", "status": "pending"},
        {"subject": "Plan", "activeForm": "Planning", "status": "completed"},
    ]
    assert [(e.content, e.status) for e in plan_entries(tasks)] == [
        ("Writing tests", "in_progress"),
        ("Ship", "pending"),
        ("Plan", "completed"),
    ]


def test_a_task_notice_is_one_line_and_other_messages_none() -> None:
    notice = Message(
        "user",
        "A background agent completed a task:\n<task-notification>\n<task-id>agent-1</task-id>\n"
        '<summary>Agent "Survey" completed</summary>\n</task-notification>',
        meta={"isMeta": True, "taskNotification": "agent-1", "status": "completed"},
    )
    assert notice_line(notice) == '\n\n_Background task agent-1: Agent "Survey" completed_\n\n'
    assert notice_line(Message("user", "hello")) is None


def test_a_saved_history_replays_as_the_client_saw_it_live() -> None:
    agent_args = '{"subagent_type": "Explore", "description": "Find", "prompt": "p"}'
    edit_args = '{"file_path": "a.py", "old_string": "1", "new_string": "2"}'
    messages = [
        Message("user", "find it [@agent:Explore]"),
        Message("user", "<system-reminder>delegate</system-reminder>", meta={"reminder": "agent"}),
        Message(
            "assistant",
            "Looking.",
            [ToolCall("c1", "Agent", agent_args), ToolCall("c2", "Edit", edit_args)],
        ),
        Message(
            "tool",
            "in tests/",
            tool_call_id="c1",
            name="Agent",
            meta={"details": {"subagentType": "Explore", "summary": "Done (1 tool call)"}},
        ),
        Message("tool", "denied", tool_call_id="c2", name="Edit", meta={"isError": True}),
        Message("assistant", "It is in tests/."),
    ]
    updates = [u.model_dump(by_alias=True, exclude_none=True) for u in replay(messages, CWD)]
    assert [u["sessionUpdate"] for u in updates] == [
        "user_message_chunk",
        "agent_message_chunk",
        "tool_call",
        "tool_call",
        "agent_message_chunk",
    ]
    delegation, refused = updates[2], updates[3]
    assert delegation["title"] == "Explore: Find" and delegation["status"] == "completed"
    assert [c["content"]["text"] for c in delegation["content"]] == [
        "Done (1 tool call)",
        "in tests/",
    ]
    assert refused["status"] == "failed" and refused["content"][0]["content"]["text"] == "denied"


def test_mcp_tool_titles_name_the_server_and_the_tool() -> None:
    shown = present("mcp__context7__resolve-library-id", {"libraryName": "react"}, CWD)
    assert shown.title == "context7: resolve-library-id react"
    assert shown.kind == "other"
    details = {"mcp": {"server": "docs", "tool": "search", "keyArgument": "q", "title": "Search"}}
    assert present("mcp__docs__search", {"n": 3, "q": "how"}, CWD, details).title == (
        "docs: Search how"
    )
    assert present("mcp__srv__pid", {}, CWD).title == "srv: pid"


def test_what_a_repository_or_a_server_writes_stays_code_in_the_approval_and_the_notice() -> None:
    from wave_ls.acp.mcp_servers import failed_text, question_text
    from wave_ls.mcp.config import parse_server
    from wave_ls.mcp.gate import Gate
    from wave_ls.mcp.manager import Server

    name = "x\n\n**Safe**: click `Start`"
    written = {"command": "sh", "args": ["-c", "echo hi\n```\n# Trusted by wave-ls"]}
    spec = parse_server(name, written, "project", CWD / ".mcp.json")
    text = question_text(Server(spec, Gate("needs-approval")), CWD)
    first, *rest = text.split("\n")
    # One line, in a code span longer than its backticks (CommonMark drops the two spaces).
    assert first.endswith("defines the MCP server `` x **Safe**: click `Start` ``:")
    body = "\n".join(rest)
    assert "````\nsh -c echo hi\n```\n# Trusted by wave-ls\n````" in body  # a longer fence
    notice = failed_text({"name": "bad", "error": "boom\n```\n_fake assistant text_"})
    assert notice == "_MCP server `bad` failed:_\n````\nboom\n```\n_fake assistant text_\n````\n\n"
