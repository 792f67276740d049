"""The chat sessions: ``wave/session/new``, ``wave/chat/send``, ``wave/session/messages``,
``wave/session/list``, ``wave/session/close``, ``wave/session/configure``,
``wave/session/cancel`` and ``wave/session/compact``."""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import TYPE_CHECKING, cast

from pygls.exceptions import JsonRpcInvalidParams, JsonRpcServerError

from wave_ls.runtime.background_work import run_task
from wave_ls.runtime.core import PERMISSION_MODES, Message, ModelClient, PermissionMode
from wave_ls.runtime.services import Services
from wave_ls.runtime.transcript import valid_session_id
from wave_ls.server.app import WaveServer
from wave_ls.server.editor_lsp import editor_lsp_for
from wave_ls.server.params import (
    absolute_path,
    existing_dir,
    field,
    model_param,
    require_object,
    required_str,
)
from wave_ls.server.permission_prompt import LspPermissionAsker
from wave_ls.server.trust_feature import announce
from wave_ls.server.updates import SessionUpdateSink

if TYPE_CHECKING:  # the runtime is imported at the first session, not at start-up
    from wave_ls.runtime.transcript import SavedSession
    from wave_ls.session import AgentSession, Resume

SESSION_NEW = "wave/session/new"
CHAT_SEND = "wave/chat/send"
SESSION_MESSAGES = "wave/session/messages"
SESSION_LIST = "wave/session/list"
SESSION_CLOSE = "wave/session/close"
SESSION_CONFIGURE = "wave/session/configure"
SESSION_CANCEL = "wave/session/cancel"
SESSION_COMPACT = "wave/session/compact"
SESSION_BUSY_CODE = -32010
COMPACT_FAILED_CODE = -32011  # the model could not write the summary


def model_client_for(ls: WaveServer) -> ModelClient:
    import dataclasses

    from wave_ls.runtime.settings import LSP_SETTING_NAMES
    from wave_ls.runtime.settings import model_client_for as client_for

    return client_for(dataclasses.replace(ls.settings, names=LSP_SETTING_NAMES))


def open_session(
    ls: WaveServer,
    *,
    cwd: Path,
    model: str | None,
    permission_mode: PermissionMode,
    session_id: str | None = None,
    messages: list[Message] | None = None,
) -> AgentSession:
    """Create (or re-create from its transcript) a session and wire it to the client."""
    from wave_ls.runtime.settings import session_model
    from wave_ls.session import AgentSession

    session_id = session_id or uuid.uuid4().hex
    sink = SessionUpdateSink(session_id, ls.notify, on_sent=ls.agent_progress.on_update)
    editor = editor_lsp_for(ls, session_id)
    session = AgentSession(
        cwd=cwd,
        home=ls.home,
        model=session_model(model, ls.settings.model),
        client=model_client_for(ls),
        session_id=session_id,
        permission_mode=permission_mode,
        sink=sink,
        asker=LspPermissionAsker(ls, lambda: session_id),
        messages=messages or [],
        catalog=lambda: ls.agents.load(cwd),
        services=Services(lsp=editor),
        context_window=ls.options.contextWindow,
    )
    session.task_changed(lambda info: sink.push({"kind": "task", "task": info.to_json()}))
    ls.sessions.add(session, sink)
    return session


def register(server: WaveServer) -> None:
    """Answer the session methods: each handler takes the server and the raw params."""
    for method, handler in HANDLERS.items():
        server.feature(method)(handler)


async def session_new(ls: WaveServer, params: object) -> dict[str, object]:
    """``wave/session/new``: a new session in ``cwd`` (in a worktree when asked), or a
    saved one resumed (``sessionId``)."""
    from wave_ls.worktrees.model import IsolationError

    p = require_object(params, SESSION_NEW)
    chosen_mode = permission_mode_param(p, SESSION_NEW)
    mode = chosen_mode or ls.settings.permission_mode
    model = model_param(p, SESSION_NEW)
    cwd_text = field(p, "cwd", str, SESSION_NEW)
    resume_id = field(p, "sessionId", str, SESSION_NEW)
    worktree = field(p, "worktree", str, SESSION_NEW)
    if resume_id is not None:
        return await resume(ls, resume_id, cwd=cwd_text, model=model, mode=chosen_mode)
    if cwd_text is None:
        raise JsonRpcInvalidParams(f"{SESSION_NEW}: 'cwd' is required")
    cwd = existing_dir(cwd_text, "cwd", SESSION_NEW)
    session = open_session(ls, cwd=cwd, model=model, permission_mode=mode)
    run_task(announce(ls, session), "workspace trust of a new session")
    if worktree is None:
        return {"sessionId": session.id}
    try:
        entered = await session.worktrees.enter(worktree or None)
    except IsolationError as exc:
        ls.sessions.discard(session.id)
        raise JsonRpcInvalidParams(f"{SESSION_NEW}: {exc}") from exc
    return {"sessionId": session.id, "worktree": entered.to_json()}


async def chat_send(ls: WaveServer, params: object) -> dict[str, object]:
    """``wave/chat/send``: one turn; its status, text and usage when it ends."""
    from wave_ls.session import SessionBusy

    p = require_object(params, CHAT_SEND)
    registry = ls.sessions
    session = registry.get(required_str(p, "sessionId", CHAT_SEND), CHAT_SEND)
    text = required_str(p, "text", CHAT_SEND)
    sink = registry.sinks[session.id]
    try:
        result = await session.send(text)
    except SessionBusy as exc:
        raise JsonRpcServerError(str(exc), SESSION_BUSY_CODE) from exc
    except asyncio.CancelledError:
        sink.flush()
        return {"status": "cancelled", "text": "", "usage": session.usage.to_json()}
    sink.flush()
    reply: dict[str, object] = {
        "status": result.status,
        "text": result.text,
        "usage": result.usage.to_json(),
    }
    if result.error:
        reply["error"] = result.error
    return reply


async def session_messages(ls: WaveServer, params: object) -> dict[str, object]:
    """``wave/session/messages``: a live or saved session's transcript."""
    p = require_object(params, SESSION_MESSAGES)
    session_id = required_str(p, "sessionId", SESSION_MESSAGES)
    session = ls.sessions.sessions.get(session_id)
    if session is not None:
        return {"messages": [message.to_json() for message in session.messages]}
    saved = None
    if valid_session_id(session_id):
        saved = await saved_session(ls, session_id, SESSION_MESSAGES)
    if saved is None:
        raise JsonRpcInvalidParams(f"{SESSION_MESSAGES}: unknown sessionId {session_id!r}")
    return {"messages": [message.to_json() for message in saved.messages]}


async def session_list(ls: WaveServer, params: object) -> dict[str, object]:
    """``wave/session/list``: the saved sessions (of ``cwd`` when given), live ones marked."""
    from wave_ls.runtime.session_index import list_sessions

    p = require_object(params if params is not None else {}, SESSION_LIST)
    cwd_text = field(p, "cwd", str, SESSION_LIST)
    cwd = absolute_path(cwd_text, "cwd", SESSION_LIST) if cwd_text is not None else None
    saved = await asyncio.to_thread(list_sessions, ls.home, cwd)
    live = ls.sessions.sessions
    return {"sessions": [summary.to_json(live=summary.session_id in live) for summary in saved]}


async def session_close(ls: WaveServer, params: object) -> dict[str, bool]:
    """``wave/session/close``: whether a live session was closed."""
    p = require_object(params, SESSION_CLOSE)
    session = ls.sessions.sessions.get(required_str(p, "sessionId", SESSION_CLOSE))
    if session is None or session.closed:
        return {"closed": False}
    await ls.sessions.close(session.id)
    return {"closed": True}


def session_cancel(ls: WaveServer, params: object) -> dict[str, bool]:
    """``wave/session/cancel``: whether a running turn was cancelled."""
    p = require_object(params, SESSION_CANCEL)
    session = ls.sessions.get(required_str(p, "sessionId", SESSION_CANCEL), SESSION_CANCEL)
    return {"cancelled": session.cancel_turn()}


async def session_compact(ls: WaveServer, params: object) -> dict[str, object]:
    """``wave/session/compact``: the conversation summarised, tokens before and after."""
    from wave_ls.runtime.core import ModelError
    from wave_ls.session import SessionBusy

    p = require_object(params, SESSION_COMPACT)
    session = ls.sessions.get(required_str(p, "sessionId", SESSION_COMPACT), SESSION_COMPACT)
    instructions = field(p, "instructions", str, SESSION_COMPACT)
    try:
        done = await session.compact(instructions or None)
    except SessionBusy as exc:
        raise JsonRpcInvalidParams(f"{SESSION_COMPACT}: {exc}") from exc
    except ModelError as exc:
        raise JsonRpcServerError(f"{SESSION_COMPACT}: {exc}", COMPACT_FAILED_CODE) from exc
    ls.sessions.sinks[session.id].flush()
    return {
        "compacted": done.compacted,
        "tokensBefore": done.tokens_before,
        "tokensAfter": done.tokens_after,
    }


def session_configure(ls: WaveServer, params: object) -> dict[str, str]:
    """``wave/session/configure``: the permission mode and model, changed when given."""
    p = require_object(params, SESSION_CONFIGURE)
    session = ls.sessions.get(required_str(p, "sessionId", SESSION_CONFIGURE), SESSION_CONFIGURE)
    mode = permission_mode_param(p, SESSION_CONFIGURE)
    model = model_param(p, SESSION_CONFIGURE)
    if model is not None and not model.strip():
        raise JsonRpcInvalidParams(f"{SESSION_CONFIGURE}: 'model' must not be empty")
    mode_now, model_now = session.configure(permission_mode=mode, model=model)
    return {"permissionMode": mode_now, "model": model_now}


HANDLERS = {
    SESSION_NEW: session_new,
    CHAT_SEND: chat_send,
    SESSION_MESSAGES: session_messages,
    SESSION_LIST: session_list,
    SESSION_CLOSE: session_close,
    SESSION_CANCEL: session_cancel,
    SESSION_COMPACT: session_compact,
    SESSION_CONFIGURE: session_configure,
}


async def resume(
    ls: WaveServer,
    session_id: str,
    *,
    cwd: str | None,
    model: str | None,
    mode: PermissionMode | None,
) -> dict[str, object]:
    """``wave/session/new`` with a ``sessionId``: the live session, else the saved one opened
    again (``open_saved``) in the mode it last had unless the client asks for another."""
    from wave_ls.session import CannotResume, open_saved

    registry = ls.sessions
    if session_id in registry.sessions:
        return {"sessionId": session_id, "resumed": True}

    def reopen(saved: Resume) -> AgentSession:
        live = registry.sessions.get(session_id)
        if live is not None:  # resumed by a request that came while this one read the disk
            return live
        session = open_session(
            ls,
            cwd=saved.cwd,
            model=saved.model,
            permission_mode=saved.permission_mode,
            session_id=session_id,
            messages=saved.messages,
        )
        run_task(announce(ls, session), "workspace trust of a resumed session")
        return session

    try:
        session = await open_saved(
            ls.home,
            session_id,
            reopen,
            cwd=cwd,
            model=model,
            permission_mode=mode,
            configured_model=ls.settings.model,
            default_mode=ls.settings.permission_mode,
        )
    except CannotResume as error:
        raise JsonRpcInvalidParams(f"{SESSION_NEW}: {error}") from None
    return {"sessionId": session.id, "resumed": True}


async def saved_session(ls: WaveServer, session_id: str, method: str) -> SavedSession | None:
    """A saved session (None: none saved); InvalidParams saying why for a transcript that is
    not loaded (too big, not a regular file)."""
    from wave_ls.session import CannotResume, load_saved

    try:
        return await load_saved(ls.home, session_id)
    except CannotResume as error:
        raise JsonRpcInvalidParams(f"{method}: {error}") from None


def permission_mode_param(p: dict[str, object], method: str) -> PermissionMode | None:
    """``permissionMode`` when given: one of the four modes, else InvalidParams."""
    mode = field(p, "permissionMode", str, method)
    if mode is not None and mode not in PERMISSION_MODES:
        raise JsonRpcInvalidParams(
            f"{method}: permissionMode must be one of {', '.join(PERMISSION_MODES)}, got {mode!r}"
        )
    return cast(PermissionMode | None, mode)
