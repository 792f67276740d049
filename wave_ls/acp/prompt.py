"""An ACP prompt (content blocks) -> the chat message the session receives.

- text blocks are the message, as written;
- a resource link or an embedded resource with a ``file://`` URI becomes a
  ``[@file:<path>]`` mention (relative to the session's folder when inside it); an embedded
  text resource's text is what the model is shown for that file (an editor's unsaved
  buffer wins over the disk);
- other resources: a link becomes ``[name](uri)``; an embedded text becomes a
  ``<context ref="uri">`` block after the message;
- a message starting with ``/<subagent name>`` (an ACP command, see ``commands.py``) is the
  mention ``[@agent:<name>]`` followed by the rest of the text.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlsplit

from acp.schema import (
    AudioContentBlock,
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

# A block of ``session/prompt``'s ``prompt``, as the SDK gives it.
ContentBlock = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)
_COMMAND = re.compile(r"/(\S+)(.*)", re.DOTALL)


@dataclass
class PromptMessage:
    text: str
    # File texts the client sent, by absolute path (shown instead of the file on disk).
    supplied_files: dict[str, str] = field(default_factory=dict)


def prompt_message(blocks: Sequence[object], cwd: Path, commands: Collection[str]) -> PromptMessage:
    """The message for ``blocks``; ``commands`` are the subagent names offered as commands."""
    pieces: list[str] = []
    context: list[str] = []
    supplied: dict[str, str] = {}
    for block in blocks:
        if isinstance(block, TextContentBlock):
            pieces.append(block.text)
        elif isinstance(block, ResourceContentBlock):
            path = file_path(block.uri)
            pieces.append(mention(path, cwd) if path else f"[{block.name}]({block.uri})")
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            path = file_path(resource.uri)
            if path:
                pieces.append(mention(path, cwd))
                if isinstance(resource, TextResourceContents):
                    supplied[path] = resource.text
            elif isinstance(resource, TextResourceContents):
                context.append(f'<context ref="{resource.uri}">\n{resource.text}\n</context>')
            elif isinstance(resource, BlobResourceContents):
                pieces.append(f"({resource.uri}: binary content, not shown)")
        else:  # image or audio: not offered in the prompt capabilities
            kind = getattr(block, "type", "content")
            pieces.append(f"(an attached {kind} was left out: this agent reads text only)")
    text = joined(pieces)
    if context:
        text = "\n\n".join([text, *context]) if text else "\n\n".join(context)
    return PromptMessage(command_as_mention(text, commands), supplied)


def joined(pieces: list[str]) -> str:
    """The pieces in order, with a space where two would otherwise run together."""
    out = ""
    for piece in pieces:
        if out and piece and not out[-1].isspace() and not piece[0].isspace():
            out += " "
        out += piece
    return out


def file_path(uri: str) -> str | None:
    """The absolute path of a ``file://`` URI (or of a plain absolute path), else None."""
    if uri.startswith("/"):
        return os.path.normpath(uri)
    parts = urlsplit(uri)
    if parts.scheme != "file":
        return None
    return os.path.normpath(unquote(parts.path)) if parts.path else None


def mention(path: str, cwd: Path) -> str:
    """``[@file:src/app.py]`` inside the session's folder, the absolute path elsewhere."""
    try:
        shown = Path(path).relative_to(cwd).as_posix()
    except ValueError:
        shown = path
    return f"[@file:{shown or '.'}]"


def command_as_mention(text: str, commands: Collection[str]) -> str:
    """``/Explore find the tests`` -> ``[@agent:Explore] find the tests``."""
    found = _COMMAND.match(text)
    if found is None or found.group(1) not in commands:
        return text
    return f"[@agent:{found.group(1)}]{found.group(2)}"
