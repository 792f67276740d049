"""The live sessions of one server, by id, with the sink that reports each to the client."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pygls.exceptions import JsonRpcInvalidParams

from wave_ls.server.updates import SessionUpdateSink

if TYPE_CHECKING:
    from wave_ls.session import AgentSession


class SessionRegistry:
    def __init__(self) -> None:
        self.sessions: dict[str, AgentSession] = {}
        self.sinks: dict[str, SessionUpdateSink] = {}

    def add(self, session: AgentSession, sink: SessionUpdateSink) -> None:
        self.sessions[session.id] = session
        self.sinks[session.id] = sink

    def discard(self, session_id: str) -> None:
        self.sessions.pop(session_id, None)
        self.sinks.pop(session_id, None)

    async def close(self, session_id: str) -> None:
        """End a live session (``AgentSession.close``) and forget it; its last updates are
        sent first."""
        session = self.sessions[session_id]
        await session.close()
        self.sinks[session_id].flush()
        self.discard(session_id)

    async def close_all(self) -> None:
        """End every session at once (shutdown, ``session.close_all``): turns cancelled,
        background tasks stopped (their stop rules run), transcripts closed."""
        if not self.sessions:
            return  # without importing the runtime (~0.15 s) only to find nothing to end
        from wave_ls.session import close_all

        await close_all(list(self.sessions), self.close)

    def get(self, session_id: str, method: str) -> AgentSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise JsonRpcInvalidParams(f"{method}: unknown sessionId {session_id!r}")
        return session
