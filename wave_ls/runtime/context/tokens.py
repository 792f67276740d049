"""Token counts without a tokenizer: the endpoint's reported usage where it has one, and a
character estimate for what it has not seen yet.

Tokenizers differ (2.5 to 5 characters a token for code and English); the estimate is
``CHARS_PER_TOKEN`` characters a token, scaled by what the endpoint last reported for a
request whose size we know (``calibrated``), so estimates drift only for text not yet sent.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from wave_ls.runtime.core import Message

CHARS_PER_TOKEN = 4.0
# Per message: role, separators and the template's markers.
MESSAGE_OVERHEAD_CHARS = 16


def message_chars(message: Message) -> int:
    """The characters one message adds to a request (content, tool calls, overhead)."""
    chars = len(message.content) + MESSAGE_OVERHEAD_CHARS
    for call in message.tool_calls:
        chars += len(call.name) + len(call.arguments) + len(call.id) + 24
    return chars


def request_chars(
    system: Iterable[dict[str, Any]], messages: Sequence[Message], tools: list[dict[str, Any]]
) -> int:
    """The characters of a whole request: the leading system/reminder messages (as sent),
    the conversation's messages and the tool schemas."""
    chars = sum(len(str(m.get("content") or "")) + MESSAGE_OVERHEAD_CHARS for m in system)
    chars += sum(message_chars(m) for m in messages)
    if tools:
        chars += len(json.dumps(tools, ensure_ascii=False))
    return chars


def chars_to_tokens(chars: int, ratio: float = 1.0) -> int:
    """Estimated tokens of ``chars`` characters (``ratio``: the calibration, 1 = none)."""
    return int(chars / CHARS_PER_TOKEN * ratio + 0.5)


def calibrated(prompt_tokens: int, chars: int) -> float | None:
    """The ratio of reported to estimated tokens for one request, within sane bounds; None
    when the request tells nothing (no usage, a tiny request)."""
    estimate = chars / CHARS_PER_TOKEN
    if prompt_tokens <= 0 or estimate < 200:
        return None
    return min(2.0, max(0.5, prompt_tokens / estimate))


def tools_ignored(prompt_tokens: int, chars_without_tools: int, tools_chars: int) -> bool:
    """Whether the endpoint's prompt count leaves the tool schemas out (a chat template
    without tool support drops them silently). Only told apart when the tools are most of
    the request (a conversation's first rounds): then the counts differ by far more than
    tokenizers do (2.5-5 characters a token)."""
    tools = tools_chars / CHARS_PER_TOKEN
    rest = chars_without_tools / CHARS_PER_TOKEN
    if prompt_tokens <= 0 or tools < 500 or rest > tools / 2:
        return False
    return prompt_tokens < rest + 0.3 * tools
