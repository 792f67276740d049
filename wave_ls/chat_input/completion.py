"""Candidates for the chat input's `@` completion: subagents first, then files.

Pure: the caller passes the query (`query.at_query`), the registered subagents and the
workspace files (`workspace_files.WorkspaceFiles.files()`, a prepared `FileIndex`; a plain
list works too but is indexed on every call). The LSP adapter turns a `Candidate` into a
`CompletionItem` field for field (MENTION-1, MENTION-2).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal, Protocol

from wave_ls.chat_input.file_index import FileIndex
from wave_ls.chat_input.mentions import is_mentionable_name

AGENT_PREFIX = "agent:"
FILE_PREFIX = "file:"

# Ranks of an agent match, best first.
NAME_PREFIX = 0
NAME_SUBSTRING = 1
DESCRIPTION_MATCH = 2


class AgentLike(Protocol):
    """What completion needs of a subagent definition."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...


@dataclass(frozen=True)
class Candidate:
    """One `@` completion item, in the words of an LSP `CompletionItem`.

    `sort_text` orders subagents ("0-...") before files ("1-..."), each group by rank and
    then position. `filter_text` starts with `@` and the group's prefix, for clients that
    filter again on the typed word (the replaced range should start at the `@`).
    """

    label: str
    kind: Literal["agent", "file"]
    detail: str
    documentation: str
    insert_text: str
    sort_text: str
    filter_text: str


def complete(
    query: str | None,
    agents: Sequence[AgentLike],
    files: Sequence[str],
    limit: int = 50,
) -> list[Candidate]:
    """The candidates for `query` (the text after `@`; None means no `@` word: no items).

    Subagents are matched on name and description, ignoring case (name prefix, then name
    substring, then description; ties by name); files on their path (see
    `FileIndex.search`). A query starting with `agent:` or `file:` lists only that group,
    filtered by the rest. An empty query lists the subagents by name and the first files.
    At most `limit` items of each group are returned; subagents come first.
    """
    if query is None:
        return []
    want_agents = want_files = True
    lowered = query.lower()
    if lowered.startswith(AGENT_PREFIX):
        query, want_files = query[len(AGENT_PREFIX) :], False
    elif lowered.startswith(FILE_PREFIX):
        query, want_agents = query[len(FILE_PREFIX) :], False
    found: list[Candidate] = []
    if want_agents:
        found.extend(_agent_candidates(query, agents, limit))
    if want_files:
        found.extend(_file_candidates(query, files, limit))
    return found


@dataclass(frozen=True)
class _AgentRow:
    name: str
    description: str
    lower_name: str
    lower_short_name: str  # the part after the last `:` of a plugin agent's name
    lower_description: str


@lru_cache(maxsize=8)
def _agent_rows(pairs: tuple[tuple[str, str], ...]) -> tuple[_AgentRow, ...]:
    """The agents lowercased once and sorted by name (cached: the registry rarely changes).

    Names `[@agent:<name>]` could not be read back are left out: offering them would mislead.
    """
    rows = [
        _AgentRow(name, text, name.lower(), name.rsplit(":", 1)[-1].lower(), text.lower())
        for name, text in pairs
        if is_mentionable_name(name)
    ]
    rows.sort(key=lambda row: (row.lower_name, row.name))
    return tuple(rows)


def _agent_candidates(query: str, agents: Sequence[AgentLike], limit: int) -> list[Candidate]:
    needle = query.lower()
    rows = _agent_rows(tuple((agent.name, agent.description) for agent in agents))
    # Rows are sorted by name, so bucketing by rank keeps "ties by name" without a sort.
    buckets: tuple[list[_AgentRow], ...] = ([], [], [])
    for row in rows:
        rank = _agent_rank(needle, row)
        if rank is not None:
            buckets[rank].append(row)
    ranked = [(rank, row) for rank, bucket in enumerate(buckets) for row in bucket][:limit]
    return [
        Candidate(
            label=row.name,
            kind="agent",
            detail=row.description,
            documentation=row.description,
            insert_text=f"[@agent:{row.name}]",
            sort_text=f"0-{rank}-{position:06d}",
            filter_text=f"@agent:{row.name} {row.description}",
        )
        for position, (rank, row) in enumerate(ranked)
    ]


def _agent_rank(needle: str, row: _AgentRow) -> int | None:
    # A plugin agent `<plugin>:<name>` is a prefix match on its own name too.
    if row.lower_name.startswith(needle) or row.lower_short_name.startswith(needle):
        return NAME_PREFIX
    if needle in row.lower_name:
        return NAME_SUBSTRING
    if needle in row.lower_description:
        return DESCRIPTION_MATCH
    return None


def _file_candidates(query: str, files: Sequence[str], limit: int) -> list[Candidate]:
    if query:
        index = files if isinstance(files, FileIndex) else FileIndex(files)
        matches = index.search(query, limit)
    else:
        matches = [(0, path) for path in files[:limit]]
    return [
        Candidate(
            label=path,
            kind="file",
            detail="",
            documentation="",
            insert_text=f"[@file:{path}]",
            sort_text=f"1-{rank}-{position:06d}",
            filter_text=f"@file:{path}",
        )
        for position, (rank, path) in enumerate(matches)
    ]
