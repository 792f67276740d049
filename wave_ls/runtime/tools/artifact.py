"""``Artifact``: hand a named document (a report, a diagram, a snippet) to the UI.

Artifacts go to ``ctx.services.artifacts`` when the session has one (anything with
``append``: a list, or a sink the adapter watches); the tool result's ``details`` carry
the artifact too, so an adapter can show it from the tool block alone.
"""

from __future__ import annotations

from typing import Any

from wave_ls.runtime.core import Effect, ToolContext, ToolKind, ToolResult
from wave_ls.runtime.tool_names import WaveTool
from wave_ls.runtime.tools.args import optional_str, require_str
from wave_ls.runtime.tools.write import count_lines

KINDS = ("markdown", "code", "html", "mermaid", "svg", "json", "text")

DESCRIPTION = """\
Shows the user a named artifact: a document that stands on its own beside the conversation \
(a report, a plan, a diagram, a long code snippet).

Usage:
- title names it; content is the whole artifact; kind is one of markdown (default), code, \
html, mermaid, svg, json, text.
- Use it for substantial content the user will want to keep or copy (more than a few \
lines); keep short answers in the conversation.
- It does not write files: use Write to save into the project."""


PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "title": {"type": "string", "description": "A short title for the artifact"},
        "content": {"type": "string", "description": "The full content of the artifact"},
        "kind": {
            "type": "string",
            "enum": list(KINDS),
            "description": "The kind of content (default markdown)",
        },
    },
    "required": ["title", "content"],
    "additionalProperties": False,
}


class ArtifactTool:
    """Stores an artifact for the UI (see ``DESCRIPTION``)."""

    name = WaveTool.ARTIFACT.value
    description = DESCRIPTION
    effect: Effect = "session"  # touches no file or process
    kind: ToolKind = "other"
    key_argument: str | None = "title"
    concurrency_safe = True
    parameters = PARAMETERS

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        title = require_str(args, "title", allow_empty=False).strip()
        content = require_str(args, "content")
        kind = optional_str(args, "kind") or "markdown"  # unknown kinds are shown as text
        artifact = {
            "title": title,
            "kind": kind,
            "content": content,
            "sessionId": ctx.session_id,
            "toolCallId": ctx.tool_call_id,
        }
        sink = ctx.services.artifacts
        if sink is not None:
            sink.append(artifact)
        lines = count_lines(content)
        return ToolResult(
            f'Artifact "{title}" ({kind}, {lines} lines) is shown to the user.',
            short_result=f"Artifact {title} ({lines} lines)",
            details={"artifact": artifact},
        )
