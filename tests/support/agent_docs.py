"""Editing agent files through a real client: open, change, wait for diagnostics, ask for
completion / hover / code actions, apply edits (positions in the negotiated encoding)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import from_fs_path

from tests.support import waiting
from tests.support.lsp import WaveClient
from wave_ls.chat_input.query import Encoding, index_to_offset, offset_to_index

DIAGNOSTICS_DEADLINE_S = 2.0  # PROTOCOL.md: within 2 s of didOpen / didChange


def agent_text(name: str = "reviewer", description: str = "Reviews code", extra: str = "") -> str:
    return f"---\nname: {name}\ndescription: {description}\n{extra}---\nYou are {name}.\n"


def uri_of(path: Path) -> str:
    return from_fs_path(str(path)) or path.as_uri()


def pos(line: int, character: int) -> types.Position:
    return types.Position(line=line, character=character)


def span(line: int, start: int, end: int) -> types.Range:
    return types.Range(start=pos(line, start), end=pos(line, end))


def units(text: str, encoding: Encoding) -> int:
    """The length of ``text`` in ``encoding`` units (a column after it)."""
    return index_to_offset(text, len(text), encoding)


class AgentEditor:
    """One client's open documents: what an editor does while someone types."""

    def __init__(self, client: WaveClient) -> None:
        self.client = client
        self.versions: dict[str, int] = {}
        self.texts: dict[str, str] = {}

    @property
    def encoding(self) -> Encoding:
        assert self.client.init_result is not None
        chosen = self.client.init_result.capabilities.position_encoding or "utf-16"
        return str(getattr(chosen, "value", chosen))  # type: ignore[return-value]

    def open(self, path: Path, text: str, language: str = "markdown") -> str:
        uri = uri_of(path)
        self.versions[uri] = 1
        self.texts[uri] = text
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, language, 1, text))
        )
        return uri

    def replace_all(self, uri: str, text: str) -> None:
        """A full-text change (as clients send when the server asks for full sync)."""
        self.versions[uri] += 1
        self.texts[uri] = text
        change = types.TextDocumentContentChangeWholeDocument(text=text)
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
                [change],
            )
        )

    def edit(self, uri: str, where: types.Range, new_text: str) -> None:
        """An incremental change of ``where`` (positions in the negotiated encoding)."""
        self.versions[uri] += 1
        self.texts[uri] = apply_edits(self.texts[uri], [(where, new_text)], self.encoding)
        change = types.TextDocumentContentChangePartial(range=where, text=new_text)
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(uri=uri, version=self.versions[uri]),
                [change],
            )
        )

    def close(self, uri: str) -> None:
        self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri))
        )

    async def diagnostics(
        self,
        uri: str,
        until: Callable[[Sequence[types.Diagnostic]], bool] = lambda _: True,
        timeout: float = DIAGNOSTICS_DEADLINE_S,
    ) -> list[types.Diagnostic]:
        """The diagnostics published for ``uri`` once ``until`` holds for them."""

        def matching() -> bool:
            found = self.client.diagnostics.get(uri)
            return found is not None and until(found)

        try:
            await waiting.until(matching, timeout)
        except AssertionError:
            found = self.client.diagnostics.get(uri)
            raise AssertionError(
                f"no matching diagnostics for {uri} in {timeout} s: {found}"
            ) from None
        return list(self.client.diagnostics[uri])

    async def completion(self, uri: str, line: int, character: int) -> list[types.CompletionItem]:
        result = await self.client.text_document_completion_async(
            types.CompletionParams(types.TextDocumentIdentifier(uri), pos(line, character))
        )
        if result is None:
            return []
        return list(result.items if isinstance(result, types.CompletionList) else result)

    async def hover(self, uri: str, line: int, character: int) -> types.Hover | None:
        return await self.client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(uri), pos(line, character))
        )

    async def fixes(self, uri: str, diagnostic: types.Diagnostic) -> list[types.CodeAction]:
        result = await self.client.text_document_code_action_async(
            types.CodeActionParams(
                types.TextDocumentIdentifier(uri),
                diagnostic.range,
                types.CodeActionContext(diagnostics=[diagnostic]),
            )
        )
        return [a for a in result or () if isinstance(a, types.CodeAction)]

    def applied(self, uri: str, action: types.CodeAction | types.CompletionItem) -> str:
        """The document's text after ``action``'s edits."""
        if isinstance(action, types.CompletionItem):
            edit = action.text_edit
            assert isinstance(edit, types.TextEdit)
            return apply_edits(self.texts[uri], [(edit.range, edit.new_text)], self.encoding)
        assert action.edit is not None and action.edit.changes is not None
        edits = [(e.range, e.new_text) for e in action.edit.changes[uri]]
        return apply_edits(self.texts[uri], edits, self.encoding)


def apply_edits(text: str, edits: list[tuple[types.Range, str]], encoding: Encoding) -> str:
    """``text`` with LSP edits applied (as an editor does: positions in ``encoding``)."""
    lines = text.split("\n")

    def offset(position: types.Position) -> int:
        before = sum(len(line) + 1 for line in lines[: position.line])
        line = lines[position.line] if position.line < len(lines) else ""
        return before + offset_to_index(line, position.character, encoding)

    ordered = sorted(edits, key=lambda e: (e[0].start.line, e[0].start.character), reverse=True)
    for where, new_text in ordered:
        text = text[: offset(where.start)] + new_text + text[offset(where.end) :]
        lines = text.split("\n")
    return text


def problems_for(result: dict[str, Any], path: Path) -> list[dict[str, Any]]:
    """The ``wave/agents/list`` problems of one file."""
    return [p for p in result["problems"] if p["path"] == str(path)]
