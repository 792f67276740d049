"""``~/.wave/mcp-approvals.json``: the user's answers about MCP servers, per project.

``{"version": 1, "projects": {"<folder>": {"<server>": {"hash": "<definition hash>",
"approved": bool, "at": <epoch ms>}}}}``. An answer holds for the definition it was given
for: a changed definition (another hash) is unanswered again. Written atomically (a
temporary file renamed over the old one), readable only by the user.
"""

from __future__ import annotations

import contextlib
import json
import os
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from wave_ls.runtime.regular_files import read_if_regular

STORE = Path(".wave") / "mcp-approvals.json"
MAX_STORE_BYTES = 4 * 1024 * 1024
_LOCK = threading.Lock()


def store_path(home: Path) -> Path:
    return home / STORE


def _projects(home: Path) -> dict[str, Any]:
    raw = read_if_regular(store_path(home), MAX_STORE_BYTES)
    if not raw:
        return {}
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return {}
    projects = data.get("projects") if isinstance(data, dict) else None
    return projects if isinstance(projects, dict) else {}


def answer(home: Path, folder: Path, name: str, definition_hash: str) -> bool | None:
    """The kept answer for this server definition in ``folder``, or None (never asked, or
    asked about another definition)."""
    entry = _projects(home).get(str(folder), {}).get(name)
    if not isinstance(entry, dict) or entry.get("hash") != definition_hash:
        return None
    approved = entry.get("approved")
    return approved if isinstance(approved, bool) else None


def keep(home: Path, folder: Path, name: str, definition_hash: str, approved: bool) -> None:
    """Keep the user's answer (replacing any earlier one for that server)."""
    path = store_path(home)
    with _LOCK:
        projects = _projects(home)
        servers = projects.setdefault(str(folder), {})
        if not isinstance(servers, dict):
            servers = projects[str(folder)] = {}
        servers[name] = {
            "hash": definition_hash,
            "approved": approved,
            "at": int(time.time() * 1000),
        }
        text = json.dumps({"version": 1, "projects": projects}, indent=2, sort_keys=True)
        path.parent.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".mcp-approvals-")
        try:
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                out.write(text + "\n")
            os.chmod(temporary, 0o600)
            os.replace(temporary, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temporary)
            raise
