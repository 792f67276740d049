"""``/compact`` over ACP: the session's history summarized on demand.

Offered as a command of the agent's own (after the subagents, unless one has its name);
``/compact <instructions>`` says what the summary must keep. It runs the runtime's
compaction (``AgentSession.compact``, as ``wave/session/compact`` over LSP); during a running
turn it answers that it cannot. The outcome is one message line, "conversation compacted
(N -> M tokens)", sent by ``updates.py`` from the session's ``compacted`` event.
"""

from __future__ import annotations

from acp.schema import AvailableCommand, AvailableCommandInput, UnstructuredCommandInput

COMPACT_COMMAND = AvailableCommand(
    name="compact",
    description=(
        "Summarize the conversation so far to free the model's context window "
        "(optionally: what the summary must keep)"
    ),
    input=AvailableCommandInput(
        root=UnstructuredCommandInput(hint="what the summary must keep (optional)")
    ),
)


def compact_instructions(text: str, subagents: frozenset[str]) -> str | None:
    """The instructions of a ``/compact [instructions]`` message (``""`` for none), else None
    (another message, or a subagent is named ``compact``)."""
    name = COMPACT_COMMAND.name
    stripped = text.strip()
    if name in subagents or not stripped.startswith(f"/{name}"):
        return None
    rest = stripped[len(name) + 1 :]
    if rest and not rest[0].isspace():
        return None  # /compactor: not the command
    return rest.strip()


def compacted_line(before: int, after: int) -> str:
    return f"\n\n_conversation compacted ({before:,} -> {after:,} tokens)_\n\n"


def busy_line() -> str:
    return (
        "The conversation cannot be compacted while a turn is running: "
        "send /compact once it has ended (or cancel it first)."
    )


def nothing_line() -> str:
    return "There is nothing to compact yet."
