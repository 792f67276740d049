"""The model-facing names of wave-ls's own tools (PROTOCOL.md), each written once.

Every tool class takes its ``name`` from here, the runtime's built-in tools as well as the
ones of the layers above it (``Agent``, the background-task and worktree tools), so a layer
that cannot import those classes (``agents``: which names a subagent's ``tools`` list may
use) lists the same names without a copy. MCP tools are named by their servers and are not
here. The order is the one tool summaries list them in.

A module of its own, importing nothing of wave-ls: ``agents`` reads it at the server's start
without loading the tools.
"""

from __future__ import annotations

from enum import StrEnum, unique


@unique
class WaveTool(StrEnum):
    """One of wave-ls's own tools; ``.value`` is its name as the model sees it."""

    READ = "Read"
    WRITE = "Write"
    EDIT = "Edit"
    BASH = "Bash"
    GREP = "Grep"
    GLOB = "Glob"
    WEB_FETCH = "WebFetch"
    WEB_SEARCH = "WebSearch"
    SKILL = "Skill"
    LSP = "LSP"
    AGENT = "Agent"
    TASK_CREATE = "TaskCreate"
    TASK_GET = "TaskGet"
    TASK_UPDATE = "TaskUpdate"
    TASK_LIST = "TaskList"
    TASK_OUTPUT = "TaskOutput"
    TASK_STOP = "TaskStop"
    ENTER_WORKTREE = "EnterWorktree"
    EXIT_WORKTREE = "ExitWorktree"
    EXIT_PLAN_MODE = "ExitPlanMode"
    ARTIFACT = "Artifact"


TOOL_NAMES: tuple[str, ...] = tuple(tool.value for tool in WaveTool)
