"""A request the endpoint refused because it is longer than the context window.

Each server words it its own way; these are the texts (lower case) they send, in the error
body or the SDK's message:

- OpenAI: code ``context_length_exceeded``, "This model's maximum context length is 128000
  tokens. However, your messages resulted in ...";
- vLLM: "This model's maximum context length is 4096 tokens. However, you requested ...",
  "... is longer than the maximum model length of 4096";
- llama.cpp: "request (4476 tokens) exceeds the available context size (4096 tokens)"
  (type ``exceed_context_size_error``, with ``n_ctx``); older: "the request exceeds the
  available context size", "input prompt is too big compared to kv size";
- Ollama (``truncate: false``, or models whose runner refuses): "input length exceeds the
  context length", "prompt too long; exceeded max context length by N tokens";
- LiteLLM: ``ContextWindowExceededError`` (in the text, also wrapping Anthropic's "prompt is
  too long: N tokens > M maximum").
"""

from __future__ import annotations

import re

MARKERS = (
    "context_length_exceeded",
    "maximum context length",
    "context length exceeded",
    "exceeds the available context size",
    "exceed_context_size_error",
    "exceeds the context length",
    "exceeds maximum context length",
    "exceeded max context length",
    "exceeds the context window",
    "context window exceeded",
    "contextwindowexceedederror",
    "longer than the maximum model length",
    "too big compared to kv size",
    "prompt is too long",
    "prompt too long",
    "input is too long",
    "reduce the length of the messages",
)

_WINDOW_PATTERNS = (
    re.compile(r"maximum context length is (\d+)"),
    re.compile(r"available context size \((\d+) tokens?\)"),
    re.compile(r"maximum model length of (\d+)"),
    re.compile(r"context length (?:of|is) (\d+)"),
    re.compile(r"['\"]?n_ctx['\"]?\s*[:=]\s*(\d+)"),
    re.compile(r"> (\d+) maximum"),
)


def is_context_refusal(text: str) -> bool:
    """Whether an error text says the request does not fit the context window."""
    lowered = text.lower()
    return any(marker in lowered for marker in MARKERS)


def window_in(text: str) -> int | None:
    """The window size the refusal names (tokens), when it names one."""
    lowered = text.lower()
    for pattern in _WINDOW_PATTERNS:
        found = pattern.search(lowered)
        if found:
            value = int(found.group(1))
            if value >= 256:
                return value
    return None
