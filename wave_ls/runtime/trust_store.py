"""``~/.wave/trust.json``: the user's trust decisions, one per folder.

``{"version": 1, "folders": {"<resolved path>": {"trusted": bool, "at": <epoch ms>}}}``. A
decision covers the folder's subfolders; the nearest entry wins. Written atomically (a
temporary file renamed over the old one), readable only by the user.
"""

from __future__ import annotations

import json
import os
import threading
import time
from pathlib import Path
from typing import Any

from wave_ls.runtime.regular_files import read_if_regular

STORE = Path(".wave") / "trust.json"
MAX_STORE_BYTES = 4 * 1024 * 1024
_LOCK = threading.Lock()


def store_path(home: Path) -> Path:
    return home / STORE


def resolved(folder: Path) -> Path:
    """The folder as decisions name it: absolute, symlinks resolved."""
    try:
        return Path(os.path.realpath(folder))
    except (OSError, ValueError):
        return Path(os.path.abspath(folder))


def _folders(home: Path) -> dict[str, Any]:
    data = read_if_regular(store_path(home), MAX_STORE_BYTES)
    if not data:
        return {}
    try:
        parsed = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return {}
    folders = parsed.get("folders") if isinstance(parsed, dict) else None
    return folders if isinstance(folders, dict) else {}


def decision(folder: Path, home: Path) -> bool | None:
    """The user's decision for ``folder``: the nearest entry at or above it, None if none."""
    folders = _folders(home)
    if not folders:
        return None
    target = resolved(folder)
    for candidate in (target, *target.parents):
        entry = folders.get(str(candidate))
        if isinstance(entry, dict) and isinstance(entry.get("trusted"), bool):
            return bool(entry["trusted"])
    return None


def keep(folder: Path, home: Path, trusted: bool) -> None:
    """Record the decision for ``folder`` (replacing an earlier one for that folder)."""
    import tempfile  # with shutil and bz2 behind it, ~5 ms of the server's start

    path = store_path(home)
    with _LOCK:
        folders = _folders(home)
        folders[str(resolved(folder))] = {"trusted": trusted, "at": int(time.time() * 1000)}
        text = json.dumps({"version": 1, "folders": folders}, indent=2, sort_keys=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temporary = tempfile.mkstemp(prefix=".trust.", suffix=".json", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as file:
                file.write(text + "\n")
                file.flush()
                os.fsync(file.fileno())
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
