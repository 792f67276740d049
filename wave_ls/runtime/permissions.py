"""The permission policy: may this tool call run, must a person be asked, or is it refused?

``decide`` is consulted by the conversation loop before every tool call. It is pure: the
loop turns ``ask`` into a ``PermissionAsker`` round trip and ``deny`` into an error result
the model reads. It reads the tool's declared ``effect`` (``runtime/core.Effect``), never
its name. The rules, by mode (see docs/memory-and-permissions.md):

==================  =========  ===========  ============  ==========================
effect               default    acceptEdits  plan          bypassPermissions
==================  =========  ===========  ============  ==========================
read                 allow      allow        allow         allow
session              allow      allow        allow         allow
edit                 ask        allow (1)    deny          allow
execute, read-only   allow      allow        allow         allow
execute, other       ask        ask          deny          allow
worktree             allow      allow        deny          allow
other                ask        ask          deny          allow
==================  =========  ===========  ============  ==========================

(1) except a control file (``control_file``: ``.wave``/``.claude`` settings, hooks and agents,
``.mcp.json``, anything under ``.git/``): acceptEdits asks before changing one.

``dontAsk`` (a subagent's ``permissionMode`` only) gives ``default``'s verdicts; its asker
never prompts: an ``ask`` is allowed only by a rule the user already gave for the session
and otherwise denied (``subagents/runner.py``). A subagent's mode comes from its definition
and its parent (``subagent_permission_mode``).

``read_only_bash=True`` (Explore/Plan subagents) applies the plan-mode rule for commands in
every mode, ``bypassPermissions`` included. ``sandboxed=True`` (the user turned the session's
sandbox on, and it confines this agent's commands) allows every command in ``default`` and
``acceptEdits`` without asking, except those known to reach the network; plan mode and
``read_only_bash`` are unchanged. A subagent's own tool calls are decided again under its
own mode, so delegating is no way around the policy.

A command that can reach the network is not read-only (``bash_safety``), and the read-only
commands of plan mode and of read-only agents run with no network at all (the loop runs
them in ``sandbox.without_network``): ``offline=True`` says that sandbox works here. Where
it does not, such a command is not allowed unasked: plan mode asks, a read-only agent is
refused (issue 25).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import PurePath
from typing import Any, Literal, cast, get_args

from wave_ls.runtime.bash_safety import READ_ONLY_EXAMPLES, is_read_only_command, network_reason
from wave_ls.runtime.core import Effect, PermissionMode
from wave_ls.runtime.tool_names import WaveTool

Action = Literal["allow", "ask", "deny"]

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

NO_OFFLINE_SANDBOX = (
    "no sandbox here can run commands without network access (it needs Landlock ABI 4 or "
    "a bwrap that can make network namespaces: see `wave-ls doctor`)"
)

DONT_ASK_DENIED = (
    "Permission to {summary} denied: this agent runs in dontAsk mode, which never asks; "
    "only what is allowed without a prompt can run."
)


def subagent_permission_mode(parent: PermissionMode, agent: str | None) -> PermissionMode:
    """A subagent's mode, as Claude Code applies it: a parent in ``bypassPermissions`` keeps
    it for the subagent, a parent in ``plan`` is never loosened; otherwise the definition's
    ``permissionMode`` (the parent's when it has none)."""
    if parent in ("bypassPermissions", "plan") or agent not in SUBAGENT_MODES:
        return parent
    return cast(PermissionMode, agent)


SUBAGENT_MODES = frozenset(get_args(PermissionMode))


def decide(
    mode: PermissionMode,
    tool_name: str,
    args: dict[str, Any],
    *,
    effect: Effect,
    read_only_bash: bool = False,
    sandboxed: bool = False,
    offline: bool = False,
) -> Verdict:
    """The verdict for calling ``tool_name`` (whose effect is ``effect``) with ``args`` in
    ``mode``; ``read_only_bash`` enforces the plan-mode rule for commands outside plan mode
    (Explore/Plan); ``sandboxed``: commands run in the session's sandbox, unasked;
    ``offline``: commands of plan mode and read-only agents run without network."""
    if effect == "read":
        return ALLOW
    if effect == "execute":
        command = str(args.get("command") or "")
        return _decide_command(mode, command, read_only_bash, sandboxed, offline)
    if mode == "bypassPermissions" or effect == "session":
        return ALLOW
    if effect == "edit":
        if mode == "plan":
            return Verdict("deny", PLAN_MODE_EDIT_DENIED)
        if mode == "acceptEdits" and control_file(args) is None:
            return ALLOW
        return Verdict("ask", permission_summary(tool_name, args))
    if mode == "plan":
        return Verdict(
            "deny",
            f"Plan mode is active: {tool_name} is not allowed until the plan is approved "
            "(use ExitPlanMode). Only read-only tools and read-only Bash commands can run.",
        )
    if effect == "worktree":
        return ALLOW
    return Verdict("ask", permission_summary(tool_name, args))


def _decide_command(
    mode: PermissionMode,
    command: str,
    read_only_bash: bool,
    sandboxed: bool = False,
    offline: bool = False,
) -> Verdict:
    enforce = read_only_bash or mode == "plan"
    if mode == "bypassPermissions" and not enforce:
        return ALLOW
    ok, reason = is_read_only_command(command)
    if ok and (offline or not enforce):
        return ALLOW
    if ok and read_only_bash:
        return Verdict(
            "deny",
            f"This agent is read-only and {NO_OFFLINE_SANDBOX}, so it cannot run Bash "
            f"commands: `{_one_line(command)}` was not run. Use Read, Grep and Glob instead.",
        )
    if ok:  # plan mode, and nothing here cuts the network: a person decides
        return Verdict("ask", f"Bash: {_one_line(command)} (plan mode, but {NO_OFFLINE_SANDBOX})")
    if enforce:
        who = "Plan mode is active" if mode == "plan" else "This agent is read-only"
        web = " Read web pages with WebFetch." if network_reason(command) else ""
        return Verdict(
            "deny",
            f"{who}: only read-only Bash commands are allowed. Refused: `{_one_line(command)}`"
            f" ({reason}). Use commands that only read, such as {READ_ONLY_EXAMPLES}, "
            f"without output redirection.{web}",
        )
    if sandboxed and network_reason(command) is None:
        return ALLOW
    return Verdict("ask", f"Bash: {_one_line(command)} ({reason})")


# Files whose content runs code or sets rules for later sessions (hooks, sandbox, MCP
# servers, agents' modes, git's hooks and config): acceptEdits still asks before a change,
# or a prompt-injected model could write itself an unasked hook (an untracked settings file
# is the user's: docs/security.md).
CONTROL_NAMES = frozenset({"settings.json", "settings.local.json"})
CONTROL_DIRS = (".wave", ".claude")


def control_file(args: dict[str, Any]) -> str | None:
    """Why the file an edit targets controls wave-ls or git, or None for an ordinary file."""
    target = args.get("file_path") or args.get("notebook_path") or ""
    parts = PurePath(str(target)).parts
    if not parts:
        return None
    if parts[-1] == ".mcp.json":
        return "it configures MCP servers"
    for index, part in enumerate(parts[:-1]):
        rest = parts[index + 1 :]
        if part == ".git":
            return "it is part of a git repository's hooks or configuration"
        in_dir = rest[0] in ("agents", "hooks") or (len(rest) == 1 and rest[0] in CONTROL_NAMES)
        if part in CONTROL_DIRS and in_dir:
            return "it holds settings, hooks or agents that later sessions apply"
    return None


def permission_summary(tool_name: str, args: dict[str, Any]) -> str:
    """One line a person reads before approving: "Edit src/app.py", "Bash: rm -rf build"."""
    if tool_name == WaveTool.BASH:
        return f"Bash: {_one_line(str(args.get('command') or ''))}"
    for key in ("file_path", "notebook_path", "path", "url", "pattern", "query"):
        value = args.get(key)
        if isinstance(value, str) and value:
            return f"{tool_name} {_one_line(value)}"
    if tool_name == WaveTool.AGENT:
        kind = args.get("subagent_type") or "agent"
        return f"Agent ({kind}): {_one_line(str(args.get('description') or ''))}".rstrip(": ")
    if not args:
        return tool_name
    return f"{tool_name} {_one_line(json.dumps(args, ensure_ascii=False, sort_keys=True))}"


def _one_line(text: str, limit: int = 200) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
