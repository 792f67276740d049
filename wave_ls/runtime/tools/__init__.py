"""The agent's built-in tools, one small class each (see ``docs/tools.md``)."""

from __future__ import annotations

from collections.abc import Iterable

from wave_ls.runtime.core import Tool
from wave_ls.runtime.tools.artifact import ArtifactTool
from wave_ls.runtime.tools.bash import BashTool
from wave_ls.runtime.tools.edit import EditTool
from wave_ls.runtime.tools.glob_tool import GlobTool
from wave_ls.runtime.tools.grep import GrepTool
from wave_ls.runtime.tools.lsp import LspTool
from wave_ls.runtime.tools.plan import ExitPlanModeTool
from wave_ls.runtime.tools.read import ReadTool
from wave_ls.runtime.tools.skill import SkillTool
from wave_ls.runtime.tools.task_list import (
    TaskCreateTool,
    TaskGetTool,
    TaskList,
    TaskListTool,
    TaskUpdateTool,
)
from wave_ls.runtime.tools.web_fetch import WebFetchTool
from wave_ls.runtime.tools.web_search import WebSearchTool
from wave_ls.runtime.tools.write import WriteTool

__all__ = [
    "ArtifactTool",
    "BashTool",
    "EditTool",
    "ExitPlanModeTool",
    "GlobTool",
    "GrepTool",
    "LspTool",
    "ReadTool",
    "SkillTool",
    "TaskCreateTool",
    "TaskGetTool",
    "TaskList",
    "TaskListTool",
    "TaskUpdateTool",
    "WebFetchTool",
    "WebSearchTool",
    "WriteTool",
    "builtin_tools",
    "find_tool",
]


def builtin_tools() -> list[Tool]:
    """Fresh instances of every built-in tool (the session filters them per agent)."""
    return [
        ReadTool(),
        WriteTool(),
        EditTool(),
        BashTool(),
        GrepTool(),
        GlobTool(),
        WebFetchTool(),
        WebSearchTool(),
        SkillTool(),
        LspTool(),
        ArtifactTool(),
        TaskCreateTool(),
        TaskGetTool(),
        TaskUpdateTool(),
        TaskListTool(),
        ExitPlanModeTool(),
    ]


def find_tool(tools: Iterable[Tool], name: str) -> Tool | None:
    """The tool called ``name`` (exact, case-sensitive), or None."""
    return next((tool for tool in tools if tool.name == name), None)
