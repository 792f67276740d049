"""The permission policy: may this tool call run, must a person be asked, or is it refused?

``decide`` is consulted by the conversation loop before every tool call. It is pure: the
loop turns ``ask`` into a ``PermissionAsker`` round trip and ``deny`` into an error result
the model reads. The rules, by mode (see docs/memory-and-permissions.md):

==================  =========  ===========  ============  ==========================
tool                 default    acceptEdits  plan          bypassPermissions
==================  =========  ===========  ============  ==========================
read-only tools      allow      allow        allow         allow
session tools        allow      allow        allow         allow
Write/Edit           ask        allow        deny [1]      allow
Bash, read-only      allow      allow        allow         allow
Bash, other          ask        ask          deny          allow
Enter/ExitWorktree   allow      allow        deny          allow
anything else        ask        ask          deny          allow
==================  =========  ===========  ============  ==========================

[1] except the session's plan file, when the caller names it (``plan_file``).
``read_only_bash=True`` (Explore/Plan subagents) applies the plan-mode Bash rule in every
mode, ``bypassPermissions`` included. ``sandboxed_bash=True`` (the user turned the session's
sandbox on and it confines this agent's commands) allows every Bash command in ``default``
and ``acceptEdits`` without asking; plan mode and ``read_only_bash`` are unchanged.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from wave_ls.runtime.bash_safety import READ_ONLY_EXAMPLES, is_read_only_command
from wave_ls.runtime.core import PermissionMode, PermissionRequest

Action = Literal["allow", "ask", "deny"]

EDIT_TOOLS = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})
"""Tools that change files; ``acceptEdits`` allows them without asking."""

SESSION_TOOLS = frozenset(
    {
        "TaskCreate",
        "TaskGet",
        "TaskUpdate",
        "TaskList",
        "TaskOutput",
        "TaskStop",
        "Agent",
        "Artifact",
        "ExitPlanMode",
        "EnterPlanMode",
        "Skill",
    }
)
"""Tools that act on the session itself (task list, delegation, plan approval), never on the
project's files: allowed in every mode. A subagent's own tool calls are decided again under
its own mode, so delegating is no way around the policy."""

WORKTREE_TOOLS = frozenset({"EnterWorktree", "ExitWorktree"})
"""Create or leave a git worktree: an explicit user-driven step, but a change: not in plan."""

PLAN_MODE_EDIT_DENIED = (
    "Plan mode is active: file changes are not allowed until the plan is approved "
    "(use ExitPlanMode)."
)


@dataclass(frozen=True)
class Verdict:
    """What the policy says about one tool call; ``message`` explains an ask or a deny."""

    action: Action
    message: str = ""


ALLOW = Verdict("allow")


def decide(
    mode: PermissionMode,
    tool_name: str,
    args: dict[str, Any],
    *,
    read_only: bool,
    read_only_bash: bool = False,
    sandboxed_bash: bool = False,
    plan_file: Path | None = None,
    cwd: Path | None = None,
) -> Verdict:
    """The verdict for calling ``tool_name`` with ``args`` in ``mode``.

    ``read_only`` is the tool's own flag (Read, Grep, Glob, WebFetch, ... always run).
    ``read_only_bash`` enforces the plan-mode Bash rule outside plan mode (Explore/Plan).
    ``sandboxed_bash``: Bash runs in the session's sandbox, so it is not asked about.
    ``plan_file`` is the one file Write/Edit may touch in plan mode; a relative
    ``file_path`` is resolved against ``cwd``.
    """
    if read_only:
        return ALLOW
    if tool_name == "Bash":
        return _decide_bash(mode, str(args.get("command") or ""), read_only_bash, sandboxed_bash)
    if mode == "bypassPermissions" or tool_name in SESSION_TOOLS:
        return ALLOW
    if tool_name in EDIT_TOOLS:
        if mode == "plan":
            if plan_file is not None and _same_file(args, plan_file, cwd):
                return ALLOW
            return Verdict("deny", PLAN_MODE_EDIT_DENIED)
        if mode == "acceptEdits":
            return ALLOW
        return Verdict("ask", permission_summary(tool_name, args))
    if mode == "plan":
        return Verdict(
            "deny",
            f"Plan mode is active: {tool_name} is not allowed until the plan is approved "
            "(use ExitPlanMode). Only read-only tools and read-only Bash commands can run.",
        )
    if tool_name in WORKTREE_TOOLS:
        return ALLOW
    return Verdict("ask", permission_summary(tool_name, args))


def _decide_bash(
    mode: PermissionMode, command: str, read_only_bash: bool, sandboxed: bool = False
) -> Verdict:
    enforce = read_only_bash or mode == "plan"
    if mode == "bypassPermissions" and not enforce:
        return ALLOW
    ok, reason = is_read_only_command(command)
    if ok:
        return ALLOW
    if enforce:
        who = "Plan mode is active" if mode == "plan" else "This agent is read-only"
        return Verdict(
            "deny",
            f"{who}: only read-only Bash commands are allowed. Refused: `{_one_line(command)}`"
            f" ({reason}). Use commands that only read, such as {READ_ONLY_EXAMPLES}, "
            "without output redirection.",
        )
    if sandboxed:
        return ALLOW
    return Verdict("ask", f"Bash: {_one_line(command)} ({reason})")


def _same_file(args: dict[str, Any], plan_file: Path, cwd: Path | None) -> bool:
    raw = args.get("file_path")
    if not isinstance(raw, str) or not raw:
        return False
    path = Path(raw).expanduser()
    if not path.is_absolute():
        if cwd is None:
            return False
        path = cwd / path
    # abspath normalises "..", so "plans/../src/app.py" is not the plan file.
    return os.path.abspath(path) == os.path.abspath(plan_file.expanduser())


def permission_summary(tool_name: str, args: dict[str, Any]) -> str:
    """One line a person reads before approving: "Edit src/app.py", "Bash: rm -rf build"."""
    if tool_name == "Bash":
        return f"Bash: {_one_line(str(args.get('command') or ''))}"
    for key in ("file_path", "notebook_path", "path", "url", "pattern", "query"):
        value = args.get(key)
        if isinstance(value, str) and value:
            return f"{tool_name} {_one_line(value)}"
    if tool_name == "Agent":
        kind = args.get("subagent_type") or "agent"
        return f"Agent ({kind}): {_one_line(str(args.get('description') or ''))}".rstrip(": ")
    if not args:
        return tool_name
    return f"{tool_name} {_one_line(json.dumps(args, ensure_ascii=False, sort_keys=True))}"


def permission_request(tool_name: str, args: dict[str, Any]) -> PermissionRequest:
    """The request handed to a ``PermissionAsker`` when ``decide`` says ``ask``."""
    return PermissionRequest(tool_name, args, permission_summary(tool_name, args))


def _one_line(text: str, limit: int = 200) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
