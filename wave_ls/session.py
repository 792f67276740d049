"""A main-agent chat session: the SDK's entry point, used by the server and the CLI.

A session owns one ``Conversation`` plus what surrounds it: the working directory, the model,
the permission mode, the session-wide services tools use, the transcript, and the mention
reminders added to each user message.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from wave_ls.agents import AgentCatalog
from wave_ls.chat_input.mentions import (
    file_mention_reminder,
    find_agent_mentions,
    find_file_mentions,
    mention_reminder,
)
from wave_ls.runtime.core import (
    EventSink,
    Message,
    ModelClient,
    PermissionAsker,
    PermissionMode,
    PermissionRequest,
    Tool,
    ToolContext,
)
from wave_ls.runtime.loop import AgentConfig, Conversation, DenyAll, TurnResult
from wave_ls.runtime.memory import memory_reminder_for
from wave_ls.runtime.prompts import main_system_prompt
from wave_ls.runtime.tools import builtin_tools
from wave_ls.runtime.transcript import TranscriptWriter, load_transcript, transcript_path
from wave_ls.subagents.activity import SubagentListener
from wave_ls.subagents.agent_tool import AgentTool
from wave_ls.subagents.runner import SubagentHost


class SessionBusy(Exception):
    """A message was sent while the session's previous turn is still running."""


class AgentSession:
    """One chat with the main agent."""

    def __init__(
        self,
        *,
        cwd: Path,
        home: Path,
        model: str,
        client: ModelClient,
        session_id: str | None = None,
        permission_mode: PermissionMode = "default",
        sink: EventSink | None = None,
        asker: PermissionAsker | None = None,
        services: dict[str, Any] | None = None,
        tools: Sequence[Tool] | None = None,
        messages: Sequence[Message] = (),
        persist: bool = True,
        catalog: Callable[[], AgentCatalog] | None = None,
        listeners: Sequence[SubagentListener] = (),
    ) -> None:
        self.id = session_id or uuid.uuid4().hex
        self.cwd = cwd.resolve()
        self.home = home
        self.services: dict[str, Any] = dict(services or {})
        self.catalog = catalog
        self.transcript: TranscriptWriter | None = None
        if persist:
            self.transcript = TranscriptWriter(transcript_path(home, self.id))
            if not messages:
                self.transcript.write_header(
                    session_id=self.id,
                    cwd=str(self.cwd),
                    model=model,
                    permission_mode=permission_mode,
                )
        all_tools = list(tools) if tools is not None else builtin_tools()
        if catalog is not None:
            self.subagents = SubagentHost(
                client=client,
                catalog=catalog,
                parent_config=lambda: self.conversation.config,
                asker=asker or DenyAll(),
                memory_cwd=self.cwd,
                home=home,
                listeners=list(listeners),
            )
            self.services["subagents"] = self.subagents
            all_tools.append(AgentTool(self.subagents))
        config = AgentConfig(
            system_prompt=main_system_prompt(self.cwd),
            model=model,
            tools=all_tools,
            permission_mode=permission_mode,
            context_reminder=lambda: memory_reminder_for(self.cwd, self.home),
        )
        self.services["plan_mode"] = PlanModeExit(self)
        context = ToolContext(cwd=self.cwd, home=home, session_id=self.id, services=self.services)
        self.conversation = Conversation(
            config,
            client,
            context,
            sink=sink,
            asker=asker,
            messages=list(messages),
            on_append=self.transcript.append if self.transcript else None,
        )
        self._lock = asyncio.Lock()

    @property
    def busy(self) -> bool:
        return self._lock.locked()

    @property
    def messages(self) -> list[Message]:
        return self.conversation.messages

    @property
    def model(self) -> str:
        return self.conversation.config.model

    async def send(self, text: str) -> TurnResult:
        """Run one turn for the user's ``text``; raises ``SessionBusy`` if one is running."""
        if self._lock.locked():
            raise SessionBusy(f"session {self.id} is still answering the previous message")
        async with self._lock:
            return await self.conversation.run_turn(self.user_messages(text))

    def user_messages(self, text: str) -> list[Message]:
        """The user's message verbatim, then the reminders its mentions call for."""
        out = [Message("user", text)]
        files = find_file_mentions(text)
        file_reminder = file_mention_reminder(files, self.cwd) if files else None
        if file_reminder:
            out.append(Message("user", file_reminder, meta={"reminder": "file"}))
        agents = find_agent_mentions(text)
        choices = [(a.name, a.description) for a in self.catalog().agents] if self.catalog else []
        reminder = mention_reminder(agents, choices) if agents else None
        if reminder:
            out.append(Message("user", reminder, meta={"reminder": "agent"}))
        return out


class PlanModeExit:
    """``ExitPlanMode``'s approval step: the user approves the plan, the session leaves plan
    mode (to ``default``, so edits are still asked for)."""

    def __init__(self, session: AgentSession) -> None:
        self.session = session

    async def exit(self, plan: str) -> bool:
        config = self.session.conversation.config
        if config.permission_mode != "plan":
            return True
        request = PermissionRequest(
            "ExitPlanMode", {"plan": plan}, "exit plan mode and start implementing the plan"
        )
        decision = await self.session.conversation.asker.ask(request)
        if decision.allowed:
            config.permission_mode = "default"
        return decision.allowed


def resume_messages(home: Path, session_id: str) -> tuple[dict[str, Any], list[Message]] | None:
    """The header and messages of a saved session, or None when there is no transcript."""
    path = transcript_path(home, session_id)
    if not path.exists():
        return None
    return load_transcript(path)
