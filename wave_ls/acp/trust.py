"""Workspace trust over ACP: asked once per folder with ``session/request_permission``.

At the first ``session/prompt`` of a session whose folder needs a decision (something the
repository ships is held back and the user never said; ``runtime/trust.py``), the agent
shows a tool call "Trust <root>?" listing what is held back, and asks with two options:
``allow_always`` "Trust this folder" and ``reject_always`` "Don't trust". The answer is
kept under ``~/.wave/trust.json`` (for the repository root), so the folder is never asked
about again; a cancelled request keeps nothing (asked again in a later session). While the
folder is not trusted, the session says once, as message text, what is held back, and
offers the command ``/trust``, which asks again (also after "Don't trust") without a turn.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import TYPE_CHECKING

from acp.schema import (
    AvailableCommand,
)

from wave_ls.acp import question
from wave_ls.acp.outbox import Outbox

if TYPE_CHECKING:
    from wave_ls.runtime.trust import TrustStatus

log = logging.getLogger(__name__)

LIFTED_BY = (
    "What the folder's own files say for the model (agent files, memory, rules) still loads."
)

TRUST_COMMAND = AvailableCommand(
    name="trust",
    description=(
        "Decide again whether to trust this folder: its committed hooks, sandbox settings, "
        "permission rules and MCP servers apply only once it is trusted"
    ),
)


def is_trust_command(text: str, subagents: frozenset[str]) -> bool:
    """``/trust`` as the whole message, when no subagent is named ``trust``."""
    return text.strip() == f"/{TRUST_COMMAND.name}" and TRUST_COMMAND.name not in subagents


def shown_path(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix() or "."
    except ValueError:
        return str(path)


def held_back_lines(status: TrustStatus) -> list[str]:
    """One Markdown list line per thing held back: its detail and its file."""
    return [
        f"- {item.detail} (`{shown_path(item.path, status.root)}`)" for item in status.held_back
    ]


def question_text(status: TrustStatus) -> str:
    """The body of the "Trust <root>?" tool call."""
    return "\n".join(
        [
            "This folder's repository ships settings that run code or loosen the rules. "
            "Until you trust it, wave-ls holds them back:",
            *held_back_lines(status),
            "",
            "Trusting applies them (hooks run as you, unsandboxed). " + LIFTED_BY,
        ]
    )


def notice_text(status: TrustStatus) -> str:
    """What the session says once when it runs with something held back."""
    why = (
        "you chose not to trust it"
        if status.decision is False
        else "it is not trusted (nobody answered the trust question)"
    )
    return "\n".join(
        [
            f"_wave-ls is holding back this folder's own settings because {why}:_",
            *held_back_lines(status),
            "",
            f"_{LIFTED_BY} To decide again: send `/trust`._",
            "",
            "",
        ]
    )


def decided_text(status: TrustStatus) -> str:
    """The answer to ``/trust``."""
    if status.trusted:
        return f"_Trusted `{status.root}`: its own settings apply from the next turn._\n"
    if not status.held_back:
        return f"_Nothing in `{status.root}` waits for trust: it works as it is._\n"
    return notice_text(status)


class TrustAsker:
    """Asks one ACP client whether to trust a folder, as a tool call of the session."""

    def __init__(self, request: question.Request, outbox: Outbox) -> None:
        self.request = request  # the connection's request_permission
        self.outbox = outbox

    async def ask(self, session_id: str, status: TrustStatus) -> bool | None:
        """True (trust), False (don't), None (cancelled or the client failed)."""
        return await question.ask(
            self.request,
            self.outbox,
            session_id,
            question.Question(
                topic="trust",
                title=f"Trust {status.root}?",
                text=question_text(status),
                choices=("Trust this folder", "Don't trust"),
                results=("Trusted", "Not trusted"),
                raw_input={
                    "root": str(status.root),
                    "heldBack": [item.kind for item in status.held_back],
                },
                output_key="trusted",
            ),
        )
