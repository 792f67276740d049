"""Turning a script step into Chat Completions payloads: stream chunks or one completion."""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from dataclasses import dataclass
from typing import Any

from wave_ls.fake_model.script import Step, last_user_text


@dataclass(frozen=True)
class Reply:
    """What the model answers, in the OpenAI message shape."""

    content: str
    tool_calls: list[dict[str, Any]]
    usage: dict[str, int]
    finish: str | None = None  # the step's own ``finish_reason``
    reasoning: str = ""  # streamed as ``reasoning_content`` before the answer

    @property
    def finish_reason(self) -> str:
        if self.finish is not None:
            return self.finish
        return "tool_calls" if self.tool_calls else "stop"


@dataclass(frozen=True)
class Chunk:
    """One SSE data event; ``chars`` is the text it carries (for tokens-per-second pacing)."""

    data: dict[str, Any]
    chars: int = 0


def build_reply(step: Step, body: dict[str, Any]) -> Reply:
    """The reply of ``step`` to the request ``body`` (default usage: rough counts)."""
    messages = body.get("messages") or []
    content = last_user_text(messages) if step.echo else step.content
    calls = [
        {
            "id": call.id or _call_id(messages, index),
            "type": "function",
            "function": {"name": call.name, "arguments": call.arguments},
        }
        for index, call in enumerate(step.tool_calls)
    ]
    usage = _usage(step, body, content, calls)
    return Reply(
        content=content,
        tool_calls=calls,
        usage=usage,
        finish=step.finish_reason,
        reasoning=step.reasoning_content,
    )


def split_text(text: str, size: int) -> list[str]:
    return [text[i : i + size] for i in range(0, len(text), size)]


def stream_chunks(reply: Reply, *, model: str, chunk_size: int, include_usage: bool) -> list[Chunk]:
    """Every data event of a streamed reply, in order, without the final ``[DONE]``.

    Like OpenAI: a first delta with the role, content pieces, then per tool call a first
    delta carrying id/type/name and later deltas carrying only argument fragments, a
    finish chunk, and (with ``include_usage``) a last chunk with ``choices: []``.
    """
    completion_id = f"chatcmpl-{uuid.uuid4().hex[:24]}"
    created = int(time.time())

    def chunk(delta: dict[str, Any], finish: str | None = None, chars: int = 0) -> Chunk:
        choice = {"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}
        return Chunk(_envelope(completion_id, created, model, [choice]), chars)

    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks += [
        chunk({"content": None, "reasoning_content": piece}, chars=len(piece))
        for piece in split_text(reply.reasoning, chunk_size)
    ]
    chunks += [
        chunk({"content": piece}, chars=len(piece))
        for piece in split_text(reply.content, chunk_size)
    ]
    for index, call in enumerate(reply.tool_calls):
        function = call["function"]
        first = {
            "index": index,
            "id": call["id"],
            "type": "function",
            "function": {"name": function["name"], "arguments": ""},
        }
        chunks.append(chunk({"tool_calls": [first]}, chars=len(function["name"])))
        for piece in _argument_pieces(function["arguments"], chunk_size):
            fragment = {"index": index, "function": {"arguments": piece}}
            chunks.append(chunk({"tool_calls": [fragment]}, chars=len(piece)))
    chunks.append(chunk({}, finish=reply.finish_reason))
    if include_usage:
        last = _envelope(completion_id, created, model, [])
        last["usage"] = reply.usage
        chunks.append(Chunk(last))
    return chunks


def completion_body(reply: Reply, *, model: str) -> dict[str, Any]:
    """The non-streaming ``chat.completion`` object."""
    message: dict[str, Any] = {"role": "assistant", "content": reply.content or None}
    if reply.tool_calls:
        message["tool_calls"] = reply.tool_calls
    elif message["content"] is None:
        message["content"] = ""
    if reply.reasoning:
        message["reasoning_content"] = reply.reasoning
    return {
        "id": f"chatcmpl-{uuid.uuid4().hex[:24]}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": reply.finish_reason,
            }
        ],
        "usage": reply.usage,
    }


def error_body(message: str, kind: str, code: str | None = None) -> dict[str, Any]:
    """An OpenAI-shaped error object."""
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def _envelope(
    completion_id: str, created: int, model: str, choices: list[dict[str, Any]]
) -> dict[str, Any]:
    return {
        "id": completion_id,
        "object": "chat.completion.chunk",
        "created": created,
        "model": model,
        "choices": choices,
    }


def _argument_pieces(arguments: str, size: int) -> list[str]:
    """At least two pieces when there is anything to split, so clients must join them."""
    pieces = split_text(arguments, size)
    if len(pieces) < 2 and len(arguments) >= 2:
        half = len(arguments) // 2
        pieces = [arguments[:half], arguments[half:]]
    return pieces


def _call_id(messages: list[dict[str, Any]], index: int) -> str:
    # Deterministic per conversation state, unique within one conversation.
    digest = hashlib.sha1(
        json.dumps(messages, sort_keys=True, default=str).encode() + b"#%d" % index
    )
    return f"call_{digest.hexdigest()[:20]}"


def _usage(
    step: Step, body: dict[str, Any], content: str, calls: list[dict[str, Any]]
) -> dict[str, int]:
    usage = dict(step.usage or {})
    if "prompt_tokens" not in usage:
        tools = [] if step.drop_tools else body.get("tools") or []
        prompt = json.dumps(body.get("messages") or []) + json.dumps(tools)
        usage["prompt_tokens"] = max(1, len(prompt) // 4)
    if "completion_tokens" not in usage:
        produced = len(content) + sum(len(json.dumps(c["function"])) for c in calls)
        usage["completion_tokens"] = max(1, produced // 4)
    usage.setdefault("total_tokens", usage["prompt_tokens"] + usage["completion_tokens"])
    return usage
