"""``LSP``: code intelligence from the editor, through ``ctx.services.lsp``.

The service is any object with ``async request(operation: str, params: dict) -> Any``;
``params`` are LSP-shaped (0-based positions): ``{"textDocument": {"uri"}, "position":
{"line", "character"}}`` for position operations (plus ``"context": {"includeDeclaration":
True}`` for findReferences), ``{"textDocument": {"uri"}}`` for documentSymbol and
``{"query"}`` for workspaceSymbol. The answer is the LSP result, formatted here.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from wave_ls.runtime.core import Effect, ToolContext, ToolError, ToolKind, ToolResult
from wave_ls.runtime.tool_names import WaveTool
from wave_ls.runtime.tools.args import optional_int, optional_str, require_str
from wave_ls.runtime.tools.paths import display_path

OPERATIONS = ("goToDefinition", "findReferences", "hover", "documentSymbol", "workspaceSymbol")
POSITION_OPERATIONS = ("goToDefinition", "findReferences", "hover")
SYMBOL_KINDS = (
    "File", "Module", "Namespace", "Package", "Class", "Method", "Property", "Field",
    "Constructor", "Enum", "Interface", "Function", "Variable", "Constant", "String", "Number",
    "Boolean", "Array", "Object", "Key", "Null", "EnumMember", "Struct", "Event", "Operator",
    "TypeParameter",
)  # fmt: skip
MAX_ITEMS = 200

DESCRIPTION = """\
Code intelligence from the editor's language servers.

Operations:
- goToDefinition: where the symbol at a position is defined.
- findReferences: every reference to the symbol at a position.
- hover: the documentation and type of the symbol at a position.
- documentSymbol: the symbols (classes, functions, ...) of a file.
- workspaceSymbol: symbols matching query across the workspace.

filePath is absolute or relative to the working directory; line and character are 1-based, \
as shown in editors (required for goToDefinition, findReferences and hover)."""


def _uri_path(uri: str) -> Path:
    parts = urlsplit(uri)
    return Path(unquote(parts.path)) if parts.scheme == "file" else Path(uri)


def _kind(value: Any) -> str:
    if isinstance(value, int) and 1 <= value <= len(SYMBOL_KINDS):
        return SYMBOL_KINDS[value - 1]
    return "Symbol"


def _location(item: dict[str, Any], cwd: Path) -> str:
    uri = item.get("uri") or item.get("targetUri") or ""
    range_ = item.get("range") or item.get("targetSelectionRange") or item.get("targetRange") or {}
    start = range_.get("start", {})
    line = int(start.get("line", 0)) + 1
    character = int(start.get("character", 0)) + 1
    return f"{display_path(_uri_path(uri), cwd)}:{line}:{character}"


def _hover_text(contents: Any) -> str:
    if isinstance(contents, str):
        return contents
    if isinstance(contents, list):
        return "\n\n".join(_hover_text(item) for item in contents)
    if isinstance(contents, dict):
        value = str(contents.get("value", ""))
        language = contents.get("language")
        return f"```{language}\n{value}\n```" if language else value
    return ""


def _symbols(items: list[Any], cwd: Path, depth: int = 0) -> list[str]:
    out = []
    for item in items:
        if not isinstance(item, dict):
            continue
        name = item.get("name", "?")
        if "location" in item:  # SymbolInformation / WorkspaceSymbol
            where = (
                _location(item["location"], cwd)
                if "range" in item["location"]
                else (display_path(_uri_path(item["location"].get("uri", "")), cwd))
            )
            container = f" in {item['containerName']}" if item.get("containerName") else ""
            out.append(f"{'  ' * depth}{_kind(item.get('kind'))} {name}{container} - {where}")
        else:  # DocumentSymbol (hierarchical)
            range_ = item.get("selectionRange") or item.get("range") or {}
            line = int(range_.get("start", {}).get("line", 0))
            out.append(f"{'  ' * depth}{_kind(item.get('kind'))} {name} (line {line + 1})")
            out.extend(_symbols(item.get("children") or [], cwd, depth + 1))
    return out


def format_answer(operation: str, answer: Any, cwd: Path) -> tuple[str, int]:
    """Readable text of an LSP answer and the number of items in it."""
    if answer is None or answer == [] or answer == {}:
        return "No results", 0
    if operation == "hover":
        text = _hover_text(answer.get("contents") if isinstance(answer, dict) else answer)
        return (text.strip() or "No results"), int(bool(text.strip()))
    items = answer if isinstance(answer, list) else [answer]
    if operation in ("goToDefinition", "findReferences"):
        lines = [_location(item, cwd) for item in items if isinstance(item, dict)]
    else:
        lines = _symbols(items, cwd)
    count = len(lines)
    if count > MAX_ITEMS:
        lines = [*lines[:MAX_ITEMS], f"... and {count - MAX_ITEMS} more"]
    return "\n".join(lines), count


PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "operation": {
            "type": "string",
            "enum": list(OPERATIONS),
            "description": "The LSP operation to perform",
        },
        "filePath": {"type": "string", "description": "The file to operate on"},
        "line": {"type": "integer", "description": "The line number (1-based)"},
        "character": {"type": "integer", "description": "The character offset (1-based)"},
        "query": {"type": "string", "description": "The symbol query (workspaceSymbol)"},
    },
    "required": ["operation", "filePath"],
    "additionalProperties": False,
}


class LspTool:
    """Asks the editor's code intelligence (see ``DESCRIPTION``)."""

    name = WaveTool.LSP.value
    description = DESCRIPTION
    effect: Effect = "read"
    kind: ToolKind = "search"
    key_argument: str | None = "filePath"
    concurrency_safe = True
    parameters = PARAMETERS

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        operation = require_str(args, "operation", allow_empty=False)
        if operation not in OPERATIONS:
            raise ToolError(
                f"Parameter 'operation' must be one of {', '.join(OPERATIONS)}; got {operation!r}"
            )
        file_path = optional_str(args, "filePath") or ""
        if operation != "workspaceSymbol" and not file_path:
            raise ToolError("Missing required parameter 'filePath'")
        path = ctx.resolve(file_path) if file_path else ctx.cwd
        params: dict[str, Any] = {"textDocument": {"uri": path.as_uri()}}
        if operation in POSITION_OPERATIONS:
            line = optional_int(args, "line", minimum=1)
            character = optional_int(args, "character", minimum=1)
            if line is None or character is None:
                missing = "line" if line is None else "character"
                raise ToolError(f"Missing required parameter '{missing}' for {operation}")
            params["position"] = {"line": line - 1, "character": character - 1}
            if operation == "findReferences":
                params["context"] = {"includeDeclaration": True}
        elif operation == "workspaceSymbol":
            params = {"query": optional_str(args, "query") or ""}
        service = ctx.services.lsp
        if service is None:
            raise ToolError(
                "LSP is not available: the editor did not offer code intelligence. "
                "Use Grep and Read instead."
            )
        answer = await service.request(operation, params)
        text, count = format_answer(operation, answer, ctx.cwd)
        target = display_path(path, ctx.cwd) if file_path else "workspace"
        return ToolResult(
            text,
            short_result=f"LSP {operation} {target}: {count} results",
            details={"operation": operation, "count": count},
        )
