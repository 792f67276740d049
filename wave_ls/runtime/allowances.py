""" "Allow for this session": what a remembered permission covers, and the asker that keeps it.

When a person answers a permission prompt with ``remember`` (the editor's "Allow for this
session"), the session stops asking for calls of the same kind. What "the same kind" means
per tool (see docs/memory-and-permissions.md):

=================  ===================================================================
tool               a remembered allow covers
=================  ===================================================================
Write, Edit        every file-changing tool on any file inside the session's folder
Bash               simple commands with the same program and subcommand (``npm test``,
                   ``git commit``); a compound command (pipes, ``&&``, ``;``,
                   redirections, substitutions) or one run through an interpreter or
                   wrapper (``python``, ``bash``, ``env``, ``sudo``, ...): that exact command
WebFetch           URLs on the same host
ExitPlanMode       never remembered: each plan is approved on its own
any other tool     that tool, whatever its arguments
=================  ===================================================================

Allowances live as long as the session object (they are not restored on resume), and other
sessions keep asking.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit

from wave_ls.runtime.core import (
    PermissionAsker,
    PermissionDecision,
    PermissionRequest,
    expanded,
)
from wave_ls.runtime.tool_names import WaveTool

NEVER_REMEMBERED = frozenset({WaveTool.EXIT_PLAN_MODE.value})
# Programs whose first argument is code or another command: a prefix would allow anything.
WRAPPERS = frozenset(
    {
        "bash",
        "sh",
        "zsh",
        "fish",
        "dash",
        "python",
        "python3",
        "node",
        "deno",
        "bun",
        "ruby",
        "perl",
        "php",
        "env",
        "sudo",
        "doas",
        "su",
        "xargs",
        "eval",
        "exec",
        "command",
        "builtin",
        "nohup",
        "nice",
        "time",
        "timeout",
        "watch",
        "npx",
        "uvx",
        "pipx",
        "ssh",
        "docker",
        "kubectl",
        "find",
    }
)
SHELL_SYNTAX = re.compile(r"[;&|<>`\n]|\$\(")
SUBCOMMAND = re.compile(r"[a-z][a-z0-9-]*(?::[a-z0-9-]+)*")

Kind = Literal["files", "prefix", "exact", "host", "tool"]


@dataclass(frozen=True)
class Allowance:
    """One remembered allow; ``description`` is what a person reads."""

    tool: str
    kind: Kind
    value: str
    description: str

    def covers(self, request: PermissionRequest) -> bool:
        name = request.tool_name
        if self.kind == "files":
            return request.effect == "edit" and _inside(_target(request), self.value)
        if name != self.tool:
            return False
        if self.kind == "prefix":
            prefix = self.value.split(" ")
            words = _simple_words(_command(request))
            return words is not None and words[: len(prefix)] == prefix
        if self.kind == "exact":
            return _command(request).strip() == self.value
        if self.kind == "host":
            return _host(request) == self.value
        return True

    def to_json(self) -> dict[str, str]:
        return {"tool": self.tool, "kind": self.kind, "value": self.value, "rule": self.description}


def allowance_for(request: PermissionRequest, folder: Path) -> Allowance | None:
    """What remembering an allow of ``request`` covers, or None when it is never remembered."""
    name = request.tool_name
    if name in NEVER_REMEMBERED:
        return None
    if request.effect == "edit":
        target = _target(request)
        root = os.path.realpath(folder)
        if target is None or not _inside(target, root):
            return None  # a file outside the session's folder is asked for every time
        return Allowance(name, "files", root, f"file edits in {root}")
    if name == WaveTool.BASH:
        command = _command(request).strip()
        words = _simple_words(command)
        if not words or "=" in words[0] or os.path.basename(words[0]) in WRAPPERS:
            return Allowance(name, "exact", command, f"the Bash command `{command}`")
        prefix = words[:2] if len(words) > 1 and SUBCOMMAND.fullmatch(words[1]) else words[:1]
        shown = " ".join(prefix)
        return Allowance(name, "prefix", shown, f"Bash commands starting with `{shown}`")
    if name == WaveTool.WEB_FETCH:
        host = _host(request)
        if host:
            return Allowance(name, "host", host, f"WebFetch of {host}")
    return Allowance(name, "tool", "", f"every {name} call")


class RememberingAsker:
    """A ``PermissionAsker`` that answers what the session already allowed, and asks the
    wrapped one otherwise. Subagents share their session's instance."""

    def __init__(
        self,
        asker: PermissionAsker,
        folder: Path,
        on_remember: Callable[[Allowance], None] = lambda _allowance: None,
    ) -> None:
        self.asker = asker
        self.folder = folder
        self.on_remember = on_remember
        self.allowances: list[Allowance] = []

    async def ask(self, request: PermissionRequest) -> PermissionDecision:
        for known in self.allowances:
            if known.covers(request):
                return PermissionDecision(True, rule=_rule(known))
        decision = await self.asker.ask(request)
        if not (decision.allowed and decision.remember):
            return decision
        allowance = allowance_for(request, self.folder)
        if allowance is None:
            return decision
        if allowance not in self.allowances:
            self.allowances.append(allowance)
            self.on_remember(allowance)
        return PermissionDecision(True, remember=True, rule=_rule(allowance))


def _rule(allowance: Allowance) -> str:
    return f"allowed for this session: {allowance.description}"


def _command(request: PermissionRequest) -> str:
    command = request.arguments.get("command")
    return command if isinstance(command, str) else ""


def _simple_words(command: str) -> list[str] | None:
    """The words of a command without shell syntax, else None (it is matched exactly)."""
    if SHELL_SYNTAX.search(command):
        return None
    try:
        return shlex.split(command)
    except ValueError:
        return None


def _target(request: PermissionRequest) -> str | None:
    raw = request.arguments.get("file_path")
    if not isinstance(raw, str) or not raw:
        return None
    path = expanded(raw)
    if not path.is_absolute():
        if request.cwd is None:
            return None
        path = request.cwd / path
    return os.path.realpath(path)


def _inside(target: str | None, root: str) -> bool:
    return target is not None and (target == root or target.startswith(root.rstrip("/") + "/"))


def _host(request: PermissionRequest) -> str:
    url = request.arguments.get("url")
    if not isinstance(url, str):
        return ""
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""
