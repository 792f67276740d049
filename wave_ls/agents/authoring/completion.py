"""Completion inside an agent file's frontmatter (pure).

At the start of a frontmatter line: the keys, those not written yet first. After ``tools:`` or
``disallowedTools:`` (``A, B``, ``[A, B]`` or ``- A`` lines): the tool names, those not
listed yet first (``tools`` leaves out the ones never given to a subagent); after
``skills:``, in the same spellings, the skill names. After ``model:``: ``inherit``, the
tiers ``haiku``/``sonnet``/``opus`` and the endpoint's models; after the other keys with a
fixed set of values (``isolation``, ``permissionMode``, ``effort``, ``memory``, ``color``,
the booleans, ``maxTurns``' examples): those; ``name:``: a name from the file name. On the
first indented level under ``hooks:``: the events. In a file without frontmatter: a snippet
for a whole new subagent.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from wave_ls.agents.authoring.fixes import agent_name_from_file
from wave_ls.agents.authoring.keys import KEY_DOCS, TEMPLATE_KEYS
from wave_ls.agents.authoring.outline import KeyLine, Outline, TextRange, outline_of
from wave_ls.agents.model_tiers import TIERS
from wave_ls.agents.toolset import ALL_TOOL_NAMES, NEVER_FOR_SUBAGENTS

Kind = Literal["key", "tool", "value", "snippet"]
TOOL_KEYS = frozenset({"tools", "disallowedTools"})
# Keys whose value is a list of names, in the spellings of a tool list.
LIST_KEYS = TOOL_KEYS | {"skills"}
BOOLEAN_KEYS = frozenset({"omitAgentsMd", "omitClaudeMd", "background"})
# Keys whose value is one of a fixed set (``KeyDoc.values``); hover explains the value too.
CHOICE_KEYS = frozenset({"isolation", "permissionMode", "effort", "memory", "color", "maxTurns"})
_HOOK_EVENT_LINE = re.compile(r"([ \t]+)([A-Za-z]*)")
_WORD = re.compile(r"[A-Za-z0-9_*]")
_NAMES = re.compile(r"[A-Za-z_*][A-Za-z0-9_*]*")
# Skill names also hold '.', ':' and '-' (``runtime/tools/skill.py``).
_SKILL_WORD = re.compile(r"[A-Za-z0-9_.:*-]")
_SKILL_NAMES = re.compile(r"[A-Za-z0-9_*][A-Za-z0-9_.:*-]*")


@dataclass(frozen=True)
class Suggestion:
    """One completion: ``new_text`` replaces ``replace`` (a snippet when ``snippet``)."""

    label: str
    kind: Kind
    detail: str
    replace: TextRange
    new_text: str
    documentation: str | None = None
    snippet: bool = False
    sort: str = ""


@dataclass(frozen=True)
class CompletionFacts:
    """What completion offers beyond the file: tool descriptions (name -> the text the
    model sees; may be empty while they load), the endpoint's models (None when unknown)
    and the session's model (what ``inherit`` means), the skills a ``skills:`` list may
    name, and the model mapped to each tier with where it was set (None when not known).
    """

    tool_docs: Mapping[str, str]
    models: Sequence[str] | None = None
    session_model: str | None = None
    skills: Sequence[str] = ()
    tiers: Mapping[str, tuple[str, str]] | None = None


def new_file_snippet(name: str) -> str:
    """A whole subagent as an LSP snippet (tab stops for each value)."""
    return (
        f"---\nname: ${{1:{name}}}\ndescription: ${{2:When to use this agent}}\n"
        "tools: ${3:Read, Grep, Glob}\nmodel: ${4:inherit}\n---\n${0:You are ...}\n"
    )


def complete(
    text: str | Outline, line: int, column: int, path: Path, facts: CompletionFacts
) -> list[Suggestion]:
    """The suggestions at ``line``/``column`` (0-based; a Python index into the line)."""
    outline = outline_of(text)
    if not 0 <= line < len(outline.lines):
        return []
    current = outline.lines[line]
    column = min(column, len(current))
    if outline.open_line is None:
        return _new_file(outline, line, path)
    if not outline.in_frontmatter(line):
        return []
    prefix = current[:column]
    if re.fullmatch(r"[A-Za-z_]*", prefix):
        return _keys(outline, line, column)
    owner = next((k for k in reversed(outline.keys) if k.line <= line), None)
    if owner is None or (owner.line == line and column <= owner.key_end):
        return []
    if owner.key in TOOL_KEYS:
        return _tools(outline, owner, line, column, facts)
    if owner.key == "skills":
        return _names(outline, owner, line, column, facts.skills, "skill")
    if owner.key == "hooks":
        return _hook_events(outline, owner, line, column)
    if owner.line != line:
        return []
    values = _values(owner.key, path, facts)
    if not values:
        return []
    start = min(owner.value_start, column)
    where = TextRange(line, start, line, max(start, len(current.rstrip())))
    gap = "" if current[where.column - 1 : where.column] in (" ", "\t") else " "
    return [
        Suggestion(label, "value", detail, where, gap + label, doc, sort=f"{index:02d}")
        for index, (label, detail, doc) in enumerate(values)
    ]


def _new_file(outline: Outline, line: int, path: Path) -> list[Suggestion]:
    if any(text.strip() for text in outline.lines[:line]):
        return []
    current = outline.lines[line]
    if current.strip() and not "---".startswith(current.strip()):
        return []
    name = agent_name_from_file(path)
    return [
        Suggestion(
            "subagent",
            "snippet",
            "New subagent: frontmatter and prompt",
            TextRange(line, 0, line, len(current)),
            new_file_snippet(name),
            "A new subagent file: `name`, `description`, `tools`, `model`, then its prompt.",
            snippet=True,
            sort="00",
        )
    ]


def _keys(outline: Outline, line: int, column: int) -> list[Suggestion]:
    current = outline.lines[line]
    end = column
    while end < len(current) and (current[end].isalnum() or current[end] == "_"):
        end += 1
    has_colon = current[end:].lstrip().startswith(":")
    present = {k.key for k in outline.keys if k.line != line}
    order = [*TEMPLATE_KEYS, *(k for k in KEY_DOCS if k not in TEMPLATE_KEYS)]
    out = []
    for index, key in enumerate(order):
        doc = KEY_DOCS[key]
        # A key already written comes last (a second one would be a duplicate-key error).
        written = key in present
        out.append(
            Suggestion(
                key,
                "key",
                f"(already set) {doc.summary}" if written else doc.summary,
                TextRange(line, 0, line, end),
                key if has_colon else f"{key}: ",
                doc.markdown,
                sort=f"{1 if written else 0}{index:02d}",
            )
        )
    return sorted(out, key=lambda suggestion: suggestion.sort)


def _tools(
    outline: Outline, owner: KeyLine, line: int, column: int, facts: CompletionFacts
) -> list[Suggestion]:
    names = [
        name
        for name in ALL_TOOL_NAMES
        # A tool never given to a subagent would only earn a warning.
        if not (owner.key == "tools" and name in NEVER_FOR_SUBAGENTS)
    ]
    return _names(outline, owner, line, column, names, "tool", facts.tool_docs)


def _names(
    outline: Outline,
    owner: KeyLine,
    line: int,
    column: int,
    names: Sequence[str],
    what: str,
    docs: Mapping[str, str] | None = None,
) -> list[Suggestion]:
    """The names of a list value (``A, B``, ``[A, B]`` or ``- A`` lines) at the cursor,
    those not listed yet first; the word under the cursor is replaced."""
    current = outline.lines[line]
    if owner.line == line and column < owner.value_start and current[column:].strip():
        return []
    word, spelled = (_WORD, _NAMES) if what == "tool" else (_SKILL_WORD, _SKILL_NAMES)
    start = column
    while start > 0 and word.match(current[start - 1]):
        start -= 1
    end = column
    while end < len(current) and word.match(current[end]):
        end += 1
    typed = current[start:end]
    listed = set(spelled.findall(outline.value_text(owner))) - {typed}
    gap = " " if current[start - 1 : start] == ":" else ""
    where = TextRange(line, start, line, end)
    kind: Kind = "tool" if what == "tool" else "value"
    out = []
    for index, name in enumerate(names):
        description = docs.get(name) if docs is not None else None
        detail = _first_sentence(description) if description else what
        # Names already in the list come last (offered still: the list may be re-typed).
        sort = f"1{index:03d}" if name in listed else f"0{index:03d}"
        if name in listed:
            detail = f"(already listed) {detail}"
        out.append(Suggestion(name, kind, detail, where, gap + name, description, sort=sort))
    return sorted(out, key=lambda suggestion: suggestion.sort)


def _hook_events(outline: Outline, owner: KeyLine, line: int, column: int) -> list[Suggestion]:
    """The events, on the first indented level under ``hooks:`` (``  PreToolUse:``)."""
    current = outline.lines[line]
    match = _HOOK_EVENT_LINE.match(current[:column])
    if owner.line == line or match is None or match.end() != column:
        return []
    indent = len(match.group(1))
    # The first level is set by the first line under ``hooks:`` written so far.
    for number in range(owner.line + 1, line):
        text = outline.lines[number]
        if text.strip() and not text.lstrip().startswith("#"):
            if len(text) - len(text.lstrip()) != indent:
                return []
            break
    end = column
    while end < len(current) and current[end].isalnum():
        end += 1
    has_colon = current[end:].lstrip().startswith(":")
    doc = KEY_DOCS["hooks"]
    where = TextRange(line, indent, line, end)
    return [
        Suggestion(
            event,
            "value",
            doc.detail(event),
            where,
            event if has_colon else f"{event}:",
            doc.markdown,
            sort=f"{index:02d}",
        )
        for index, event in enumerate(doc.values)
    ]


def _values(key: str, path: Path, facts: CompletionFacts) -> list[tuple[str, str, str | None]]:
    """(label, detail, documentation) of the values a scalar key takes."""
    if key == "model":
        session = facts.session_model
        model_doc = KEY_DOCS["model"].markdown
        out: list[tuple[str, str, str | None]] = [
            (
                "inherit",
                f"the session's model ({session})" if session else "the session's model",
                model_doc,
            )
        ]
        out += [(tier, _tier_detail(tier, facts), model_doc) for tier in TIERS]
        out += [(model, "offered by the endpoint", None) for model in sorted(facts.models or ())]
        return out
    if key == "name":
        return [(agent_name_from_file(path), "from the file name", None)]
    doc = KEY_DOCS.get(key)
    if doc is None or key == "hooks" or not doc.values:
        return []
    return [(value, doc.detail(value), doc.markdown) for value in doc.values]


def _tier_detail(tier: str, facts: CompletionFacts) -> str:
    mapped = facts.tiers.get(tier) if facts.tiers is not None else None
    if mapped is not None:
        return f"Claude Code's tier: runs on {mapped[0]}"
    if facts.tiers is not None:
        return "Claude Code's tier: no model set for it, runs on the session's"
    return "Claude Code's tier: the model set for it, else the session's"


def _first_sentence(text: str) -> str:
    first = text.strip().split("\n", 1)[0]
    cut = first.find(". ")
    return first[: cut + 1] if 0 < cut < 100 else first[:100]
