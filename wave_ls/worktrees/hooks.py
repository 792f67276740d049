"""``WorktreeCreate`` / ``WorktreeRemove`` hooks: commands that replace git's own steps.

Each hook runs as ``bash -c <command>`` in the project directory (the main repository),
with a JSON object on stdin and ``WAVE_PROJECT_DIR`` (and, for hooks written for Claude
Code, ``CLAUDE_PROJECT_DIR``) in its environment. A hook that outlives its timeout is killed
with its whole process group.

- WorktreeCreate: tried in order; the first one that exits 0 and prints the path of an
  existing directory wins (the whole stdout stripped, or else its last non-empty line; a
  relative path is taken from the project directory). Each failure is described as
  ``WorktreeCreate hook failed: <command>: <output>``.
- WorktreeRemove: every hook runs (stdin ``worktree_path``, no ``name``); failures are only
  logged and returned.

The calls block; async callers use ``asyncio.to_thread``.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wave_ls.runtime.core import expanded
from wave_ls.runtime.processes import OUTPUT_LIMIT, ProcessRun, run_process
from wave_ls.worktrees.git_cli import git_env
from wave_ls.worktrees.settings import HookCommand

log = logging.getLogger(__name__)


@dataclass
class CreateHookResult:
    """The path the first successful WorktreeCreate hook printed, and the failures before."""

    path: Path | None
    command: str | None = None
    failures: list[str] = field(default_factory=list)


def hook_env(project_dir: Path) -> dict[str, str]:
    env = git_env()
    env["WAVE_PROJECT_DIR"] = str(project_dir)
    env["CLAUDE_PROJECT_DIR"] = str(project_dir)
    return env


def run_hook(hook: HookCommand, payload: dict[str, Any], project_dir: Path) -> ProcessRun:
    """Run one hook with ``payload`` as JSON on stdin; never raises."""
    run = run_process(
        ["bash", "-c", hook.command],
        cwd=project_dir,
        env=hook_env(project_dir),
        stdin=json.dumps(payload),
        timeout=hook.timeout,
    )
    run.command = hook.command
    return run


def printed_directory(stdout: str, base: Path) -> Path | None:
    """The existing directory a hook printed: all of stdout, else its last non-empty line."""
    text = stdout.strip()
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    for candidate in dict.fromkeys([text, *lines[-1:]]):
        if not candidate:
            continue
        path = expanded(candidate)
        path = path if path.is_absolute() else base / path
        if path.is_dir():
            return path.resolve()
    return None


def common_fields(event: str, cwd: Path, session_id: str) -> dict[str, Any]:
    """The fields every hook gets (Claude Code's common input)."""
    return {
        "session_id": session_id,
        "transcript_path": "",
        "cwd": str(cwd),
        "hook_event_name": event,
    }


def run_create_hooks(
    hooks: Sequence[HookCommand],
    *,
    name: str,
    branch: str,
    project_dir: Path,
    cwd: Path,
    base_ref: str,
    session_id: str = "",
) -> CreateHookResult:
    """Try each WorktreeCreate hook in order until one prints an existing directory."""
    payload = {
        **common_fields("WorktreeCreate", cwd, session_id),
        "name": name,
        "branch": branch,
        "repo": str(project_dir),
        "baseRef": base_ref,
    }
    result = CreateHookResult(path=None)
    for hook in hooks:
        run = run_hook(hook, payload, project_dir)
        if run.ok:
            path = printed_directory(run.stdout, project_dir)
            if path is not None:
                result.path, result.command = path, hook.command
                return result
            printed = run.stdout.strip()
            detail = (
                f"printed {printed[:OUTPUT_LIMIT]!r}, which is not an existing directory"
                if printed
                else "printed no path on stdout"
            )
        else:
            detail = run.output()
        failure = f"WorktreeCreate hook failed: {hook.command}: {detail}"
        log.warning("%s", failure)
        result.failures.append(failure)
    return result


def run_remove_hooks(
    hooks: Sequence[HookCommand],
    *,
    worktree_path: Path,
    project_dir: Path,
    session_id: str = "",
) -> list[str]:
    """Run every WorktreeRemove hook; the failures (already logged), empty when all passed."""
    payload = {
        **common_fields("WorktreeRemove", project_dir, session_id),
        "worktree_path": str(worktree_path),
    }
    failures = []
    for hook in hooks:
        run = run_hook(hook, payload, project_dir)
        if not run.ok:
            failure = f"WorktreeRemove hook failed: {hook.command}: {run.output()}"
            log.warning("%s", failure)
            failures.append(failure)
    return failures
