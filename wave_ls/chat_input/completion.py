"""Candidates for the chat input's `@` completion: subagents first, then files.

Pure: the caller passes the query (`query.at_query`), the registered subagents and the
workspace files (`workspace_files.WorkspaceFiles.files()`, a prepared `FileIndex`; a plain
list works too but is indexed on every call). The LSP adapter turns a `Candidate` into a
`CompletionItem` field for field (MENTION-1, MENTION-2).
"""

from __future__ import annotations

import copy
import heapq
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import compress, count, islice
from operator import is_not, itemgetter
from typing import Literal, Protocol

from wave_ls.chat_input.file_index import FileIndex, find_lines, join_lines
from wave_ls.chat_input.mentions import mention_form

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


def _color(agent: AgentLike) -> str | None:
    """The agent's ``color`` (a frontmatter key), when it has one."""
    color = getattr(agent, "color", None)
    return color if isinstance(color, str) and color else None


def _path(agent: AgentLike) -> str | None:
    """The agent's file, when it is one a user can open (not a built-in's)."""
    path = getattr(agent, "path", None)
    return str(path) if path is not None and getattr(agent, "source", "") != "builtin" else None


@dataclass(frozen=True)
class Candidate:
    """One `@` completion item, in the words of an LSP `CompletionItem`.

    `sort_text` orders subagents ("0-...") before files ("1-..."), each group by rank and
    then position. `filter_text` starts with `@` and the group's prefix, for clients that
    filter again on the typed word (the replaced range should start at the `@`). `color` is
    a subagent's frontmatter ``color`` (the item's ``data.color``), for its chip; `path` its
    file (``data.path``: where it came from).
    """

    label: str
    kind: Literal["agent", "file"]
    detail: str
    documentation: str
    insert_text: str
    sort_text: str
    filter_text: str
    color: str | None = None
    path: str | None = None


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


class AgentIndex:
    """The mentionable subagents sorted by name, their names, short names (after a
    plugin's `:`) and descriptions lowercased and joined, for `str.find` scans in C.

    A name a mention cannot hold (Claude Code allows `.` and spaces) is offered when its
    `mention_form` names only it, as the mention parser reads it; the item inserts that
    form. ``rows`` are (name, description, the form to insert, colour, path); ``agents``
    the sequence it was made of."""

    def __init__(self, agents: Sequence[AgentLike]) -> None:
        self.agents = agents
        entries = list(map(_entry, agents))
        sort_keys = list(map(_SORT_KEY, entries))
        order = sorted(range(len(entries)), key=sort_keys.__getitem__)
        unique = _unique_forms(map(_FOLDED, entries))
        kept = [at for at in order if entries[at][1] == entries[at][5] or entries[at][8] in unique]
        self._row_of = dict(zip(kept, count()))  # by position in ``agents``
        self.rows = [_row(entries[at]) for at in kept]
        # Matched on what a mention holds (the form: `@Python-Ex` finds `Python Expert`).
        forms = [entries[at][6] for at in kept]
        self._names, self._name_starts = join_lines(forms)
        self._short, self._short_starts = join_lines(form.rsplit(":", 1)[-1] for form in forms)
        self._lowered = [entries[at][7] for at in kept]
        self._texts, self._text_starts = join_lines(self._lowered)
        _forget_gone(agents)

    def renewed(self, agents: Sequence[AgentLike]) -> AgentIndex | None:
        """The index of ``agents`` made from this one, when ``agents`` is this index's
        sequence with at most ``MAX_RENEWED`` agents replaced by ones of the same names (an
        edited file: a description, a colour); None when more changed. Saving one file of
        5,000 then costs a comparison in C and one row, not a new index that `@`
        completion requests waited behind (issue 30)."""
        before = self.agents
        if len(agents) != len(before):
            return None
        changed = list(islice(compress(count(), map(is_not, before, agents)), MAX_RENEWED + 1))
        if len(changed) > MAX_RENEWED or any(agents[at].name != before[at].name for at in changed):
            return None
        index = copy.copy(self)
        index.agents, index.rows, index._lowered = agents, list(self.rows), list(self._lowered)
        for at in changed:
            row = self._row_of.get(at)
            if row is not None:  # else not mentionable by its name, as before (the same name)
                entry = _entry(agents[at])
                index.rows[row], index._lowered[row] = _row(entry), entry[7]
        if index._lowered != self._lowered:
            index._texts, index._text_starts = join_lines(index._lowered)
        _forget_gone(agents)
        return index

    def search(self, query: str, limit: int) -> list[tuple[int, int]]:
        """Up to `limit` (rank, row) matches, best rank first, then by name: name prefix (a
        plugin agent's own name counts), name substring, description substring."""
        needle = query.lower()
        if not needle:
            return [(NAME_PREFIX, row) for row in range(min(limit, len(self.rows)))]
        if "\n" in needle or limit <= 0:
            return []
        prefix = heapq.merge(
            find_lines(self._names, self._name_starts, "\n" + needle),
            find_lines(self._short, self._short_starts, "\n" + needle),
        )
        stages = (
            (NAME_PREFIX, prefix),
            (NAME_SUBSTRING, find_lines(self._names, self._name_starts, needle)),
            (DESCRIPTION_MATCH, find_lines(self._texts, self._text_starts, needle)),
        )
        seen: dict[int, int] = {}
        for rank, rows in stages:
            for row in rows:
                if row not in seen:
                    seen[row] = rank
                    if len(seen) >= limit:
                        return list(_by_rank(seen))
        return list(_by_rank(seen))


# What the index needs of one agent: (name lowercased, name, description, colour, path,
# mention form, form lowercased, description lowercased on one line, form case-folded,
# name case-folded). Kept per agent object: a sweep that renews a catalog of 5,000 agents
# after one file changed reuses the other 4,999 definitions, and working this out for
# each was most of the ~10 ms the renewal held the GIL while requests waited (issue 30).
_Entry = tuple[str, str, str, str | None, str | None, str, str, str, str, str]
_ENTRIES: dict[int, tuple[AgentLike, _Entry]] = {}
_KEPT_ENTRIES = 1_000  # beyond twice the agents indexed last, entries of gone agents go
MAX_RENEWED = 64  # agents replaced at once that `AgentIndex.renewed` still takes
_SORT_KEY = itemgetter(0, 1)
_FOLDED = itemgetter(8, 9)


def _entry(agent: AgentLike) -> _Entry:
    known = _ENTRIES.get(id(agent))
    if known is not None and known[0] is agent:
        return known[1]
    name, text = agent.name, agent.description
    form = mention_form(name)
    entry = (
        name.lower(),
        name,
        text,
        _color(agent),
        _path(agent),
        form,
        form.lower(),
        text.lower().replace("\n", " "),  # a query never holds whitespace
        form.casefold(),
        name.casefold(),
    )
    _ENTRIES[id(agent)] = (agent, entry)
    return entry


def _row(entry: _Entry) -> tuple[str, str, str, str | None, str | None]:
    return entry[1], entry[2], entry[5], entry[3], entry[4]


def _forget_gone(agents: Sequence[AgentLike]) -> None:
    """Drop the entries of agents no longer indexed, once they outnumber those that are."""
    if len(_ENTRIES) > 2 * len(agents) + _KEPT_ENTRIES:
        alive = {id(agent) for agent in agents}
        for key in [key for key in list(_ENTRIES) if key not in alive]:
            _ENTRIES.pop(key, None)


def _unique_forms(named: Iterable[Sequence[str]]) -> set[str]:
    """The case-folded mention forms that only one agent answers to (by its name or its
    form), as ``mentions.mention_reminder`` resolves them; ``named`` is (form, name),
    both case-folded."""
    count: dict[str, int] = {}
    for form, name in named:
        for key in {form, name}:
            count[key] = count.get(key, 0) + 1
    return {key for key, seen in count.items() if seen == 1}


def _by_rank(seen: dict[int, int]) -> list[tuple[int, int]]:
    return [(rank, row) for row, rank in seen.items()]


_INDEXES: list[AgentIndex] = []  # newest first
_KEPT_INDEXES = 4  # a few working folders (sessions in worktrees) at once


def agent_index(agents: Sequence[AgentLike]) -> AgentIndex:
    """The index of `agents`, kept while the same sequence object is passed in (the
    registry hands out the same catalog while nothing changed), renewed from a kept one
    when only a few agents were replaced. Thread-safe."""
    kept = list(_INDEXES)
    for index in kept:
        if index.agents is agents:
            return index
    renewed = (index.renewed(agents) for index in kept)
    fresh = next((index for index in renewed if index is not None), None) or AgentIndex(agents)
    _INDEXES.insert(0, fresh)
    del _INDEXES[_KEPT_INDEXES:]
    return fresh


def _agent_candidates(query: str, agents: Sequence[AgentLike], limit: int) -> list[Candidate]:
    index = agent_index(agents)
    return [
        Candidate(
            label=name,
            kind="agent",
            detail=text,
            documentation=text,
            insert_text=f"[@agent:{form}]",
            sort_text=f"0-{rank}-{position:06d}",
            filter_text=f"@agent:{form} {text}",
            color=color,
            path=path,
        )
        for position, (rank, (name, text, form, color, path)) in enumerate(
            (rank, index.rows[row]) for rank, row in index.search(query, limit)
        )
    ]


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
