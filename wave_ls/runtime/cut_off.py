"""Replies cut off mid-way: a tool call whose arguments are no JSON object never enters the
history as sent (llama.cpp, among others, refuses every later request of a conversation
holding one: "Failed to parse tool call arguments as JSON").

Its arguments become ``{}``, the assistant message's ``meta.brokenArguments`` keeps the
start of what the model sent (the model never sees ``meta``), and the call's result tells
the model what happened and what to do instead.
"""

from __future__ import annotations

import json

from wave_ls.runtime.core import ToolCall

KEPT_CHARS = 2_000
CUT_OFF_CALL = (
    "This call was not run: your reply was cut off by the output limit (max_tokens) in the "
    "middle of its arguments ({size:,} characters arrived, not valid JSON). Send the call "
    "again with shorter arguments: write a large file in parts (Write a first part, then "
    "Edit to add the rest), or split the work into several calls."
)
INVALID_CALL = (
    "This call was not run: its arguments are not a valid JSON object ({error}). Send the "
    "call again with valid JSON arguments."
)
CONTINUE_TEXT = (
    "Your last answer was cut off by the output limit (max_tokens). Continue exactly where "
    "it stopped, without repeating what you already wrote."
)


def repair_calls(
    calls: list[ToolCall], finish_reason: str | None
) -> tuple[list[ToolCall], dict[str, str], dict[str, str]]:
    """``calls`` with unusable arguments replaced by ``{}``; for each replaced call, the
    result the model reads (by id) and the start of what it sent (by id)."""
    results: dict[str, str] = {}
    originals: dict[str, str] = {}
    repaired: list[ToolCall] = []
    for call in calls:
        problem = _problem(call.arguments)
        if problem is None:
            repaired.append(call)
            continue
        if finish_reason == "length":
            results[call.id] = CUT_OFF_CALL.format(size=len(call.arguments))
        else:
            results[call.id] = INVALID_CALL.format(error=problem)
        originals[call.id] = call.arguments[:KEPT_CHARS]
        repaired.append(ToolCall(call.id, call.name, "{}"))
    return repaired, results, originals


def _problem(arguments: str) -> str | None:
    if not arguments.strip():
        return None  # no arguments: an empty object
    try:
        value = json.loads(arguments)
    except ValueError as error:
        return str(error)
    return None if isinstance(value, dict) else "not an object"
