"""The open agent files (``.wave/agents/*.md`` and the other agent directories): which
documents they are, their last check, debounced re-checks and published diagnostics, and
the facts completion and hover need (tool descriptions, the endpoint's models).

The work is in ``wave_ls.agents.authoring`` (imported on first use: start-up stays fast);
this module converts between it and LSP (positions in the negotiated encoding).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.uris import to_fs_path

from wave_ls.chat_input.query import index_to_offset, offset_to_index
from wave_ls.runtime.background_work import run_task

if TYPE_CHECKING:
    from pygls.workspace import TextDocument

    from wave_ls.agents.authoring import (
        AgentPlace,
        CompletionFacts,
        Outline,
        TextRange,
    )
    from wave_ls.agents.definition import AgentCatalog, Problem
    from wave_ls.agents.discovery import AgentDir, ParsedFile
    from wave_ls.runtime.model_list import ModelList
    from wave_ls.server.app import WaveServer

log = logging.getLogger(__name__)

# A change is checked at once unless one was checked less than this ago; changes inside the
# window are checked together at its end (a paste, multi-cursor edits, fast typing).
DEBOUNCE_S = 0.02
SOURCE = "wave-ls"
SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "info": types.DiagnosticSeverity.Information,
}


@dataclass
class _Checked:
    version: int | None
    text: str
    diagnostics: list[tuple[Problem, types.Diagnostic]]


class AgentDocuments:
    """State of the editor features for agent files, shared by their handlers."""

    def __init__(self, server: WaveServer) -> None:
        self.server = server
        self._places: dict[str, AgentPlace | None] = {}
        self._checked: dict[str, _Checked] = {}
        self._outlines: dict[str, tuple[int | None, str, Outline]] = {}
        self._pending: dict[str, asyncio.TimerHandle] = {}
        self._last_run: dict[str, float] = {}
        self._published: set[str] = set()
        self._tool_docs: Mapping[str, str] | None = None
        self._tool_docs_loading: asyncio.Task[None] | None = None
        self._models: ModelList | None = None
        self._renewals_from: int | None = None  # the thread that checks, once it listens
        self._checking = False

    # ------------------------------------------------------------------ which documents

    def place(self, uri: str) -> AgentPlace | None:
        """Where the document is, when it is an agent file the server loads."""
        if uri not in self._places:
            self._places[uri] = self._find_place(uri)
        return self._places[uri]

    def _find_place(self, uri: str) -> AgentPlace | None:
        fs_path = to_fs_path(uri) if uri.startswith("file:") else None
        if not fs_path or not fs_path.endswith(".md"):
            return None
        from wave_ls.agents.authoring import agent_place

        ls = self.server
        return agent_place(Path(fs_path), ls.root, ls.home, ls.agents.plugins(), os.environ)

    def open_agent_uris(self) -> list[str]:
        return [uri for uri in self.server.workspace.text_documents if self.place(uri)]

    # ------------------------------------------------------------------ lifecycle

    def opened(self, uri: str) -> None:
        self._places.pop(uri, None)
        if self.place(uri) is None:
            return
        self.schedule(uri)  # the tool descriptions and models load after its first check

    def changed(self, uri: str) -> None:
        if self.place(uri) is not None:
            self.schedule(uri)

    def closed(self, uri: str) -> None:
        handle = self._pending.pop(uri, None)
        if handle is not None:
            handle.cancel()
        self._checked.pop(uri, None)
        self._outlines.pop(uri, None)
        self._last_run.pop(uri, None)
        self._places.pop(uri, None)
        if uri in self._published:  # an editor keeps what it was told; clear it
            self._published.discard(uri)
            self._send(uri, [], None)

    def recheck_all(self) -> None:
        """Check every open agent file again: files on disk changed (a save, a file added or
        removed outside the editor), or the endpoint's models became known."""
        self._places.clear()
        for uri in self.open_agent_uris():
            self._checked.pop(uri, None)
            self.schedule(uri, at_once=True)

    def schedule(self, uri: str, at_once: bool = False) -> None:
        if uri in self._pending:
            return  # a check is due; it reads the latest text
        loop = asyncio.get_running_loop()
        since = loop.time() - self._last_run.get(uri, float("-inf"))
        delay = 0.0 if at_once or since >= DEBOUNCE_S else DEBOUNCE_S - since
        self._pending[uri] = loop.call_later(delay, self._run, uri)

    def _run(self, uri: str) -> None:
        self._pending.pop(uri, None)
        self._last_run[uri] = asyncio.get_running_loop().time()
        try:
            checked = self.checked(uri)
            if checked is None:
                return
            self._published.add(uri)
            self._send(uri, [d for _, d in checked.diagnostics], checked.version)
            self._warm_up()
        except Exception:  # one bad document must not stop the others
            log.exception("checking %s failed", uri)

    def _send(self, uri: str, diagnostics: list[types.Diagnostic], version: int | None) -> None:
        self.server.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=version)
        )

    # ------------------------------------------------------------------ checking

    def document(self, uri: str) -> TextDocument | None:
        if self.place(uri) is None or uri not in self.server.workspace.text_documents:
            return None
        return self.server.workspace.get_text_document(uri)

    def outline(self, uri: str) -> Outline | None:
        """The outline of the document's current text (cached per version): what
        completion, hover, symbols and folding read, and its lines for positions."""
        document = self.document(uri)
        if document is None:
            return None
        text = document.source
        cached = self._outlines.get(uri)
        if cached is not None and cached[0] == document.version and cached[1] is text:
            return cached[2]
        from wave_ls.agents.authoring import Outline

        outline = Outline.of(text)
        self._outlines[uri] = (document.version, text, outline)
        return outline

    def checked(self, uri: str) -> _Checked | None:
        """The check of the document's current text (cached per version)."""
        document = self.document(uri)
        place = self.place(uri)
        if document is None or place is None:
            return None
        text = document.source
        cached = self._checked.get(uri)
        if cached is not None and cached.version == document.version and cached.text == text:
            return cached
        from wave_ls.agents.authoring import check_agent_text, problem_range, split_lines
        from wave_ls.agents.model_tiers import load_tier_map

        ls = self.server
        result = check_agent_text(
            text,
            place.path,
            place.agent_dir,
            self._neighbours(place.cwd),
            self.models.known(ls.settings.base_url, ls.settings.api_key),
            tiers=lambda: load_tier_map(place.cwd, ls.home),
        )
        lines = split_lines(text)
        diagnostics = [
            (
                problem,
                self._diagnostic(problem, self.lsp_range(lines, problem_range(problem, lines))),
            )
            for problem in result.problems
        ]
        checked = _Checked(document.version, text, diagnostics)
        self._checked[uri] = checked
        return checked

    def _neighbours(self, cwd: Path) -> list[tuple[AgentDir, tuple[ParsedFile, ...]]]:
        """The agent directories a file is judged against; the open files are checked again
        whenever the registry renews a catalog (a sweep saw a change, a request read one)."""
        registry = self.server.agents
        if self._renewals_from is None:
            loop = asyncio.get_running_loop()
            self._renewals_from = threading.get_ident()
            registry.on_renewed(lambda: self._catalog_renewed(loop))
        self._checking = True
        try:
            return registry.directories(cwd)
        finally:
            self._checking = False

    def _catalog_renewed(self, loop: asyncio.AbstractEventLoop) -> None:
        # Any thread. A renewal made by our own check (this thread, inside ``_neighbours``)
        # is what that check is judging by already.
        if self._checking and threading.get_ident() == self._renewals_from:
            return
        with contextlib.suppress(RuntimeError):  # a closed loop: the server is ending
            loop.call_soon_threadsafe(self.recheck_all)

    @staticmethod
    def _diagnostic(problem: Problem, where: types.Range) -> types.Diagnostic:
        data: dict[str, object] = {}
        if problem.suggestion:
            data["suggestion"] = problem.suggestion
        return types.Diagnostic(
            range=where,
            message=problem.message,
            severity=SEVERITY[problem.severity],
            source=SOURCE,
            code=problem.code,
            data=data or None,
        )

    # ------------------------------------------------------------------ positions

    def lsp_range(self, lines: list[str], where: TextRange) -> types.Range:
        return types.Range(
            start=self.lsp_position(lines, where.line, where.column),
            end=self.lsp_position(lines, where.end_line, where.end_column),
        )

    def lsp_position(self, lines: list[str], line: int, column: int) -> types.Position:
        text = lines[line] if 0 <= line < len(lines) else ""
        return types.Position(line, index_to_offset(text, column, self.server.position_encoding))

    def column(self, lines: list[str], position: types.Position) -> int:
        """The Python index into its line of an LSP position."""
        if not 0 <= position.line < len(lines):
            return 0
        return offset_to_index(
            lines[position.line], position.character, self.server.position_encoding
        )

    # ------------------------------------------------------------------ facts

    @property
    def models(self) -> ModelList:
        if self._models is None:
            from wave_ls.runtime.model_list import ModelList

            self._models = ModelList()
        return self._models

    def facts(self) -> CompletionFacts:
        from wave_ls.agents.authoring import CompletionFacts

        settings = self.server.settings
        return CompletionFacts(
            tool_docs=self._tool_docs or {},
            models=self.models.known(settings.base_url, settings.api_key),
            session_model=settings.model,
        )

    def refresh_models(self) -> None:
        """Ask the endpoint for its models in the background when the list is stale; the
        open agent files are checked again when it arrives."""
        settings = self.server.settings
        if self.models.is_fresh(settings.base_url, settings.api_key):
            return

        async def refresh() -> None:
            before = self.models.known(settings.base_url, settings.api_key)
            after = await self.models.refresh(settings.base_url, settings.api_key)
            if after != before:
                self.recheck_all()

        run_task(refresh(), "agent files: list the endpoint's models")

    def _warm_up(self) -> None:
        """Load what completion and hover show, off the event loop, once."""
        self.refresh_models()
        if self._tool_docs is not None or self._tool_docs_loading is not None:
            return
        catalog = self.server.agents.load(self.server.root)

        async def load() -> None:
            self._tool_docs = await asyncio.to_thread(tool_descriptions, catalog)
            # What the checker and the tools loaded lives as long as the server: keep the
            # collector from walking it again and again (as initialize does for start-up).
            gc.freeze()

        self._tool_docs_loading = run_task(load(), "agent files: tool descriptions")

    async def tool_docs(self, wait: float = 2.0) -> Mapping[str, str]:
        """The tool descriptions, waiting up to ``wait`` seconds for them to load."""
        self._warm_up()
        if self._tool_docs is None and self._tool_docs_loading is not None:
            started = time.monotonic()
            await asyncio.wait({self._tool_docs_loading}, timeout=wait)
            log.debug("waited %.3f s for tool descriptions", time.monotonic() - started)
        return self._tool_docs or {}


def tool_descriptions(catalog: AgentCatalog) -> dict[str, str]:
    """Each tool's description as the model reads it (``Agent``'s lists ``catalog``)."""
    from wave_ls.session import session_tools
    from wave_ls.subagents.agent_tool import AGENT_TOOL, agent_tool_description

    docs = {tool.name: tool.description for tool in session_tools()}
    docs[AGENT_TOOL] = agent_tool_description(catalog)
    return docs
