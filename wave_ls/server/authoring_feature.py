"""Agent files in the editor: diagnostics, completion, hover, quick fixes, symbols, folding
and the ``wave-ls.newSubagent`` command, with standard LSP methods.

Only documents in an agent directory the server loads get anything (``AgentDocuments``
decides); every handler answers from the open document's text.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.exceptions import JsonRpcInvalidParams
from pygls.uris import from_fs_path, to_fs_path

from wave_ls.runtime.background_work import run_task
from wave_ls.server.agent_documents import AgentDocuments
from wave_ls.server.app import WaveServer

if TYPE_CHECKING:
    from wave_ls.agents.authoring import Suggestion, Symbol

log = logging.getLogger(__name__)

NEW_SUBAGENT = "wave-ls.newSubagent"
TRIGGER_CHARACTERS = [" ", ",", "[", "-"]
COMPLETION_KIND = {
    "key": types.CompletionItemKind.Property,
    "tool": types.CompletionItemKind.Function,
    "value": types.CompletionItemKind.Value,
    "snippet": types.CompletionItemKind.Snippet,
}
SYMBOL_KIND = {
    "frontmatter": types.SymbolKind.Namespace,
    "key": types.SymbolKind.Property,
    "heading": types.SymbolKind.String,
}
_PLACEHOLDER = re.compile(r"\$\{\d+:([^}]*)\}|\$\d+")


def register(server: WaveServer) -> None:
    """Serve agent files: each handler takes the server's open agent documents."""
    docs = AgentDocuments(server)
    for method, handler, options in HANDLERS:
        server.feature(method, options)(functools.partial(handler, docs))
    server.command(NEW_SUBAGENT)(new_subagent)


def initialized(docs: AgentDocuments, params: types.InitializedParams) -> None:
    """Ask the client to watch agent files."""
    watch_agent_files(docs.server)


def did_open(docs: AgentDocuments, params: types.DidOpenTextDocumentParams) -> None:
    """An agent file opened: its check is scheduled."""
    docs.opened(params.text_document.uri)


def did_change(docs: AgentDocuments, params: types.DidChangeTextDocumentParams) -> None:
    """An agent file edited: checked again soon."""
    docs.changed(params.text_document.uri)


def did_save(docs: AgentDocuments, params: types.DidSaveTextDocumentParams) -> None:
    """An agent file saved: every open one checked again against it."""
    if docs.place(params.text_document.uri) is not None:
        docs.recheck_all()  # the saved file is now what its neighbours are judged by


def did_close(docs: AgentDocuments, params: types.DidCloseTextDocumentParams) -> None:
    """An agent file closed: its diagnostics cleared."""
    docs.closed(params.text_document.uri)


def watched_files(docs: AgentDocuments, params: types.DidChangeWatchedFilesParams) -> None:
    """Agent files changed outside the editor."""
    # The registry reads the reported files at its next load (completion, the checks
    # below) or sweep, whichever comes first: no waiting for a sweep to notice them.
    paths = [path for change in params.changes if (path := to_fs_path(change.uri))]
    docs.server.agents.files_changed(paths)
    if any(change.uri.endswith(".md") for change in params.changes):
        docs.recheck_all()


def completion(docs: AgentDocuments, params: types.CompletionParams) -> types.CompletionList | None:
    """Keys, tools, models, skills and snippets at the cursor."""
    outline = docs.outline(params.text_document.uri)
    place = docs.place(params.text_document.uri)
    if outline is None or place is None:
        return None
    from wave_ls.agents.authoring import complete

    lines = outline.lines
    column = docs.column(lines, params.position)
    facts = docs.facts()
    owner = outline.key_at(params.position.line)
    if owner is not None and owner.key == "skills":
        facts = dataclasses.replace(facts, skills=skill_names(place.cwd, docs.server.home))
    if owner is not None and owner.key == "model":
        facts = dataclasses.replace(facts, tiers=tier_models(place.cwd, docs.server.home))
    suggestions = complete(outline, params.position.line, column, place.path, facts)
    if any(s.label == "inherit" for s in suggestions) and facts.models is None:
        docs.refresh_models()
    snippets = _snippet_support(docs.server)
    items = [_completion_item(docs, lines, s, snippets) for s in suggestions]
    return types.CompletionList(is_incomplete=False, items=items)


async def completion_resolve(
    docs: AgentDocuments, item: types.CompletionItem
) -> types.CompletionItem:
    """A tool item's description, when the user looks at it."""
    # A tool's description is long: sent for the item the user looks at, not for all.
    tool = item.data.get("tool") if isinstance(item.data, dict) else None
    if isinstance(tool, str):
        description = (await docs.tool_docs()).get(tool)
        if description:
            item.documentation = _markdown(description)
    return item


async def hover(docs: AgentDocuments, params: types.HoverParams) -> types.Hover | None:
    """What the key, tool or model under the cursor means."""
    outline = docs.outline(params.text_document.uri)
    if outline is None:
        return None
    from wave_ls.agents.authoring import CompletionFacts
    from wave_ls.agents.authoring import hover as hover_at
    from wave_ls.agents.authoring.completion import TOOL_KEYS

    lines = outline.lines
    column = docs.column(lines, params.position)
    facts = docs.facts()
    owner = outline.key_at(params.position.line)
    if owner is not None and owner.key in TOOL_KEYS:  # a tool's description may be loading
        facts = CompletionFacts(await docs.tool_docs(), facts.models, facts.session_model)
    place = docs.place(params.text_document.uri)
    if owner is not None and owner.key == "model" and place is not None:
        facts = dataclasses.replace(facts, tiers=tier_models(place.cwd, docs.server.home))
    found = hover_at(outline, params.position.line, column, facts)
    if found is None:
        return None
    return types.Hover(
        contents=_markdown(found.markdown),
        range=docs.lsp_range(lines, found.range),
    )


def code_action(docs: AgentDocuments, params: types.CodeActionParams) -> list[types.CodeAction]:
    """The quick fixes for the diagnostics in the range."""
    only = params.context.only
    if only and not any(types.CodeActionKind.QuickFix.startswith(k) for k in only):
        return []
    uri = params.text_document.uri
    checked = docs.checked(uri)
    place = docs.place(uri)
    if checked is None or place is None:
        return []
    from wave_ls.agents.authoring import quick_fixes, split_lines

    wanted = [d.range for d in params.context.diagnostics] or [params.range]
    touching = [(p, d) for p, d in checked.diagnostics if any(_meet(d.range, w) for w in wanted)]
    diagnostic_of = {id(p): d for p, d in touching}
    lines = split_lines(checked.text)
    actions = []
    for fix in quick_fixes(checked.text, place.path, [p for p, _ in touching]):
        edits = [types.TextEdit(docs.lsp_range(lines, e.range), e.new_text) for e in fix.edits]
        actions.append(
            types.CodeAction(
                title=fix.title,
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[diagnostic_of[id(fix.problem)]],
                is_preferred=fix.preferred or None,
                edit=types.WorkspaceEdit(changes={uri: edits}),
            )
        )
    return actions


def document_symbol(
    docs: AgentDocuments, params: types.DocumentSymbolParams
) -> list[types.DocumentSymbol] | None:
    """The frontmatter's keys and the body's headings."""
    outline = docs.outline(params.text_document.uri)
    if outline is None:
        return None
    from wave_ls.agents.authoring import document_symbols

    return [_symbol(docs, outline.lines, s) for s in document_symbols(outline)]


def folding_range(
    docs: AgentDocuments, params: types.FoldingRangeParams
) -> list[types.FoldingRange] | None:
    """The frontmatter and the body's sections."""
    outline = docs.outline(params.text_document.uri)
    if outline is None:
        return None
    from wave_ls.agents.authoring import folding_ranges

    return [
        types.FoldingRange(
            start_line=fold.line,
            end_line=fold.end_line,
            kind=types.FoldingRangeKind.Region if fold.kind == "region" else None,
        )
        for fold in folding_ranges(outline)
    ]


def new_subagent(ls: WaveServer, *args: object) -> dict[str, str]:
    """``wave-ls.newSubagent``: a new subagent file written from the template, shown."""
    folder, name, description = _new_subagent_args(ls, args)
    from wave_ls.agents.authoring import TemplateError, write_new_subagent
    from wave_ls.agents.authoring.template import new_subagent_path

    try:
        _check_target(ls, new_subagent_path(folder, name))
        path = write_new_subagent(folder, name, description)
    except (TemplateError, OSError) as error:
        raise JsonRpcInvalidParams(f"{NEW_SUBAGENT}: {error}") from None
    uri = from_fs_path(str(path)) or path.as_uri()
    if _show_document_support(ls):
        run_task(show_document(ls, uri), "show the new subagent")
    return {"path": str(path), "uri": uri}


# Each LSP method, its handler (given the open documents first) and its options.
HANDLERS: list[tuple[str, Callable[..., object], object | None]] = [
    (types.INITIALIZED, initialized, None),
    (types.TEXT_DOCUMENT_DID_OPEN, did_open, None),
    (types.TEXT_DOCUMENT_DID_CHANGE, did_change, None),
    (types.TEXT_DOCUMENT_DID_SAVE, did_save, types.SaveOptions(include_text=False)),
    (types.TEXT_DOCUMENT_DID_CLOSE, did_close, None),
    (types.WORKSPACE_DID_CHANGE_WATCHED_FILES, watched_files, None),
    (
        types.TEXT_DOCUMENT_COMPLETION,
        completion,
        types.CompletionOptions(trigger_characters=TRIGGER_CHARACTERS, resolve_provider=True),
    ),
    (types.COMPLETION_ITEM_RESOLVE, completion_resolve, None),
    (types.TEXT_DOCUMENT_HOVER, hover, None),
    (
        types.TEXT_DOCUMENT_CODE_ACTION,
        code_action,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    ),
    (types.TEXT_DOCUMENT_DOCUMENT_SYMBOL, document_symbol, None),
    (types.TEXT_DOCUMENT_FOLDING_RANGE, folding_range, None),
]


def tier_models(cwd: Path, home: Path) -> dict[str, tuple[str, str]]:
    """Each mapped model tier's id and where it was set, for a file in ``cwd``'s catalog."""
    from wave_ls.agents.model_tiers import load_tier_map

    return dict(load_tier_map(cwd, home).models)


def skill_names(cwd: Path, home: Path) -> tuple[str, ...]:
    """The skills a ``skills:`` list may name: ``<dir>/<name>/SKILL.md`` in the project's
    and the user's ``.wave/skills`` (and ``.claude/skills``, for files shared with Claude
    Code), sorted."""
    names: set[str] = set()
    for base in (cwd, home):
        for folder in (base / ".wave" / "skills", base / ".claude" / "skills"):
            try:
                names.update(e.name for e in folder.iterdir() if (e / "SKILL.md").is_file())
            except OSError:
                continue
    return tuple(sorted(names))


async def show_document(ls: WaveServer, uri: str) -> None:
    """Open a file in the editor (``window/showDocument``); a refusal is not an error."""
    try:
        await ls.window_show_document_async(types.ShowDocumentParams(uri=uri, take_focus=True))
    except Exception as error:
        log.info("the client did not show %s: %s", uri, error)


def watch_agent_files(ls: WaveServer) -> None:
    """Ask the client to tell us about agent files changed outside the editor: the open
    ones are checked again, and the subagent registry reads them at once (it also sweeps
    the files itself, for clients that cannot watch)."""
    workspace = ls.client_capabilities.workspace
    watched = workspace.did_change_watched_files if workspace else None
    if not (watched and watched.dynamic_registration):
        return
    watchers = [
        types.FileSystemWatcher(glob_pattern=pattern)
        for pattern in ("**/.wave/agents/**/*.md", "**/.claude/agents/**/*.md")
    ]
    if watched.relative_pattern_support:
        for folder, patterns in (
            (ls.home / ".wave", ("agents/**/*.md", "plugins/*/agents/**/*.md")),
            (ls.home / ".claude", ("agents/**/*.md",)),
        ):
            base = from_fs_path(str(folder)) or folder.as_uri()
            watchers += [
                types.FileSystemWatcher(
                    glob_pattern=types.RelativePattern(base_uri=base, pattern=pattern)
                )
                for pattern in patterns
            ]
    registration = types.Registration(
        id="wave-agent-files",
        method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
        register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers),
    )

    async def register() -> None:
        try:
            await ls.client_register_capability_async(
                types.RegistrationParams(registrations=[registration])
            )
        except Exception as error:  # a client that cannot watch: saves still recheck
            log.info("the client did not register the agent file watcher: %s", error)

    run_task(register(), "watch agent files")


def _new_subagent_args(ls: WaveServer, args: tuple[object, ...]) -> tuple[Path, str, str | None]:
    """``[folder, name]``, ``[name]`` or ``[{folder?, name, description?}]``."""
    if len(args) == 1 and isinstance(args[0], dict):
        values = args[0]
        folder, name, description = (
            values.get("folder"),
            values.get("name"),
            values.get("description"),
        )
    elif len(args) == 1:
        folder, name, description = None, args[0], None
    elif len(args) in (2, 3):
        folder, name, description = args[0], args[1], args[2] if len(args) == 3 else None
    else:
        raise JsonRpcInvalidParams(f"{NEW_SUBAGENT}: expected the arguments [folder, name]")
    if not isinstance(name, str) or not name.strip():
        raise JsonRpcInvalidParams(f"{NEW_SUBAGENT}: 'name' must be a non-empty string")
    if folder is not None and not isinstance(folder, str):
        raise JsonRpcInvalidParams(f"{NEW_SUBAGENT}: 'folder' must be a path or file URI")
    if description is not None and not isinstance(description, str):
        raise JsonRpcInvalidParams(f"{NEW_SUBAGENT}: 'description' must be a string")
    if folder and folder.startswith("file:"):
        folder = to_fs_path(folder)
    if "\0" in (folder or ""):
        raise JsonRpcInvalidParams(f"{NEW_SUBAGENT}: 'folder' holds a NUL character")
    roots = workspace_folders(ls)
    if not roots and not (folder and Path(folder).is_absolute()):
        raise JsonRpcInvalidParams(f"{NEW_SUBAGENT}: {NO_WORKSPACE}")
    base = Path(folder) if folder else roots[0]
    if not base.is_absolute():
        base = roots[0] / base
    return base, name.strip(), description


NO_WORKSPACE = (
    "the client declared no workspace folder (workspaceFolders or rootUri); a new subagent "
    "is written only inside one, or in the user's agent directory"
)


def workspace_folders(ls: WaveServer) -> list[Path]:
    """The folders the client declared (``workspaceFolders``, kept current by pygls from
    ``workspace/didChangeWorkspaceFolders``, and ``rootUri``), first declared first."""
    uris = [folder.uri for folder in ls.workspace.folders.values()]
    if ls.workspace.root_uri:
        uris.append(ls.workspace.root_uri)
    paths = [Path(path) for uri in uris if uri.startswith("file:") and (path := to_fs_path(uri))]
    return list(dict.fromkeys(paths))


def _check_target(ls: WaveServer, path: Path) -> None:
    """InvalidParams unless ``path`` goes inside a workspace folder or the user's agent
    directory (``~/.wave/agents``, ``~/.claude/agents``), symbolic links followed."""
    where = Path(os.path.realpath(path.parent))
    allowed = [*workspace_folders(ls), ls.home / ".wave" / "agents", ls.home / ".claude" / "agents"]
    if any(where.is_relative_to(os.path.realpath(root)) for root in allowed):
        return
    shown = ", ".join(str(root) for root in workspace_folders(ls)) or "none declared"
    raise JsonRpcInvalidParams(
        f"{NEW_SUBAGENT}: {path} is outside the workspace folders ({shown}) and the user's "
        "agent directory; a new subagent is written only inside one of them"
    )


def _completion_item(
    docs: AgentDocuments, lines: list[str], suggestion: Suggestion, snippets: bool
) -> types.CompletionItem:
    text = suggestion.new_text
    snippet = suggestion.snippet and snippets
    if suggestion.snippet and not snippets:
        text = _PLACEHOLDER.sub(lambda m: m.group(1) or "", text)
    tool = suggestion.kind == "tool"  # its description comes with completionItem/resolve
    documentation = None if tool or not suggestion.documentation else suggestion.documentation
    return types.CompletionItem(
        label=suggestion.label,
        kind=COMPLETION_KIND[suggestion.kind],
        detail=suggestion.detail,
        documentation=_markdown(documentation) if documentation else None,
        data={"tool": suggestion.label} if tool else None,
        sort_text=suggestion.sort or None,
        filter_text=suggestion.label,
        insert_text_format=types.InsertTextFormat.Snippet if snippet else None,
        text_edit=types.TextEdit(docs.lsp_range(lines, suggestion.replace), text),
    )


def _markdown(text: str) -> types.MarkupContent:
    return types.MarkupContent(kind=types.MarkupKind.Markdown, value=text)


def _symbol(docs: AgentDocuments, lines: list[str], symbol: Symbol) -> types.DocumentSymbol:
    return types.DocumentSymbol(
        name=symbol.name,
        kind=SYMBOL_KIND[symbol.kind],
        detail=symbol.detail or None,
        range=docs.lsp_range(lines, symbol.range),
        selection_range=docs.lsp_range(lines, symbol.selection),
        children=[_symbol(docs, lines, child) for child in symbol.children] or None,
    )


def _meet(a: types.Range, b: types.Range) -> bool:
    """Whether two ranges overlap or touch."""
    a_start, a_end = (a.start.line, a.start.character), (a.end.line, a.end.character)
    b_start, b_end = (b.start.line, b.start.character), (b.end.line, b.end.character)
    return a_start <= b_end and b_start <= a_end


def _snippet_support(ls: WaveServer) -> bool:
    text_document = ls.client_capabilities.text_document
    completion = text_document.completion if text_document else None
    item = completion.completion_item if completion else None
    return bool(item and item.snippet_support)


def _show_document_support(ls: WaveServer) -> bool:
    window = ls.client_capabilities.window
    return bool(window and window.show_document and window.show_document.support)
