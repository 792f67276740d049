"""Hover inside an agent file's frontmatter (pure): a key's meaning and values, a tool's
description as the model reads it, and the model a ``model`` value resolves to."""

from __future__ import annotations

from dataclasses import dataclass

from wave_ls.agents.authoring.completion import (
    BOOLEAN_KEYS,
    CHOICE_KEYS,
    TOOL_KEYS,
    CompletionFacts,
)
from wave_ls.agents.authoring.keys import KEY_DOCS, key_markdown
from wave_ls.agents.authoring.outline import Outline, TextRange, outline_of
from wave_ls.agents.model_tiers import tier_env, tier_of
from wave_ls.agents.parse import closest_tool_name
from wave_ls.agents.toolset import ALL_TOOL_NAMES, ALL_TOOLS_WILDCARD, NEVER_FOR_SUBAGENTS

_WORD_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_*")


@dataclass(frozen=True)
class HoverText:
    markdown: str
    range: TextRange


def hover(text: str | Outline, line: int, column: int, facts: CompletionFacts) -> HoverText | None:
    """What to show at ``line``/``column`` (0-based; a Python index), or None."""
    outline = outline_of(text)
    if not outline.in_frontmatter(line):
        return None
    current = outline.lines[line]
    own = next((k for k in outline.keys if k.line == line), None)
    if own is not None and column <= own.key_end:
        return HoverText(key_markdown(own.key), own.key_range)
    owner = next((k for k in reversed(outline.keys) if k.line <= line), None)
    if owner is None:
        return None
    if owner.key in TOOL_KEYS:
        start, end = _word(current, column)
        if start == end:
            return None
        return HoverText(
            _tool_markdown(current[start:end], facts), TextRange(line, start, line, end)
        )
    if owner.line != line or column < owner.value_start:
        return None
    where = outline.value_range(owner)
    if owner.key == "model":
        return HoverText(_model_markdown(outline.value_text(owner).strip(), facts), where)
    if owner.key in CHOICE_KEYS or owner.key in BOOLEAN_KEYS:
        return HoverText(_choice_markdown(owner.key, outline.value_text(owner).strip()), where)
    return None


def _choice_markdown(key: str, value: str) -> str:
    """A key's text, led by what the value written means (or that it is not a value)."""
    doc = KEY_DOCS[key]
    detail = doc.detail(value)
    if detail:
        return f"`{value}`: {detail}.\n\n{doc.markdown}"
    return doc.markdown


def _word(text: str, column: int) -> tuple[int, int]:
    start = column
    while start > 0 and text[start - 1] in _WORD_CHARS:
        start -= 1
    end = column
    while end < len(text) and text[end] in _WORD_CHARS:
        end += 1
    return start, end


def _tool_markdown(name: str, facts: CompletionFacts) -> str:
    if name == ALL_TOOLS_WILDCARD:
        return "**`*`**: every tool (the same as leaving `tools` out)."
    if name not in ALL_TOOL_NAMES:
        close = closest_tool_name(name)
        hint = f" Did you mean `{close}`?" if close else ""
        return f"**`{name}`**: not a wave-ls tool; it is ignored.{hint}"
    parts = [f"**`{name}`** (tool)"]
    if name in NEVER_FOR_SUBAGENTS:
        parts.append("Never given to a subagent (one level of delegation only).")
    description = facts.tool_docs.get(name)
    parts.append(description.strip() if description else "The description is loading.")
    return "\n\n".join(parts)


def _model_markdown(value: str, facts: CompletionFacts) -> str:
    if not value or value == "inherit":
        session = facts.session_model
        resolved = (
            f"the session's current model, now `{session}`"
            if session
            else "the session's current model (none is configured: set `WAVE_MODEL`)"
        )
        return f"**model** `inherit`: this subagent answers with {resolved}."
    tier = tier_of(value, facts.models)
    if tier is not None:
        return _tier_markdown(value, tier, facts)
    text = f"**model** `{value}`: this subagent answers with the model `{value}`."
    if facts.models is None:
        return text + " The endpoint's model list is not known."
    if value in facts.models:
        return text + " The endpoint offers it."
    return text + " The endpoint does not offer it: a delegation to this subagent will fail."


def _tier_markdown(value: str, tier: str, facts: CompletionFacts) -> str:
    """What a tier runs on: the model mapped to it (and where), else the session's."""
    named = "" if tier == value else " (the tier its name contains: the endpoint does not list it)"
    head = f"**model** `{value}`: Claude Code's `{tier}` tier{named}."
    mapped = facts.tiers.get(tier) if facts.tiers is not None else None
    if mapped is not None:
        return f"{head} It runs on `{mapped[0]}` ({mapped[1]})."
    session = f" (now `{facts.session_model}`)" if facts.session_model else ""
    unmapped = "No model is set for this tier, so it" if facts.tiers is not None else "Unmapped, it"
    return (
        f"{head} {unmapped} runs on the session's model{session}: set `models.{tier}` in "
        f"the settings or `{tier_env(tier)}` to choose one."
    )
