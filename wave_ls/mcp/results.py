"""An MCP answer as the text a tool result carries to the model (pure functions).

Text blocks are kept as they are; an image or audio block becomes a note (the model gets no
pixels through a tool result here); an embedded resource shows its text (a binary one, a
note); a resource link its address. ``structuredContent`` is shown as JSON when the server
sent no text (a server that sends both repeats itself in the text). Results are cut at
``RESULT_LIMIT`` characters.
"""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

RESULT_LIMIT = 100_000


def content_text(blocks: list[Any]) -> list[str]:
    """The text of each content block (``mcp_types`` models)."""
    parts: list[str] = []
    for block in blocks:
        kind = getattr(block, "type", None)
        if kind == "text":
            parts.append(str(block.text))
        elif kind in ("image", "audio"):
            parts.append(
                f"[{kind} ({block.mime_type}, {_size(block.data)}): not shown to the model]"
            )
        elif kind == "resource":
            parts.append(resource_text(block.resource))
        elif kind == "resource_link":
            title = f" ({block.name})" if getattr(block, "name", None) else ""
            parts.append(f"[resource link: {block.uri}{title}]")
        else:
            parts.append(f"[{kind or 'unknown'} content: not shown]")
    return parts


def resource_text(contents: Any) -> str:
    """One resource's contents: its text, or a note for a binary one."""
    text = getattr(contents, "text", None)
    if isinstance(text, str):
        return text
    mime = getattr(contents, "mime_type", None) or "binary"
    blob = getattr(contents, "blob", "") or ""
    return f"[{contents.uri}: {mime}, {_size(blob)}: not shown to the model]"


def call_result_text(result: Any) -> tuple[str, bool]:
    """The text of a ``CallToolResult`` and whether it is an error (``isError``)."""
    parts = content_text(list(result.content or []))
    structured = getattr(result, "structured_content", None)
    if structured is not None and not any(part.strip() for part in parts):
        parts.append(json.dumps(structured, ensure_ascii=False, indent=2))
    text = "\n".join(parts).strip() or "(no output)"
    return cut(text), bool(result.is_error)


def cut(text: str, limit: int = RESULT_LIMIT) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n… (cut: {len(text) - limit} characters more)"


def _size(data: str) -> str:
    try:
        size = len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        size = len(data)
    return f"{size} bytes"
