"""``.wave/settings.json``: the one reader of the settings files every feature shares.

Three JSON files, most specific first:

1. ``<project>/.wave/settings.local.json`` (not committed; copied into new worktrees)
2. ``<project>/.wave/settings.json``
3. ``$HOME/.wave/settings.json``

Each feature reads its own keys from the layers (``worktree`` and ``hooks``:
``worktrees/settings.py``; ``agent``: ``subagents/settings.py``; ``sandbox``: the command
sandbox). A file that cannot be read or parsed gives a warning and is skipped: defaults are
used, nothing fails.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

PROJECT_FILES = (Path(".wave") / "settings.local.json", Path(".wave") / "settings.json")
USER_FILE = Path(".wave") / "settings.json"


@dataclass(frozen=True)
class SettingsLayer:
    """One settings file that could be read: where it is, and its JSON object."""

    path: Path
    data: dict[str, Any]


def settings_files(project_dir: Path | None, home: Path | None) -> list[Path]:
    """The settings files to read, most specific first."""
    files = [project_dir / name for name in PROJECT_FILES] if project_dir is not None else []
    files.append((home if home is not None else Path.home()) / USER_FILE)
    return files


def load_layers(
    project_dir: Path | None, home: Path | None
) -> tuple[list[SettingsLayer], list[str]]:
    """The readable settings files, most specific first, and a warning per broken one."""
    layers: list[SettingsLayer] = []
    warnings: list[str] = []
    for path in settings_files(project_dir, home):
        data, problem = read_settings_file(path)
        if problem:
            warnings.append(problem)
        if data is not None:
            layers.append(SettingsLayer(path, data))
    return layers, warnings


def read_settings_file(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """``(data, None)``; ``(None, None)`` when the file is absent or empty; ``(None,
    warning)`` when it cannot be used."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, None
    except (OSError, UnicodeDecodeError) as error:
        return None, f"{path}: cannot read the settings ({error}); the file is ignored"
    if not text.strip():
        return None, None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        return None, (
            f"{path}:{error.lineno}:{error.colno}: invalid JSON ({error.msg}); "
            "the file is ignored, defaults are used"
        )
    if not isinstance(data, dict):
        return None, f"{path}: expected a JSON object at the top; the file is ignored"
    return data, None
