"""A subagent's own hooks (its frontmatter ``hooks``): ``PreToolUse``, ``PostToolUse``, ``Stop``.

The contract of the ``WorktreeCreate`` hooks (``worktrees/hooks.py``) and of Claude Code's:
each command runs as ``bash -c <command>`` in the subagent's working directory, with
``WAVE_PROJECT_DIR`` and ``CLAUDE_PROJECT_DIR`` set, a timeout (60 s unless the hook gives
``timeout``), and a JSON object on stdin: ``session_id``, ``transcript_path``, ``cwd``,
``hook_event_name``, ``agent_id``, ``agent_type``, and per event:

- ``PreToolUse`` (``tool_name``, ``tool_input``), before the permission check. Exit code 2
  blocks the call: stderr is the tool's error the model reads. So does a JSON stdout
  ``{"decision": "block", "reason": ...}`` or ``{"hookSpecificOutput":
  {"permissionDecision": "deny", "permissionDecisionReason": ...}}``.
- ``PostToolUse`` (also ``tool_response``: ``{content, is_error}``), after the tool ran.
  Exit code 2 or ``decision: "block"``: the stderr or reason is added to the tool's result
  for the model (the tool has run).
- ``Stop``, when the subagent ends: sent as ``SubagentStop`` (as Claude Code converts it),
  with ``stop_hook_active`` and ``last_assistant_message``. Exit code 2 or ``decision:
  "block"``: the stderr or reason is given to the subagent, which goes on.

``matcher`` is a regular expression for the whole tool name (``Edit|Write``); ``*`` or none
matches every tool. Any other nonzero exit, a timeout or a hook that cannot start is a
non-blocking error: logged, and the call goes on. Hooks never raise.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wave_ls.runtime.core import ToolContext, ToolResult
from wave_ls.runtime.processes import ProcessRun, run_process
from wave_ls.worktrees.hooks import common_fields, hook_env
from wave_ls.worktrees.settings import HookCommand, parse_hook_list

log = logging.getLogger(__name__)

BLOCKING_EXIT = 2
STOP_EVENT = "SubagentStop"  # what a frontmatter ``Stop`` hook is run as


@dataclass(frozen=True)
class MatchedHook:
    """One hook command and the tool names it is for."""

    matcher: str
    command: HookCommand

    def matches(self, tool_name: str) -> bool:
        if self.matcher in ("", "*"):
            return True
        try:
            return re.fullmatch(self.matcher, tool_name) is not None
        except re.error:
            return self.matcher == tool_name


@dataclass(frozen=True)
class Verdict:
    """What the hooks of one event said: ``blocked``, with the text for the model."""

    blocked: bool = False
    reason: str = ""


def parse_agent_hooks(hooks: Mapping[str, Any], source: Path) -> dict[str, list[MatchedHook]]:
    """The definition's ``hooks`` by event; entries of a wrong shape are logged and skipped
    (the parser already warned about unknown events)."""
    warnings: list[str] = []
    out: dict[str, list[MatchedHook]] = {}
    for event, entries in hooks.items():
        if not isinstance(entries, list):
            warnings.append(f"{source}: hooks.{event} must be a list; ignored")
            continue
        for entry in entries:
            if isinstance(entry, dict) and "hooks" in entry:
                matcher = str(entry.get("matcher") or "")
                commands = parse_hook_list(entry["hooks"], source, event, warnings)
            else:
                matcher, commands = "", parse_hook_list([entry], source, event, warnings)
            out.setdefault(event, []).extend(MatchedHook(matcher, c) for c in commands)
    for warning in warnings:
        log.warning("%s", warning)
    return out


@dataclass
class AgentHooks:
    """One subagent run's hooks (the loop's ``ToolHooks``, and its ``Stop``)."""

    hooks: dict[str, list[MatchedHook]]
    project_dir: Path
    session_id: str
    agent_id: str
    agent_type: str
    stops: int = field(default=0)  # how often Stop hooks blocked the end so far

    async def before_tool(self, name: str, args: dict[str, Any], ctx: ToolContext) -> str | None:
        payload = {"tool_name": name, "tool_input": args}
        verdict = await self._run("PreToolUse", name, payload, ctx.cwd)
        if not verdict.blocked:
            return None
        return verdict.reason or f"The PreToolUse hook blocked this {name} call."

    async def after_tool(
        self, name: str, args: dict[str, Any], result: ToolResult, ctx: ToolContext
    ) -> ToolResult:
        response = {"content": result.content, "is_error": result.is_error}
        payload = {"tool_name": name, "tool_input": args, "tool_response": response}
        verdict = await self._run("PostToolUse", name, payload, ctx.cwd)
        if verdict.blocked and verdict.reason:
            result.content += f"\n\nPostToolUse hook feedback: {verdict.reason}"
        return result

    async def stop(self, last_message: str, cwd: Path) -> Verdict:
        """Run the ``Stop`` hooks as the subagent ends; a block means it goes on."""
        payload = {"stop_hook_active": self.stops > 0, "last_assistant_message": last_message}
        verdict = await self._run("Stop", "", payload, cwd)
        if verdict.blocked:
            self.stops += 1
        return verdict

    async def _run(self, event: str, tool: str, fields: dict[str, Any], cwd: Path) -> Verdict:
        hooks = [h for h in self.hooks.get(event, []) if event == "Stop" or h.matches(tool)]
        if not hooks:
            return Verdict()
        shown = STOP_EVENT if event == "Stop" else event
        payload = {
            **common_fields(shown, cwd, self.session_id),
            "agent_id": self.agent_id,
            "agent_type": self.agent_type,
            **fields,
        }
        runs = await asyncio.to_thread(self._run_all, hooks, payload, cwd)
        return verdict_of(shown, runs)

    def _run_all(
        self, hooks: Sequence[MatchedHook], payload: dict[str, Any], cwd: Path
    ) -> list[ProcessRun]:
        text = json.dumps(payload, default=str)
        env = hook_env(self.project_dir)
        directory = cwd if cwd.is_dir() else self.project_dir
        runs = []
        for hook in hooks:
            command = hook.command
            run = run_process(
                ["bash", "-c", command.command],
                cwd=directory,
                env=env,
                stdin=text,
                timeout=command.timeout,
            )
            run.command = command.command
            runs.append(run)
        return runs


def verdict_of(event: str, runs: Sequence[ProcessRun]) -> Verdict:
    """Blocked when a hook exited 2 or printed a blocking decision; the reasons joined."""
    reasons: list[str] = []
    for run in runs:
        if run.returncode == BLOCKING_EXIT:
            reasons.append(run.stderr.strip() or f"blocked by the {event} hook {run.command}")
            continue
        if not run.ok:
            log.warning("%s hook failed (not blocking): %s: %s", event, run.command, run.output())
            continue
        reason = json_block_reason(run.stdout)
        if reason is not None:
            reasons.append(reason or f"blocked by the {event} hook {run.command}")
    return Verdict(bool(reasons), "\n".join(reasons))


def json_block_reason(stdout: str) -> str | None:
    """The reason of a JSON stdout that blocks (``""`` when it gives none), else None."""
    text = stdout.strip()
    if not text.startswith("{"):
        return None
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    if data.get("decision") == "block":
        return str(data.get("reason") or "")
    specific = data.get("hookSpecificOutput")
    if isinstance(specific, dict) and specific.get("permissionDecision") == "deny":
        return str(specific.get("permissionDecisionReason") or "")
    return None
