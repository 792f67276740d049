"""The MCP servers of a process: shared by the sessions of one folder, started in the
background, stopped with the last session of that folder.

- ``McpManager.open(folder, home, owner)`` gives a session (or a subagent) an
  ``McpHandle``: the folder's servers (``.mcp.json``, local and user settings) plus the
  handle's own (ACP-given, or a subagent's inline ones), gated (``gate.py``) and started in
  the background by ``start`` (nobody waits for them: their tools join from the round after
  they connect, and ``take_notes`` tells the model which are still starting).
- ``close`` lets go; the folder's servers stop with its last handle.
- ``list`` and ``approve`` are what ``wave/mcp/list`` and ``wave/mcp/approve`` answer;
  ``on_change`` hears each status change (``mcpStatus`` updates).

Statuses: ``starting``, ``connected``, ``failed``, ``needs-approval``, ``disabled``, and
``stopped`` (allowed, but no session of the folder runs it now).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wave_ls.mcp import status_events
from wave_ls.mcp.config import (
    FolderConfig,
    ServerSpec,
    folder_config,
    tool_name_part,
    tool_timeout,
)
from wave_ls.mcp.connection import Connection
from wave_ls.mcp.gate import Gate, gate
from wave_ls.mcp.status_events import Listener
from wave_ls.mcp.tools import McpTool, ResourceTools
from wave_ls.runtime.background_work import run_task
from wave_ls.runtime.core import Message, Tool

log = logging.getLogger(__name__)


@dataclass
class Server:
    """One defined server, what its gate says, and its connection once started."""

    spec: ServerSpec
    gate: Gate
    connection: Connection | None = None

    @property
    def status(self) -> str:
        if self.gate.verdict != "allowed":
            return self.gate.verdict
        return self.connection.status if self.connection is not None else "stopped"

    @property
    def error(self) -> str | None:
        if self.gate.verdict != "allowed":
            return self.gate.reason or None
        return self.connection.error if self.connection is not None else None

    def tool_names(self) -> list[str]:
        connection = self.connection
        if connection is None or self.gate.verdict != "allowed":
            return []
        from wave_ls.mcp.tools import full_name

        return [full_name(self.spec.name, tool.name) for tool in connection.tools]

    def to_json(self) -> dict[str, Any]:
        """One item of ``wave/mcp/list`` (and of an ``mcpStatus`` update)."""
        out: dict[str, Any] = {
            "name": self.spec.name,
            "scope": self.spec.scope,
            "transport": self.spec.transport,
            "command": self.spec.describe(),  # what it runs or where it connects
            "status": self.status,
            "tools": self.tool_names(),
        }
        error = self.error
        if error:
            out["error"] = error
        return out


class UnknownServer(KeyError):
    """No server of that name is defined for the folder."""


class McpManager:
    """Every folder's servers in this process."""

    def __init__(self, listeners: list[Listener] | None = None) -> None:
        self._folders: dict[Path, FolderServers] = {}
        self._listeners: list[Listener] = listeners if listeners is not None else []

    def on_change(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def _tell(self, folder: Path, owner: str | None, server: Server) -> None:
        row = server.to_json()
        for listener in list(self._listeners):
            try:
                listener(folder, owner, row)
            except Exception:
                log.exception("an MCP status listener failed")

    def _folder(self, folder: Path, home: Path) -> FolderServers:
        folder = folder.resolve()
        current = self._folders.get(folder)
        loop = _running_loop()
        if current is not None and current.loop is not loop and (loop or current.loop):
            # A folder left behind by another event loop (its tasks are gone with it).
            current = None
        if current is None or current.home != home:
            current = self._folders[folder] = FolderServers(self, folder, home)
        return current

    def open(
        self, folder: Path, home: Path, owner: str, extra: Sequence[ServerSpec] = ()
    ) -> McpHandle:
        """A handle on ``folder``'s servers plus ``extra`` (owned by ``owner``: started for
        it and stopped with it). Reads the settings; starts nothing (``McpHandle.start``)."""
        servers = self._folder(folder, home)
        handle = McpHandle(servers, owner, extra)
        servers.handles.append(handle)
        return handle

    async def list(self, folder: Path, home: Path) -> list[dict[str, Any]]:
        """``wave/mcp/list``: every server of the folder and of its live handles."""
        servers = self._folders.get(folder.resolve())
        if servers is None or servers.home != home:
            servers = FolderServers(self, folder.resolve(), home)
        await asyncio.to_thread(servers.read_config)
        if servers.handles:  # what changed applies; nothing starts before its session does
            servers.apply(start=any(handle.started for handle in servers.handles))
        return [server.to_json() for server in servers.listed()]

    async def approve(self, folder: Path, home: Path, name: str, approved: bool) -> str:
        """Keep the user's answer for the server ``name`` of ``folder``; its status after
        it (a server now allowed starts if a session of the folder is open; one refused
        stops). ``UnknownServer`` when no such server is defined."""
        from wave_ls.mcp import approvals

        servers = self._folders.get(folder.resolve())
        if servers is None or servers.home != home:
            servers = FolderServers(self, folder.resolve(), home)
        await asyncio.to_thread(servers.read_config)
        found = servers.find(name)
        if found is None:
            raise UnknownServer(name)
        await asyncio.to_thread(
            approvals.keep, home, servers.folder, name, found.spec.definition_hash, approved
        )
        if servers.handles:
            servers.apply()
            for handle in servers.handles:
                handle.regate()
        else:
            servers.regate_listed()
        server = servers.find(name)
        return server.status if server is not None else "stopped"

    async def close_all(self) -> None:
        """Stop every server (shutdown)."""
        for servers in list(self._folders.values()):
            for handle in list(servers.handles):
                await handle.close()
        self._folders.clear()

    def forget(self, servers: FolderServers) -> None:
        if self._folders.get(servers.folder) is servers:
            del self._folders[servers.folder]


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:
        return None


class FolderServers:
    """The servers one folder defines (shared by its handles) and the handles on them."""

    def __init__(self, manager: McpManager, folder: Path, home: Path) -> None:
        self.manager = manager
        self.folder = folder
        self.home = home
        self.loop = _running_loop()
        self.config = FolderConfig(folder)
        self.servers: dict[str, Server] = {}
        self.handles: list[McpHandle] = []
        # Inline servers of agents that could not start (approval), so they can be listed
        # and approved after their subagent ended.
        self.agent_seen: dict[str, Server] = {}
        self._trusted: bool | None = None

    def trusted(self) -> bool:
        if self._trusted is None:
            from wave_ls.runtime.trust import is_trusted

            self._trusted = is_trusted(self.folder, self.home)
        return self._trusted

    def trust_granted(self) -> bool:
        """Whether the user trusted the folder since servers were held back for it (then
        they are gated again: a trust decision applies from the next round)."""
        held = [s for s in self.servers.values() if s.gate.reason.startswith("held back")]
        if not held:
            return False
        from wave_ls.runtime.trust import is_trusted

        if not is_trusted(self.folder, self.home):
            return False
        self._trusted = True
        return True

    def read_config(self) -> None:
        """Read the settings again (a changed definition replaces its server)."""
        self.config = folder_config(self.folder, self.home)
        self._trusted = None
        for warning in self.config.warnings:
            log.warning("%s", warning)

    def gate(self, spec: ServerSpec) -> Gate:
        return gate(spec, self.config, self.home, self.trusted)

    def apply(self, start: bool = True) -> None:
        """Match the servers to the configuration: new definitions added, changed or
        refused ones stopped, allowed ones started (``start``: a session runs)."""
        wanted = {spec.name: spec for spec in self.config.servers}
        for name, server in list(self.servers.items()):
            spec = wanted.get(name)
            if spec is None or spec.definition_hash != server.spec.definition_hash:
                self._stop(server)
                del self.servers[name]
        for name, spec in wanted.items():
            known = self.servers.get(name)
            was = known.status if known is not None else None
            if known is None:
                server = self.servers[name] = Server(spec, self.gate(spec))
            else:
                server = known
                server.gate = self.gate(spec)
                if server.gate.verdict != "allowed" and server.connection is not None:
                    self._stop(server)
            if server.gate.verdict == "allowed" and server.connection is None:
                if start:
                    self._start(server, None)  # tells "starting"
            elif server.status != was:
                self.manager._tell(self.folder, None, server)

    def regate_listed(self) -> None:
        """Without a handle: the gates only (nothing starts)."""
        self.servers = {spec.name: Server(spec, self.gate(spec)) for spec in self.config.servers}
        for seen in self.agent_seen.values():
            seen.gate = self.gate(seen.spec)

    def _start(self, server: Server, owner: str | None) -> None:
        connection = Connection(
            server.spec,
            str(self.folder),
            lambda _c: self.manager._tell(self.folder, owner, server),
        )
        server.connection = connection
        connection.start()

    def _stop(self, server: Server) -> None:
        connection, server.connection = server.connection, None
        if connection is not None:
            run_task(connection.stop(), f"wave-mcp-stop-{server.spec.name}")

    def listed(self) -> list[Server]:
        if not self.servers and not self.handles:
            self.regate_listed()
        out = list(self.servers.values())
        names = {server.spec.name for server in out}
        for handle in self.handles:
            for server in handle.own.values():
                out.append(server)
                names.add(server.spec.name)
        out.extend(s for name, s in self.agent_seen.items() if name not in names)
        return out

    def find(self, name: str) -> Server | None:
        for handle in self.handles:
            if name in handle.own:
                return handle.own[name]
        if name in self.servers:
            return self.servers[name]
        spec = self.config.get(name)
        if spec is not None:
            return Server(spec, self.gate(spec))
        return self.agent_seen.get(name)

    async def release(self, handle: McpHandle) -> None:
        if handle in self.handles:
            self.handles.remove(handle)
        if self.handles:
            return
        servers, self.servers = list(self.servers.values()), {}
        await asyncio.gather(
            *(s.connection.stop() for s in servers if s.connection is not None),
            return_exceptions=True,
        )
        for server in servers:
            server.connection = None
        self.manager.forget(self)


@dataclass
class _Notes:
    starting: set[str] = field(default_factory=set)
    failed: set[str] = field(default_factory=set)
    waiting: set[str] = field(default_factory=set)


class McpHandle:
    """One session's (or one subagent's) view of its servers."""

    def __init__(self, folder: FolderServers, owner: str, extra: Sequence[ServerSpec]) -> None:
        self.folder = folder
        self.owner = owner
        self.extra = list(extra)
        self.own: dict[str, Server] = {}
        self.started = False
        self._prepared = False
        self.closed = False
        self._told = _Notes()
        self._tools: dict[int, tuple[int, list[McpTool]]] = {}
        self._timeout = tool_timeout(folder.config)
        # What the first round needs to know without waiting: are there servers at all?
        self._defined = bool(extra) or _has_definitions(folder.folder, folder.home)

    @property
    def defined(self) -> bool:
        """Whether any server is defined for this handle (nothing to do otherwise)."""
        return self._defined

    def prepare(self) -> None:
        """Read the settings (a few small files) and gate each server, starting nothing
        (what the model is told before the servers start; idempotent)."""
        if self._prepared or self.closed or not self._defined:
            return
        self._prepared = True
        self.folder.read_config()
        self._timeout = tool_timeout(self.folder.config)
        self.folder.apply(start=False)
        self.regate(start=False)

    def start(self) -> None:
        """Start what may start, in the background: every server is ``starting`` (or held
        back) when this returns, and nothing waits for one (idempotent)."""
        if self.started or self.closed:
            return
        self.started = True
        if not self._defined:
            return
        self.prepare()
        self.folder.apply()
        self.regate()

    def regate(self, start: bool = True) -> None:
        """Gate the own servers again (after an answer) and start or stop them."""
        for spec in self.extra:
            server = self.own.get(spec.name)
            if server is None:
                server = self.own[spec.name] = Server(spec, self.folder.gate(spec))
            else:
                server.gate = self.folder.gate(spec)
            if server.gate.verdict == "allowed" and server.connection is None:
                self.folder.agent_seen.pop(spec.name, None)
                if start:
                    self.folder._start(server, self.owner)
            elif server.gate.verdict != "allowed":
                if server.connection is not None:
                    self.folder._stop(server)
                if spec.scope == "agent":
                    self.folder.agent_seen[spec.name] = server
                self.folder.manager._tell(self.folder.folder, self.owner, server)

    def servers(self) -> list[Server]:
        """This handle's servers: its own, then the folder's it does not shadow."""
        own = list(self.own.values())
        names = {server.spec.name for server in own}
        return [*own, *(s for s in self.folder.servers.values() if s.spec.name not in names)]

    def connections(self) -> list[Connection]:
        return [s.connection for s in self.servers() if s.connection is not None]

    def tools(self) -> list[Tool]:
        """The tools of every server that has connected (a stopped one keeps its tools: a
        call starts it again), then the resource tools when a server offers resources."""
        if not self._defined:
            return []
        out: list[Tool] = []
        resources = False
        for connection in self.connections():
            if not connection.connected_once:
                continue
            resources = resources or connection.resources
            cached = self._tools.get(id(connection))
            if cached is None or cached[0] != connection.tools_version:
                made = [McpTool(connection, t, lambda: self._timeout) for t in connection.tools]
                cached = self._tools[id(connection)] = (connection.tools_version, made)
            out.extend(cached[1])
        if resources:
            out.extend(ResourceTools(self.connections, self._timeout).tools())
        return out

    def take_notes(self) -> list[Message]:
        """What the model should hear before the next round (once each): servers still
        starting, servers that failed to start, servers waiting for the user's approval."""
        if not self._defined:
            return []
        self.prepare()
        if self.started and self.folder.trust_granted():
            self.folder.apply()
            self.regate()
        lines: list[str] = []
        starting = [
            s.spec.name
            for s in self.servers()
            if s.gate.verdict == "allowed"
            and (s.connection is None or s.connection.status == "starting")
            and s.spec.name not in self._told.starting
        ]
        if starting:
            self._told.starting.update(starting)
            names = ", ".join(starting)
            lines.append(
                f"MCP servers still starting: {names}. Their tools are not available yet; "
                "they join in a later request once the server is connected."
            )
        for server in self.servers():
            name, connection = server.spec.name, server.connection
            if server.status == "failed" and not (connection and connection.connected_once):
                if name not in self._told.failed:
                    self._told.failed.add(name)
                    lines.append(f"MCP server {name} failed to start: {server.error}")
            elif server.status == "needs-approval" and name not in self._told.waiting:
                self._told.waiting.add(name)
                lines.append(
                    f"MCP server {name} (from {server.spec.source}) waits for the user's "
                    "approval; its tools are not available until then."
                )
        if not lines:
            return []
        text = "<system-reminder>\n" + "\n".join(lines) + "\n</system-reminder>"
        return [Message("user", text, meta={"isMeta": True, "reminder": "mcp"})]

    async def wait_for(self, names: Collection[str] | None = None, timeout: float = 30.0) -> None:
        """Wait (at most ``timeout``) until the named servers (None: all) have connected or
        failed: a subagent that names its servers waits for them before its first round."""
        if not self._defined:
            return
        self.start()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(timeout):
                for server in self.servers():
                    # A name from a tools list is in its ``mcp__<server>__`` spelling.
                    spelled = (server.spec.name, tool_name_part(server.spec.name))
                    if server.connection is not None and (
                        names is None or any(name in names for name in spelled)
                    ):
                        await server.connection.wait_ready(timeout)

    async def close(self) -> None:
        """Stop the own servers; the folder's stop with its last handle."""
        if self.closed:
            return
        self.closed = True
        own, self.own = list(self.own.values()), {}
        await asyncio.gather(
            *(s.connection.stop() for s in own if s.connection is not None),
            return_exceptions=True,
        )
        await self.folder.release(self)


def _has_definitions(folder: Path, home: Path) -> bool:
    """Whether any file defines a server (a few stats; files are read in the background)."""
    from wave_ls.mcp.config import MCP_JSON

    candidates = [
        folder / MCP_JSON,
        folder / ".wave" / "settings.local.json",
        home / ".wave" / "settings.json",
    ]
    for path in candidates:
        try:
            if path.stat().st_size and (
                path.name == MCP_JSON or b"mcpServers" in path.read_bytes()
            ):
                return True
        except OSError:
            continue
    return False


_DEFAULT = McpManager(status_events.LISTENERS)


def default_manager() -> McpManager:
    """The process's manager (sessions of one folder share its servers)."""
    return _DEFAULT
