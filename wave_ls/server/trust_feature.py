"""Workspace trust over LSP: ``wave/workspace/status``, ``wave/workspace/trust``, and the
``workspaceTrust`` session update (``runtime/trust.py`` decides; this only carries it)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING

from pygls.exceptions import JsonRpcInvalidParams

from wave_ls.server.app import WaveServer
from wave_ls.server.params import absolute_path, field, require_object, required_str

if TYPE_CHECKING:
    from wave_ls.runtime.trust import TrustStatus
    from wave_ls.session import AgentSession

log = logging.getLogger(__name__)

WORKSPACE_STATUS = "wave/workspace/status"
WORKSPACE_TRUST = "wave/workspace/trust"
UPDATE_KIND = "workspaceTrust"


def register(server: WaveServer) -> None:
    @server.feature(WORKSPACE_STATUS)
    async def workspace_status(ls: WaveServer, params: object) -> dict[str, object]:
        from wave_ls.runtime.trust import trust_status

        cwd = _cwd(params, WORKSPACE_STATUS)
        status = await asyncio.to_thread(trust_status, cwd, ls.home)
        return status.to_json()

    @server.feature(WORKSPACE_TRUST)
    async def workspace_trust(ls: WaveServer, params: object) -> dict[str, object]:
        from wave_ls.runtime.trust import set_trust

        cwd = _cwd(params, WORKSPACE_TRUST)
        trusted = field(require_object(params, WORKSPACE_TRUST), "trusted", bool, WORKSPACE_TRUST)
        if trusted is None:
            raise JsonRpcInvalidParams(f"{WORKSPACE_TRUST}: 'trusted' is required")
        before = await asyncio.to_thread(_statuses, ls)
        status = await asyncio.to_thread(set_trust, cwd, ls.home, trusted)
        _apply(ls, before, await asyncio.to_thread(_statuses, ls))
        return status.to_json()


def _cwd(params: object, method: str) -> Path:
    p = require_object(params, method)
    path = absolute_path(required_str(p, "cwd", method), "cwd", method)
    try:
        if not path.is_dir():
            raise JsonRpcInvalidParams(f"{method}: 'cwd' is not a directory: {path}")
    except OSError as error:
        raise JsonRpcInvalidParams(f"{method}: 'cwd' is not usable: {error.strerror}") from None
    return path


def update_of(status: TrustStatus) -> dict[str, object]:
    """The ``workspaceTrust`` session update: the status without ``cwd``."""
    fields = status.to_json()
    fields.pop("cwd")
    return {"kind": UPDATE_KIND, **fields}


async def announce(ls: WaveServer, session: AgentSession) -> None:
    """After ``wave/session/new``: tell the client what its folder holds back, if anything
    (nothing is sent for a trusted folder or one with nothing held back)."""
    from wave_ls.runtime.trust import trust_status

    try:
        status = await asyncio.to_thread(trust_status, session.cwd, ls.home)
    except Exception:
        log.exception("workspace trust status of %s", session.cwd)
        return
    sink = ls.sessions.sinks.get(session.id)
    if sink is not None and status.held_back and not status.trusted:
        sink.push(update_of(status))
        sink.flush()


def _statuses(ls: WaveServer) -> dict[str, TrustStatus]:
    """Each live session's trust status."""
    from wave_ls.runtime.trust import trust_status

    return {
        session_id: trust_status(session.cwd, ls.home)
        for session_id, session in list(ls.sessions.sessions.items())
    }


def _apply(ls: WaveServer, before: dict[str, TrustStatus], after: dict[str, TrustStatus]) -> None:
    """A decision was kept: each live session it changed reads its sandbox again (used from
    its next tool call; hooks, agents and MCP servers read trust where they start) and its
    client hears the new status."""
    for session_id, status in after.items():
        was = before.get(session_id)
        session = ls.sessions.sessions.get(session_id)
        if was is None or session is None or was.decision == status.decision:
            continue
        if not was.held_back and not status.held_back:
            continue  # nothing held back either way: nothing changed for this session
        try:
            session.reload_sandbox()
        except Exception:
            log.exception("reloading the sandbox of session %s", session_id)
        sink = ls.sessions.sinks.get(session_id)
        if sink is not None:
            sink.push(update_of(status))
            sink.flush()
