"""Delegation settings from ``.wave/settings.json`` (user, project, local layers)."""

from __future__ import annotations

import logging
from pathlib import Path

from wave_ls.subagents.runner import DEFAULT_FOREGROUND_TIMEOUT
from wave_ls.worktrees.settings import read_settings_file, settings_files

log = logging.getLogger(__name__)


def foreground_timeout(project_dir: Path, home: Path | None) -> float:
    """``{"agent": {"timeoutSeconds": N}}``: how long a foreground subagent may run (BG-2).

    The most specific layer that sets a positive number wins; default 600 s.
    """
    value = DEFAULT_FOREGROUND_TIMEOUT
    for path in reversed(settings_files(project_dir, home)):  # least specific first
        data, _problem = read_settings_file(path)
        agent = data.get("agent") if isinstance(data, dict) else None
        seconds = agent.get("timeoutSeconds") if isinstance(agent, dict) else None
        if isinstance(seconds, int | float) and not isinstance(seconds, bool) and seconds > 0:
            value = float(seconds)
        elif seconds is not None:
            log.warning("%s: agent.timeoutSeconds must be a positive number", path)
    return value
