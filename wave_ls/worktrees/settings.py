"""Worktree settings: ``worktree.baseRef`` and the ``WorktreeCreate``/``WorktreeRemove`` hooks.

Read from the settings layers (``runtime/project_settings.py``, see ``docs/worktrees.md``).
``worktree.baseRef`` comes from the first file that sets it. Hooks of every file are used,
in that order (the project's before the user's), duplicates once. A file that cannot be
read or parsed, or a value of the wrong shape, gives a warning and is ignored: defaults are
used, nothing fails.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from wave_ls.runtime.project_settings import load_layers

log = logging.getLogger(__name__)

BaseRef = Literal["fresh", "head"]
BASE_REFS: tuple[BaseRef, ...] = ("fresh", "head")
DEFAULT_HOOK_TIMEOUT = 60.0
HOOK_EVENTS = ("WorktreeCreate", "WorktreeRemove")


@dataclass(frozen=True)
class HookCommand:
    """One hook command: run with ``bash -c``; ``timeout`` in seconds; ``source`` its file."""

    command: str
    timeout: float = DEFAULT_HOOK_TIMEOUT
    source: Path | None = None


@dataclass
class WorktreeSettings:
    """What worktree creation and removal read from the settings files."""

    base_ref: BaseRef = "fresh"
    create_hooks: list[HookCommand] = field(default_factory=list)
    remove_hooks: list[HookCommand] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def load_worktree_settings(project_dir: Path | None, home: Path | None = None) -> WorktreeSettings:
    """Read the settings of ``project_dir`` (the main repository) and of ``home``."""
    layers, warnings = load_layers(project_dir, home)
    for warning in warnings:
        log.warning("%s", warning)
    settings = parse_worktree_settings([(layer.path, layer.data) for layer in layers])
    settings.warnings[:0] = warnings
    for layer in layers:
        if "hooks" in layer.held_back:  # workspace trust (runtime/trust.py)
            settings.warnings.append(
                f"{layer.path}: its hooks were not run: the repository committed them and "
                "this folder is not trusted yet (wave/workspace/trust, wave-ls run --trust)"
            )
    return settings


def parse_worktree_settings(layers: Sequence[tuple[Path, dict[str, Any]]]) -> WorktreeSettings:
    """Merge parsed settings files, most specific first (pure; see the module docstring)."""
    settings = WorktreeSettings()
    base_ref: BaseRef | None = None
    for path, data in layers:
        worktree = data.get("worktree")
        if worktree is not None and not isinstance(worktree, dict):
            settings.warnings.append(f"{path}: 'worktree' must be an object; ignored")
            worktree = None
        value = (worktree or {}).get("baseRef")
        if value is not None and base_ref is None:
            if value in BASE_REFS:
                base_ref = cast(BaseRef, value)
            else:
                settings.warnings.append(
                    f'{path}: worktree.baseRef must be "fresh" or "head", got {value!r}; ignored'
                )
        hooks = data.get("hooks")
        if hooks is None:
            continue
        if not isinstance(hooks, dict):
            settings.warnings.append(f"{path}: 'hooks' must be an object; ignored")
            continue
        for event, target in (
            ("WorktreeCreate", settings.create_hooks),
            ("WorktreeRemove", settings.remove_hooks),
        ):
            if event in hooks:
                for hook in parse_hook_list(hooks[event], path, event, settings.warnings):
                    if all(known.command != hook.command for known in target):
                        target.append(hook)
    settings.base_ref = base_ref or "fresh"
    for warning in settings.warnings:
        log.warning("%s", warning)
    return settings


def parse_hook_list(value: Any, path: Path, event: str, warnings: list[str]) -> list[HookCommand]:
    """Hooks of one event. Accepted entries (mixed freely in one list):

    - ``"command"``;
    - ``{"command": "...", "timeout": 30}``;
    - Claude Code's ``{"matcher": "...", "hooks": [{"type": "command", "command": "..."}]}``.
    """
    where = f"{path}: hooks.{event}"
    if not isinstance(value, list):
        warnings.append(f"{where} must be a list; ignored")
        return []
    found: list[HookCommand] = []
    for index, entry in enumerate(value):
        if isinstance(entry, dict) and "hooks" in entry:
            inner = entry["hooks"]
            if not isinstance(inner, list):
                warnings.append(f"{where}[{index}].hooks must be a list; ignored")
                continue
            for sub_index, sub in enumerate(inner):
                hook = _one_hook(sub, f"{where}[{index}].hooks[{sub_index}]", warnings)
                if hook is not None:
                    found.append(HookCommand(hook.command, hook.timeout, path))
            continue
        hook = _one_hook(entry, f"{where}[{index}]", warnings)
        if hook is not None:
            found.append(HookCommand(hook.command, hook.timeout, path))
    return found


def _one_hook(entry: Any, where: str, warnings: list[str]) -> HookCommand | None:
    if isinstance(entry, str):
        entry = {"command": entry}
    if not isinstance(entry, dict):
        warnings.append(f'{where}: expected {{"command": "..."}}; ignored')
        return None
    kind = entry.get("type", "command")
    if kind != "command":
        warnings.append(f'{where}: hook type {kind!r} is not supported (only "command"); ignored')
        return None
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        warnings.append(f"{where}: 'command' must be a non-empty string; ignored")
        return None
    timeout = entry.get("timeout", DEFAULT_HOOK_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        warnings.append(f"{where}: 'timeout' must be a positive number of seconds; 60 used")
        timeout = DEFAULT_HOOK_TIMEOUT
    return HookCommand(command, float(timeout))
