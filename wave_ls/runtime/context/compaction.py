"""Compaction: a summary in place of the oldest messages, the transcript kept whole.

The conversation's list of messages keeps everything. A compaction appends one message of
kind ``compacted`` (role user, ``meta.kind == "compacted"``): its text is the summary, and
``meta.kept`` says how many messages just before it are still sent verbatim (the last few
exchanges). What a request carries from then on (``sent_messages``) is that summary, the
kept messages and everything after it; a resumed session reads the same list and sends the
same.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from wave_ls.runtime.context.tokens import message_chars
from wave_ls.runtime.core import Message

KIND = "compacted"
# The most exchanges (a user message and what followed it) kept verbatim.
MAX_KEPT_EXCHANGES = 2
# In the summary request: the most characters of one tool output, one call's arguments.
TOOL_OUTPUT_CHARS = 3_000
ARGUMENT_CHARS = 600

SUMMARY_SYSTEM = (
    "You summarize a coding session between a user and wave, a coding agent, so that the "
    "agent can continue the work from your summary alone. Write only the summary."
)

SUMMARY_INSTRUCTIONS = """\
Summarize the conversation above for the agent that continues it: it will see only your \
summary and the latest messages. In short sections:
1. The user's requests: every request and instruction, in the user's words where they matter.
2. Decisions and findings: what was decided, learned or ruled out, and why.
3. Files: each file read, created or changed, and what changed.
4. Open work: what is done, what is left, and the exact next step.
5. Background tasks and worktrees: what still runs, what was kept (see the state below).
Be specific (names, paths, commands, error messages); leave out pleasantries."""

MARKER_TEXT = """\
This session was compacted to fit the model's context window: the earlier conversation is \
summarized below (the user still sees all of it).{go_on}

<summary>
{summary}
</summary>"""

GO_ON = " Continue the current task from where it stopped; do not ask the user to repeat it."


def is_marker(message: Message) -> bool:
    return message.meta.get("kind") == KIND


def marker_index(messages: Sequence[Message]) -> int | None:
    """Where the last compaction is in ``messages``, if there was one."""
    for index in range(len(messages) - 1, -1, -1):
        if is_marker(messages[index]):
            return index
    return None


def sent_messages(messages: Sequence[Message]) -> list[Message]:
    """What a request carries of ``messages``: all of them, or since the last compaction
    its summary, the messages it kept and what came after."""
    index = marker_index(messages)
    if index is None:
        return list(messages)
    kept = messages[index].meta.get("kept", 0)
    kept = kept if isinstance(kept, int) and 0 <= kept <= index else 0
    return [messages[index], *messages[index - kept : index], *messages[index + 1 :]]


def tail_start(
    messages: Sequence[Message], budget_chars: int, max_exchanges: int = MAX_KEPT_EXCHANGES
) -> int:
    """Where the verbatim tail of ``messages`` begins (after the last compaction, at a user
    message of its own: never a reminder, a tool result or a notice), within
    ``budget_chars`` and at most ``max_exchanges`` exchanges; ``len(messages)`` when
    nothing fits."""
    marker = marker_index(messages)
    first = 0 if marker is None else marker + 1
    best = len(messages)
    size = 0
    exchanges = 0
    for index in range(len(messages) - 1, first - 1, -1):
        size += message_chars(messages[index])
        if size > budget_chars:
            break
        if starts_exchange(messages[index]):
            exchanges += 1
            if exchanges > max_exchanges:
                break
            best = index
    return best


def starts_exchange(message: Message) -> bool:
    meta = message.meta
    return (
        message.role == "user"
        and not meta.get("reminder")
        and not meta.get("isMeta")
        and not is_marker(message)
    )


def flatten(messages: Sequence[Message], budget_chars: int) -> str:
    """The conversation as plain text for the summary request, within ``budget_chars``:
    long tool outputs and arguments shortened, and when that is not enough the oldest
    messages after the first (the original request) left out."""
    parts = [_flat(message) for message in messages]
    total = sum(len(part) for part in parts)
    dropped = 0
    # The first part (a previous summary, or the user's first request) is always kept.
    while total > budget_chars and len(parts) > 2:
        total -= len(parts.pop(1))
        dropped += 1
    if dropped:
        parts.insert(1, f"[... {dropped} earlier messages left out: too long to summarize ...]")
    text = "\n\n".join(parts)
    if len(text) > budget_chars:  # one message alone is too long: its start and end
        half = budget_chars // 2
        text = text[:half] + "\n[... cut ...]\n" + text[-half:]
    return text


def _flat(message: Message) -> str:
    if is_marker(message):
        return f"[summary of the conversation before]\n{message.content}"
    if message.role == "tool":
        return (
            f"[result of {message.name or 'a tool'}]\n{_clip(message.content, TOOL_OUTPUT_CHARS)}"
        )
    label = "[user]" if message.role == "user" else f"[{message.role}]"
    if message.meta.get("reminder") or message.meta.get("isMeta"):
        label = "[note to the agent]"
    lines = [f"{label}\n{message.content}" if message.content else label]
    for call in message.tool_calls:
        lines.append(f"[called {call.name} {_clip(call.arguments, ARGUMENT_CHARS)}]")
    return "\n".join(lines)


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n[... {len(text) - limit:,} characters left out ...]\n{text[-half:]}"


def summary_messages(
    conversation: str, state: str, instructions: str | None
) -> list[dict[str, Any]]:
    """The summary request's messages."""
    request = f"<conversation>\n{conversation}\n</conversation>\n\n{SUMMARY_INSTRUCTIONS}"
    if state:
        request += f"\n\nThe state of the session now:\n{state}"
    if instructions:
        request += f"\n\nThe user's instructions for this summary: {instructions}"
    return [{"role": "system", "content": SUMMARY_SYSTEM}, {"role": "user", "content": request}]


def marker_message(
    summary: str, *, kept: int, before: int, after: int, reason: str, mid_turn: bool
) -> Message:
    """The ``compacted`` message that carries the summary."""
    text = MARKER_TEXT.format(summary=summary.strip(), go_on=GO_ON if mid_turn else "")
    meta = {"kind": KIND, "kept": kept, "tokensBefore": before, "tokensAfter": after}
    meta["reason"] = reason
    return Message("user", text, meta=meta)
