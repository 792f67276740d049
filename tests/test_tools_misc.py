"""Skill, LSP, Artifact, the task list, ExitPlanMode and the tool registry."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from wave_ls.runtime.core import Tool, ToolContext, ToolError, tool_schema
from wave_ls.runtime.services import Services
from wave_ls.runtime.tools import (
    ArtifactTool,
    ExitPlanModeTool,
    LspTool,
    SkillTool,
    TaskCreateTool,
    TaskGetTool,
    TaskList,
    TaskListTool,
    TaskUpdateTool,
    builtin_tools,
    find_tool,
)


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    (tmp_path / "project").mkdir()
    (tmp_path / "home").mkdir()
    return ToolContext(
        cwd=tmp_path / "project",
        home=tmp_path / "home",
        session_id="s1",
        services=Services(task_list=TaskList()),
    )


# ------------------------------------------------------------------ registry

PROTOCOL_NAMES = {
    "Read", "Write", "Edit", "Bash", "Grep", "Glob", "WebFetch", "WebSearch", "Skill", "LSP",
    "Artifact", "TaskCreate", "TaskGet", "TaskUpdate", "TaskList", "ExitPlanMode",
}  # fmt: skip


def test_builtin_tools_are_fresh_complete_and_well_formed() -> None:
    tools = builtin_tools()
    assert {tool.name for tool in tools} == PROTOCOL_NAMES
    assert all(isinstance(tool, Tool) for tool in tools)
    assert not any(a is b for a, b in zip(tools, builtin_tools(), strict=True))
    for tool in tools:
        schema = tool_schema(tool)["function"]
        assert schema["parameters"]["type"] == "object"
        assert set(schema["parameters"].get("required", [])) <= set(
            schema["parameters"]["properties"]
        )
        assert len(tool.description) > 80, tool.name
    effects = {tool.name: tool.effect for tool in tools}
    assert {name for name, effect in effects.items() if effect != "read"} == {
        "Write",
        "Edit",
        "Bash",
        "ExitPlanMode",  # session tools: they act on the session, never on the project
        "Artifact",
        "TaskCreate",
        "TaskGet",
        "TaskUpdate",
        "TaskList",
    }
    assert {effects["Write"], effects["Edit"], effects["Bash"]} == {"edit", "execute"}
    # Only what changes files or runs commands waits for the calls before it.
    assert {tool.name for tool in tools if not tool.concurrency_safe} == {"Write", "Edit", "Bash"}


def test_claude_code_parameter_names() -> None:
    tools = builtin_tools()

    def props(name: str) -> set[str]:
        tool = find_tool(tools, name)
        assert tool is not None
        return set(tool.parameters["properties"])

    assert props("Read") == {"file_path", "offset", "limit"}
    assert props("Edit") == {"file_path", "old_string", "new_string", "replace_all"}
    assert props("Bash") == {"command", "timeout", "description", "run_in_background"}
    assert {"pattern", "path", "glob", "output_mode", "-i", "-n", "-A", "-B", "-C"} <= props("Grep")


def test_find_tool() -> None:
    tools = builtin_tools()
    found = find_tool(tools, "Grep")
    assert found is not None and found.name == "Grep"
    assert find_tool(tools, "grep") is None
    assert find_tool(tools, "Agent") is None


# ------------------------------------------------------------------ Skill


def write_skill(base: Path, name: str, text: str) -> Path:
    folder = base / ".wave" / "skills" / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(text)
    return folder


async def test_skill_loads_instructions_without_frontmatter(ctx: ToolContext) -> None:
    folder = write_skill(
        ctx.cwd,
        "release",
        "---\nname: release\ndescription: Cut a release\n---\n\nBump the version in $ARGUMENTS.\n",
    )
    result = await SkillTool().run({"skill": "release", "args": "pyproject.toml"}, ctx)
    assert f"Base directory for this skill: {folder}" in result.content
    assert result.content.endswith("Bump the version in pyproject.toml.")
    assert "description: Cut a release" not in result.content
    assert result.short_result == "Loaded skill release"


async def test_skill_project_wins_over_user_and_user_is_found(ctx: ToolContext) -> None:
    write_skill(ctx.cwd, "fmt", "project fmt")
    write_skill(ctx.home, "fmt", "user fmt")
    write_skill(ctx.home, "only-user", "user only")
    assert (await SkillTool().run({"skill": "fmt"}, ctx)).content.endswith("project fmt")
    user = await SkillTool().run({"skill": "only-user", "args": "x"}, ctx)
    assert user.content.endswith("user only\n\nARGUMENTS: x")


async def test_unknown_skill_lists_the_available_ones(ctx: ToolContext) -> None:
    write_skill(ctx.cwd, "alpha", "a")
    write_skill(ctx.home, "beta", "b")
    with pytest.raises(ToolError, match=r"Unknown skill 'gamma'. Available skills: alpha, beta"):
        await SkillTool().run({"skill": "gamma"}, ctx)
    with pytest.raises(ToolError, match="Unknown skill"):
        await SkillTool().run({"skill": "../../etc"}, ctx)


# ------------------------------------------------------------------ LSP


class FakeEditor:
    """Stands in for the editor's language servers (an outside collaborator)."""

    def __init__(self, answers: dict[str, Any]) -> None:
        self.answers = answers
        self.calls: list[tuple[str, dict[str, Any]]] = []

    async def request(self, operation: str, params: dict[str, Any]) -> Any:
        self.calls.append((operation, params))
        return self.answers.get(operation)


async def test_lsp_without_the_service_is_a_clear_error(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="LSP is not available: the editor did not offer"):
        await LspTool().run(
            {"operation": "hover", "filePath": "a.py", "line": 1, "character": 1}, ctx
        )


async def test_lsp_definition_converts_positions_and_formats_locations(ctx: ToolContext) -> None:
    target = (ctx.cwd / "src" / "lib.py").as_uri()
    editor = FakeEditor(
        {
            "goToDefinition": [
                {"uri": target, "range": {"start": {"line": 9, "character": 4}, "end": {}}}
            ]
        }
    )
    ctx.services = replace(ctx.services, lsp=editor)
    result = await LspTool().run(
        {"operation": "goToDefinition", "filePath": "app.py", "line": 3, "character": 7}, ctx
    )
    assert result.content == "src/lib.py:10:5"
    assert editor.calls == [
        (
            "goToDefinition",
            {
                "textDocument": {"uri": (ctx.cwd / "app.py").as_uri()},
                "position": {"line": 2, "character": 6},
            },
        )
    ]


async def test_lsp_hover_symbols_and_empty_answers(ctx: ToolContext) -> None:
    editor = FakeEditor(
        {
            "hover": {"contents": {"kind": "markdown", "value": "def f() -> int"}},
            "documentSymbol": [
                {
                    "name": "App",
                    "kind": 5,
                    "range": {"start": {"line": 0}},
                    "selectionRange": {"start": {"line": 0}},
                    "children": [
                        {"name": "run", "kind": 6, "selectionRange": {"start": {"line": 4}}}
                    ],
                }
            ],
            "workspaceSymbol": [],
        }
    )
    ctx.services = replace(ctx.services, lsp=editor)
    hover = await LspTool().run(
        {"operation": "hover", "filePath": "a.py", "line": 1, "character": 1}, ctx
    )
    assert hover.content == "def f() -> int"
    symbols = await LspTool().run({"operation": "documentSymbol", "filePath": "a.py"}, ctx)
    assert symbols.content == "Class App (line 1)\n  Method run (line 5)"
    nothing = await LspTool().run(
        {"operation": "workspaceSymbol", "filePath": "", "query": "zzz"}, ctx
    )
    assert nothing.content == "No results"


async def test_lsp_validates_operation_and_position(ctx: ToolContext) -> None:
    ctx.services = replace(ctx.services, lsp=FakeEditor({}))
    with pytest.raises(ToolError, match="Parameter 'operation' must be one of"):
        await LspTool().run({"operation": "rename", "filePath": "a.py"}, ctx)
    with pytest.raises(ToolError, match="Missing required parameter 'line' for hover"):
        await LspTool().run({"operation": "hover", "filePath": "a.py"}, ctx)


# ------------------------------------------------------------------ Artifact


async def test_artifact_goes_to_the_session_sink(ctx: ToolContext) -> None:
    sink: list[dict[str, Any]] = []
    ctx.services = replace(ctx.services, artifacts=sink)
    result = await ArtifactTool().run(
        {"title": "Design", "content": "# A\nB\n", "kind": "markdown"}, ctx
    )
    assert sink == [result.details["artifact"]]
    assert sink[0]["title"] == "Design" and sink[0]["sessionId"] == "s1"
    assert result.content == 'Artifact "Design" (markdown, 2 lines) is shown to the user.'


async def test_artifact_without_a_sink_is_kept_in_the_result(ctx: ToolContext) -> None:
    result = await ArtifactTool().run({"title": "Diagram", "content": "graph TD"}, ctx)
    assert result.details["artifact"]["content"] == "graph TD"
    assert result.details["artifact"]["kind"] == "markdown"
    with pytest.raises(ToolError, match="Missing required parameter 'content'"):
        await ArtifactTool().run({"title": "x"}, ctx)


# ------------------------------------------------------------------ task list


async def test_task_list_round_trip(ctx: ToolContext) -> None:
    create = TaskCreateTool()
    first = await create.run(
        {"subject": "Run tests", "description": "pytest -q", "activeForm": "Running tests"}, ctx
    )
    assert first.content == "Task #1 created successfully: Run tests"
    await create.run({"subject": "Fix bug", "description": "the crash"}, ctx)
    assert ctx.services.task_list is not None and len(ctx.services.task_list.to_json()) == 2

    await TaskUpdateTool().run({"taskId": "1", "status": "in_progress"}, ctx)
    await TaskUpdateTool().run({"taskId": "2", "addBlockedBy": ["1"], "owner": "me"}, ctx)
    listing = await TaskListTool().run({}, ctx)
    assert listing.content == (
        "#1 [in_progress] Run tests\n#2 [pending] Fix bug (owner: me) [blocked by #1]"
    )
    got = await TaskGetTool().run({"taskId": 2}, ctx)
    assert "Task #2: Fix bug\nStatus: pending\nDescription: the crash" in got.content
    assert "Blocked by: #1" in got.content

    await TaskUpdateTool().run({"taskId": "1", "status": "completed"}, ctx)
    listing = await TaskListTool().run({}, ctx)
    # A completed blocker no longer blocks.
    assert listing.content == "#1 [completed] Run tests\n#2 [pending] Fix bug (owner: me)"
    assert listing.short_result == "2 tasks (1 completed)"

    await TaskUpdateTool().run({"taskId": "1", "status": "deleted"}, ctx)
    listing = await TaskListTool().run({}, ctx)
    assert listing.content == "#2 [pending] Fix bug (owner: me)"


async def test_task_errors(ctx: ToolContext) -> None:
    assert (await TaskListTool().run({}, ctx)).content == "No tasks found"
    with pytest.raises(ToolError, match="Task not found: 9"):
        await TaskGetTool().run({"taskId": "9"}, ctx)
    await TaskCreateTool().run({"subject": "A", "description": "a"}, ctx)
    with pytest.raises(ToolError, match="Parameter 'status' must be one of"):
        await TaskUpdateTool().run({"taskId": "1", "status": "done"}, ctx)
    with pytest.raises(ToolError, match="Task not found: 5"):
        await TaskUpdateTool().run({"taskId": "1", "addBlocks": ["5"]}, ctx)
    with pytest.raises(ToolError, match="Missing required parameter 'description'"):
        await TaskCreateTool().run({"subject": "B"}, ctx)


# ------------------------------------------------------------------ ExitPlanMode


class PlanMode:
    def __init__(self, approve: bool) -> None:
        self.approve = approve
        self.plans: list[str] = []

    async def exit(self, plan: str, tool_call_id: str = "") -> bool:
        self.plans.append(plan)
        return self.approve


async def test_exit_plan_mode_asks_for_approval(ctx: ToolContext) -> None:
    mode = PlanMode(approve=True)
    ctx.services = replace(ctx.services, plan_mode=mode)
    result = await ExitPlanModeTool().run({"plan": "1. Edit app.py"}, ctx)
    assert mode.plans == ["1. Edit app.py"]
    assert "approved" in result.content and not result.is_error
    ctx.services = replace(ctx.services, plan_mode=PlanMode(approve=False))
    refused = await ExitPlanModeTool().run({"plan": "1. Edit app.py"}, ctx)
    assert refused.is_error and "Stay in plan mode" in refused.content


async def test_exit_plan_mode_without_the_service_returns_the_plan(ctx: ToolContext) -> None:
    result = await ExitPlanModeTool().run({"plan": "## Plan\n- step"}, ctx)
    assert result.content.endswith("## Plan\n- step")
    assert "no plan-mode approval step" in result.content
