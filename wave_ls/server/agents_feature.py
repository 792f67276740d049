"""``wave/agents/list`` and ``wave/chatInput/completion``."""

from __future__ import annotations

import asyncio
import gc
import operator

from pygls.exceptions import JsonRpcInvalidParams

from wave_ls.chat_input.completion import Candidate, complete
from wave_ls.chat_input.query import CursorOutsideText, at_query
from wave_ls.server.app import WaveServer
from wave_ls.server.params import existing_dir, field, require_object, required_str

AGENTS_LIST = "wave/agents/list"
COMPLETION = "wave/chatInput/completion"
# LSP CompletionItemKind
KIND_AGENT = 7  # Class: stands out from files in every client
KIND_FILE = 17


def completion_item(candidate: Candidate) -> dict[str, object]:
    item: dict[str, object] = {
        "label": candidate.label,
        "kind": KIND_AGENT if candidate.kind == "agent" else KIND_FILE,
        "detail": candidate.detail,
        "documentation": candidate.documentation,
        "insertText": candidate.insert_text,
        "sortText": candidate.sort_text,
        "filterText": candidate.filter_text,
    }
    # The agent's chip colour and where it came from (issue 24).
    data = {"color": candidate.color, "path": candidate.path}
    if any(value is not None for value in data.values()):
        item["data"] = {key: value for key, value in data.items() if value is not None}
    return item


def register(server: WaveServer) -> None:
    @server.feature(AGENTS_LIST)
    async def agents_list(ls: WaveServer, params: object) -> dict[str, object]:
        p = require_object(params if params is not None else {}, AGENTS_LIST)
        cwd_text = field(p, "cwd", str, AGENTS_LIST)
        cwd = existing_dir(cwd_text, "cwd", AGENTS_LIST) if cwd_text else ls.root
        catalog = await asyncio.to_thread(ls.agents.load, cwd)  # reads files: off the loop
        return {
            "agents": [agent.to_json() for agent in catalog.agents],
            "problems": [problem.to_json() for problem in catalog.problems],
        }

    @server.feature(COMPLETION)
    async def chat_input_completion(ls: WaveServer, params: object) -> dict[str, object]:
        p = require_object(params, COMPLETION)
        text = required_str(p, "text", COMPLETION)
        cursor = field(p, "cursor", int, COMPLETION)
        encoding = ls.position_encoding
        session_id = field(p, "sessionId", str, COMPLETION)
        cwd = ls.sessions.get(session_id, COMPLETION).cwd if session_id else ls.root
        try:
            query = at_query(text, cursor, encoding, strict=True)
        except CursorOutsideText as error:
            raise JsonRpcInvalidParams(
                f"{COMPLETION}: 'cursor' {cursor} is outside the text (counted in {encoding})"
            ) from error
        if query is None:
            return {"isIncomplete": False, "items": []}

        # Off the loop: the first request loads the agents and lists the files (together:
        # git runs in its own process meanwhile); later ones only search.
        catalog, files = await asyncio.gather(
            asyncio.to_thread(ls.agents.load, cwd),
            asyncio.to_thread(ls.workspace_files(cwd).files),
        )
        found = await asyncio.to_thread(complete, query, catalog.agents, files)
        _settle(catalog, files)
        # Always incomplete: the server filters, each group is cut at 50 items, and in a
        # tree past the file list's cap some files are found only when the query names them.
        return {"isIncomplete": True, "items": [completion_item(c) for c in found]}


_settled: list[object] = []  # the catalog and file list seen by the last completion


def _settle(*objects: object) -> None:
    """Once per new catalog or file list: freeze what is alive (they live until the next
    change), so the collector's full passes no longer walk thousands of agents (a 30 ms
    pause at 5,000, the p99 tail). Freezing is O(1) and replaced objects are still freed by
    their reference counts; the price: one that later dies inside a reference cycle is
    never collected."""
    if len(_settled) == len(objects) and all(map(operator.is_, _settled, objects)):
        return
    _settled[:] = objects
    gc.freeze()
