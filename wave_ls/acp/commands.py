"""The subagents a session sees, offered to the client as ACP commands.

One command per subagent, named exactly as the subagent; running it (``/<name> <task>``)
sends the task as an ``[@agent:<name>]`` mention (``prompt.py``). The list is sent after
``session/new`` and ``session/load``, and again whenever it changes: agent files are
re-read every ``POLL_SECONDS`` (``AgentRegistry.load`` only stats them when nothing
changed) and after every turn. Commands of the agent's own (``/trust``, see ``trust.py``)
follow the subagents, unless a subagent has their name.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence

from acp.helpers import update_available_commands
from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

from wave_ls.acp.outbox import Outbox
from wave_ls.agents import AgentCatalog
from wave_ls.runtime.background_work import run_task

log = logging.getLogger(__name__)

POLL_SECONDS = 1.0
DESCRIPTION_LIMIT = 200
HINT = "the task for this subagent"


def commands_of(catalog: AgentCatalog) -> list[AvailableCommand]:
    return [
        AvailableCommand(
            name=agent.name,
            description=_one_line(agent.description),
            input=AvailableCommandInput(root=UnstructuredCommandInput(hint=HINT)),
        )
        for agent in catalog.agents
    ]


def _one_line(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= DESCRIPTION_LIMIT else flat[: DESCRIPTION_LIMIT - 1] + "…"


class CommandsAnnouncer:
    """Keeps one session's client up to date with its subagents."""

    def __init__(
        self,
        session_id: str,
        outbox: Outbox,
        catalog: Callable[[], AgentCatalog],
        own: Callable[[], Sequence[AvailableCommand]] = tuple,
    ) -> None:
        self.session_id = session_id
        self.outbox = outbox
        self.catalog = catalog
        self.own = own  # the agent's own commands offered now
        self.sent: list[AvailableCommand] | None = None
        self.names: frozenset[str] = frozenset()
        self._watcher: asyncio.Task[None] | None = None
        self._kick = asyncio.Event()

    async def refresh(self) -> None:
        """Send the list if it differs from what the client has (always the first time)."""
        try:
            catalog = await asyncio.to_thread(self.catalog)
        except Exception:  # a broken folder must not end the session
            log.exception("session %s: the subagents could not be listed", self.session_id)
            return
        commands = commands_of(catalog)
        names = frozenset(command.name for command in commands)
        commands += [command for command in self.own() if command.name not in names]
        if commands != self.sent:
            self.sent = commands
            self.names = names  # the subagents' (a message starting /<name> mentions one)
            self.outbox.put(self.session_id, update_available_commands(commands))

    def announce(self) -> None:
        """Send the list (again) once the answer being sent has gone, then keep watching."""
        self.sent = None
        self._kick.set()
        if self._watcher is None:
            self._watcher = run_task(self._watch(), f"acp-commands-{self.session_id}")

    async def _watch(self) -> None:
        while True:
            self._kick.clear()
            await self.refresh()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._kick.wait(), POLL_SECONDS)

    async def stop(self) -> None:
        if self._watcher is not None:
            self._watcher.cancel()
            await asyncio.gather(self._watcher, return_exceptions=True)
            self._watcher = None
