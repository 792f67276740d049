"""Delegation settings from ``.wave/settings.json`` (user, project, local layers)."""

from __future__ import annotations

import logging
from pathlib import Path

from wave_ls.runtime.project_settings import load_layers
from wave_ls.subagents.runner import DEFAULT_FOREGROUND_TIMEOUT, DEFAULT_MAX_CONCURRENT

log = logging.getLogger(__name__)


def foreground_timeout(project_dir: Path, home: Path | None) -> float:
    """``{"agent": {"timeoutSeconds": N}}``: how long a foreground subagent may run (BG-2).

    The most specific layer that sets a positive number wins; default 600 s.
    """
    layers, _warnings = load_layers(project_dir, home)
    for layer in layers:  # most specific first
        agent = layer.data.get("agent")
        seconds = agent.get("timeoutSeconds") if isinstance(agent, dict) else None
        if isinstance(seconds, int | float) and not isinstance(seconds, bool) and seconds > 0:
            return float(seconds)
        if seconds is not None:
            log.warning("%s: agent.timeoutSeconds must be a positive number", layer.path)
    return DEFAULT_FOREGROUND_TIMEOUT


def max_concurrent(project_dir: Path, home: Path | None) -> int:
    """``{"agent": {"maxConcurrent": N}}``: how many subagents of a session run at once
    (the others wait); the most specific layer with a whole number from 1 wins; default 4."""
    layers, _warnings = load_layers(project_dir, home)
    for layer in layers:
        agent = layer.data.get("agent")
        value = agent.get("maxConcurrent") if isinstance(agent, dict) else None
        if isinstance(value, int) and not isinstance(value, bool) and value >= 1:
            return value
        if value is not None:
            log.warning("%s: agent.maxConcurrent must be a whole number from 1", layer.path)
    return DEFAULT_MAX_CONCURRENT
