"""How a tool call is shown, read from the tool itself (issue 29's descriptor).

Each tool declares, beside its ``effect`` (what the permission policy reads), its ``kind``
(``ToolKind``: read, edit, execute, search, fetch, think, ...) and its ``key_argument``
(the argument that says what a call works on: ``file_path`` for a Read, ``command`` for a
Bash; None when no argument does). The loop computes a call's ``target`` from them once,
and every renderer (the tool block over LSP, ACP, a subagent's activity line) reads that
instead of keeping its own table of tool names.

Both attributes are optional: a tool that declares neither (a test double, a plug-in) is of
kind ``other`` with no target.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, cast, get_args

from wave_ls.runtime.core import ToolKind, parsed_arguments

TARGET_LIMIT = 200  # characters of a target sent with every update of its block
KINDS: frozenset[str] = frozenset(get_args(ToolKind))


@dataclass(frozen=True)
class ToolDescriptor:
    """What renderers know of one tool: its name, kind and key argument (``declared``:
    whether the tool declares them at all, or they are the defaults)."""

    name: str
    kind: ToolKind = "other"
    key_argument: str | None = None
    declared: bool = False

    def target(self, args: dict[str, Any] | str, limit: int = TARGET_LIMIT) -> str:
        """The key argument's value on one line, cut at ``limit`` ("" when absent);
        ``args`` may be the call's JSON text (parsed only when there is a key argument)."""
        if self.key_argument is None:
            return ""
        return call_target(
            self.key_argument, parsed_arguments(args) if isinstance(args, str) else args, limit
        )


def describe(tool: object) -> ToolDescriptor:
    """The descriptor a tool (an instance or its class) declares."""
    kind = getattr(tool, "kind", "other")
    key = getattr(tool, "key_argument", None)
    return ToolDescriptor(
        str(getattr(tool, "name", "")),
        cast(ToolKind, kind) if isinstance(kind, str) and kind in KINDS else "other",
        key if isinstance(key, str) and key else None,
        hasattr(tool, "kind") or hasattr(tool, "key_argument"),
    )


def call_target(key_argument: str | None, args: dict[str, Any], limit: int = TARGET_LIMIT) -> str:
    """The value of ``args[key_argument]`` on one line, cut at ``limit`` with ``…``."""
    value = args.get(key_argument) if key_argument else None
    if not isinstance(value, str):
        return ""
    return one_line(value, limit)


def one_line(text: str, limit: int) -> str:
    """``text`` with its runs of white space as one space, cut at ``limit`` with ``…``."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"
