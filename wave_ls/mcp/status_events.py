"""Who hears the process's MCP status changes (an adapter's ``mcpStatus`` updates).

A module of its own, importing nothing: an adapter subscribes at start-up without loading
the rest of ``wave_ls.mcp`` (the manager imports it when the first session opens).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

# (folder, owner, row): ``owner`` is None for a server the folder's sessions share, else the
# id of the session it belongs to (ACP-given, or a subagent's own); ``row`` is the server's
# ``wave/mcp/list`` item.
Listener = Callable[[Path, "str | None", dict[str, Any]], None]

LISTENERS: list[Listener] = []


def on_status(listener: Listener) -> None:
    """Hear every status change of the default manager's servers."""
    LISTENERS.append(listener)
