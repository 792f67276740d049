"""Document symbols and folding ranges of an agent file (pure): the frontmatter with its
keys, and the prompt's Markdown headings nested by level."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from wave_ls.agents.authoring.outline import Outline, TextRange, outline_of

SymbolKind = Literal["frontmatter", "key", "heading"]
PREVIEW = 60


@dataclass
class Symbol:
    name: str
    kind: SymbolKind
    detail: str
    range: TextRange
    selection: TextRange
    children: list[Symbol] = field(default_factory=list)


@dataclass(frozen=True)
class Fold:
    line: int
    end_line: int
    kind: Literal["region", "section", "value"]


def document_symbols(text: str | Outline) -> list[Symbol]:
    outline = outline_of(text)
    out: list[Symbol] = []
    if outline.open_line is not None:
        end = min(outline.frontmatter_end, len(outline.lines) - 1)
        keys = [
            Symbol(
                key.key,
                "key",
                _preview(outline.value_text(key)),
                TextRange(key.line, 0, key.last_line, len(outline.lines[key.last_line])),
                key.key_range,
            )
            for key in outline.keys
        ]
        name = outline.by_key.get("name")
        out.append(
            Symbol(
                "frontmatter",
                "frontmatter",
                _preview(outline.value_text(name)) if name else "",
                TextRange(outline.open_line, 0, end, len(outline.lines[end])),
                TextRange(outline.open_line, 0, outline.open_line, 3),
                keys,
            )
        )
    stack: list[tuple[int, Symbol]] = []
    for heading in outline.headings:
        symbol = Symbol(
            heading.title or "#" * heading.level,
            "heading",
            "",
            TextRange(heading.line, 0, heading.last_line, len(outline.lines[heading.last_line])),
            TextRange(heading.line, 0, heading.line, len(outline.lines[heading.line])),
        )
        while stack and stack[-1][0] >= heading.level:
            stack.pop()
        (stack[-1][1].children if stack else out).append(symbol)
        stack.append((heading.level, symbol))
    return out


def folding_ranges(text: str | Outline) -> list[Fold]:
    outline = outline_of(text)
    out: list[Fold] = []
    if outline.open_line is not None and outline.close_line is not None:
        out.append(Fold(outline.open_line, outline.close_line, "region"))
    out += [Fold(k.line, k.last_line, "value") for k in outline.keys if k.last_line > k.line]
    out += [Fold(h.line, h.last_line, "section") for h in outline.headings if h.last_line > h.line]
    return out


def _preview(value: str) -> str:
    flat = " ".join(value.split())
    return flat if len(flat) <= PREVIEW else flat[: PREVIEW - 1] + "…"
