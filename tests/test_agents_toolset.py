"""Tool resolution and the tool summary the model reads (SPEC section 7)."""

from __future__ import annotations

from wave_ls.agents import (
    ALL_TOOL_NAMES,
    NEVER_FOR_SUBAGENTS,
    AgentDefinition,
    resolve_tools,
    tool_summary,
)

GRANTABLE = [name for name in ALL_TOOL_NAMES if name not in NEVER_FOR_SUBAGENTS]


def defn(
    tools: tuple[str, ...] | None = None, disallowed: tuple[str, ...] | None = None
) -> AgentDefinition:
    return AgentDefinition("a", "d", "p", tools=tools, disallowed_tools=disallowed)


def test_tool_names_are_the_protocol_names() -> None:
    # Each is a registered tool's name (tests/test_tool_targets.py), none twice.
    assert len(set(ALL_TOOL_NAMES)) == len(ALL_TOOL_NAMES)
    assert {"Agent", "TaskCreate", "TaskGet", "TaskUpdate", "TaskList"} == NEVER_FOR_SUBAGENTS


def test_no_restrictions_gives_every_tool_but_the_never_given_ones() -> None:
    # Section 7 "Always": never the task-list tools nor Agent (one level of nesting).
    assert resolve_tools(ALL_TOOL_NAMES, None, None) == GRANTABLE


def test_whitelist_keeps_the_order_of_available() -> None:  # LOAD-4
    assert resolve_tools(ALL_TOOL_NAMES, ["Grep", "Read"], None) == ["Read", "Grep"]


def test_whitelist_cannot_grant_never_given_tools() -> None:
    assert resolve_tools(ALL_TOOL_NAMES, ["Read", "Agent", "TaskList"], None) == ["Read"]


def test_blacklist_removes_tools() -> None:  # FM-2
    got = resolve_tools(ALL_TOOL_NAMES, None, ["Edit", "Write"])
    assert "Edit" not in got and "Write" not in got
    assert got == [name for name in GRANTABLE if name not in ("Edit", "Write")]


def test_whitelist_then_blacklist() -> None:  # FM-3: a tool on both lists is unavailable
    assert resolve_tools(ALL_TOOL_NAMES, ["Read", "Edit", "Bash"], ["Edit"]) == ["Read", "Bash"]


def test_unknown_names_are_ignored_on_both_lists() -> None:  # FM-5
    assert resolve_tools(ALL_TOOL_NAMES, ["Read", "Nope"], ["Nope2"]) == ["Read"]
    assert resolve_tools(ALL_TOOL_NAMES, None, ["Nope"]) == GRANTABLE


def test_star_whitelist_means_all() -> None:
    assert resolve_tools(ALL_TOOL_NAMES, ["*"], ["Bash"]) == [n for n in GRANTABLE if n != "Bash"]


def test_available_can_be_any_subset_and_is_deduplicated() -> None:
    # The runtime may offer fewer tools (or extra ones such as MCP tools).
    available = ["Read", "mcp_search", "Read", "Agent", "Bash"]
    assert resolve_tools(available, None, None) == ["Read", "mcp_search", "Bash"]
    assert resolve_tools(available, ["Bash", "Write"], None) == ["Bash"]


def test_empty_whitelist_gives_no_tools() -> None:
    assert resolve_tools(ALL_TOOL_NAMES, [], None) == []
    assert tool_summary(defn(tools=())) == "None"


def test_summary_for_a_whitelist_is_the_resolved_list() -> None:
    assert tool_summary(defn(tools=("Grep", "Read"))) == "Read, Grep"
    assert tool_summary(defn(tools=("Read", "Agent", "Frob", "Bash"), disallowed=("Bash",))) == (
        "Read"
    )


def test_summary_for_a_blacklist_alone_is_all_except_never_star() -> None:  # FM-4
    summary = tool_summary(defn(disallowed=("Write", "Edit", "Nope", "Write")))
    assert summary == "All except Write, Edit"
    assert "*" not in summary


def test_summary_leaves_out_never_given_tools_from_the_except_list() -> None:
    assert tool_summary(defn(disallowed=("Agent", "TaskCreate", "Edit"))) == "All except Edit"
    assert tool_summary(defn(disallowed=("Agent", "Unknown"))) == "All tools"


def test_summary_without_restrictions() -> None:
    assert tool_summary(defn()) == "All tools"
    assert tool_summary(defn(tools=("*",))) == "All tools"
    assert tool_summary(defn(tools=("*",), disallowed=("Bash",))) == "All except Bash"
