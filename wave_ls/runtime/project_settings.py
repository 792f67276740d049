"""``.wave/settings.json``: the one reader of the settings files every feature shares.

Three JSON files, most specific first:

1. ``<project>/.wave/settings.local.json`` (not committed; copied into new worktrees)
2. ``<project>/.wave/settings.json``
3. ``$HOME/.wave/settings.json``

Each feature reads its own keys from the layers (``worktree`` and ``hooks``:
``worktrees/settings.py``; ``agent``: ``subagents/settings.py``; ``sandbox``: the command
sandbox). A file that cannot be read or parsed gives a warning and is skipped: defaults are
used, nothing fails.

Workspace trust (``runtime/trust.py``): a project file the folder's git repository tracks
arrived with the repository. Until the user trusts the folder, such a layer's keys that can
run code or loosen a rule (``HELD_BACK_KEYS``) are left out here, in the one reader, and the
layer says which (``held_back``). ``settings.local.json``, when tracked, counts as the
project's file.
"""

from __future__ import annotations

import json
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from wave_ls.runtime import trust_store
from wave_ls.runtime.git_index import from_repository
from wave_ls.runtime.regular_files import read_if_regular

PROJECT_FILES = (Path(".wave") / "settings.local.json", Path(".wave") / "settings.json")
USER_FILE = Path(".wave") / "settings.json"
Origin = Literal["user", "local", "project"]
ORIGINS: tuple[Origin, ...] = ("local", "project")  # of PROJECT_FILES, in order
# What a repository's settings may not set before the folder is trusted.
HELD_BACK_KEYS = ("hooks", "sandbox", "permissions", "mcpServers", "mcp")
MAX_SETTINGS_BYTES = 8 * 1024 * 1024


@dataclass(frozen=True)
class SettingsLayer:
    """One settings file that could be read: where it is, and its JSON object (without
    the ``held_back`` keys). ``from_repository``: git tracks the file."""

    path: Path
    data: dict[str, Any]
    origin: Origin = "user"
    from_repository: bool = False
    held_back: tuple[str, ...] = ()


def settings_files(project_dir: Path | None, home: Path | None) -> list[Path]:
    """The settings files to read, most specific first."""
    files = [project_dir / name for name in PROJECT_FILES] if project_dir is not None else []
    files.append((home if home is not None else Path.home()) / USER_FILE)
    return files


def load_layers(
    project_dir: Path | None, home: Path | None
) -> tuple[list[SettingsLayer], list[str]]:
    """The readable settings files, most specific first, and a warning per broken one; in
    a folder the user has not trusted, without what the repository's files may not set."""
    layers, warnings = read_layers(project_dir, home)
    if project_dir is None or not any(held_back_keys(layer) for layer in layers):
        return layers, warnings
    if trust_store.decision(project_dir, home or Path.home()) is True:
        return layers, warnings
    return [_without_held_back(layer) for layer in layers], warnings


def read_layers(
    project_dir: Path | None, home: Path | None
) -> tuple[list[SettingsLayer], list[str]]:
    """``load_layers`` before trust is applied: every key of every readable file."""
    layers: list[SettingsLayer] = []
    warnings: list[str] = []
    origins: list[Origin] = list(ORIGINS) if project_dir is not None else []
    for path, origin in zip(settings_files(project_dir, home), [*origins, "user"], strict=True):
        data, problem = read_settings_file(path)
        if problem:
            warnings.append(problem)
        if data is not None:
            tracked = origin != "user" and from_repository(path)
            layers.append(SettingsLayer(path, data, origin, tracked))
    return layers, warnings


def held_back_keys(layer: SettingsLayer) -> tuple[str, ...]:
    """The keys of a repository-delivered layer that wait for the user's trust."""
    if not layer.from_repository:
        return ()
    return tuple(key for key in HELD_BACK_KEYS if key in layer.data)


def _without_held_back(layer: SettingsLayer) -> SettingsLayer:
    keys = held_back_keys(layer)
    if not keys:
        return layer
    data = {key: value for key, value in layer.data.items() if key not in keys}
    return SettingsLayer(layer.path, data, layer.origin, True, keys)


def read_settings_file(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """``(data, None)``; ``(None, None)`` when the file is absent or empty; ``(None,
    warning)`` when it cannot be used."""
    try:
        info = path.stat()
    except FileNotFoundError:
        return None, None
    except (OSError, ValueError) as error:
        return None, f"{path}: cannot read the settings ({error}); the file is ignored"
    if not stat.S_ISREG(info.st_mode):  # a FIFO or a device must not hang the reader
        return None, f"{path}: not a regular file; the file is ignored"
    raw = read_if_regular(path, MAX_SETTINGS_BYTES)
    if raw is None:
        return None, (
            f"{path}: cannot read the settings (gone, or over {MAX_SETTINGS_BYTES} bytes); "
            "the file is ignored"
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
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
