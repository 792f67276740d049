"""Where a problem is in a document's text, and the quick fixes for it (pure).

Fixes: replace a misspelt tool name, key, ``isolation`` or ``model`` with the suggested
one; quote a value containing ``': '`` (or rewrite it as a ``>-`` block), and a one-line
value read whole the way Claude Code reads it (``lenient-value``), keeping the whole line
(a `` #`` in it is text, not a comment); add a missing ``name`` (from the file name) or
``description``; set a non-boolean ``omitAgentsMd`` to ``true`` or ``false``. Every fix
leaves a file the loader reads without that problem.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from wave_ls.agents.authoring.outline import KeyLine, Outline, TextRange
from wave_ls.agents.definition import Problem, ProblemCode
from wave_ls.agents.parse import NAME_PATTERN

DESCRIPTION_PLACEHOLDER = "When to use this agent (the main agent reads this to choose it)"
_INDENT = "  "


@dataclass(frozen=True)
class TextEdit:
    range: TextRange
    new_text: str


@dataclass(frozen=True)
class Fix:
    """A quick fix: its title, its edits (all in the same document) and the problem."""

    title: str
    edits: tuple[TextEdit, ...]
    problem: Problem
    preferred: bool = False


def problem_range(problem: Problem, lines: list[str]) -> TextRange:
    """Where to show a problem: its exact span when it is on the problem's line, else that
    line's text (the first line for a whole-file problem)."""
    line = max(0, min((problem.line or 1) - 1, len(lines) - 1))
    span = problem.span
    if span is not None and span.line == problem.line:
        end_line = min(span.end_line - 1, len(lines) - 1)
        end_column = min(span.end_column, len(lines[end_line]))
        if (end_line, end_column) > (line, span.column):
            return TextRange(line, span.column, end_line, end_column)
    text = lines[line]
    start = len(text) - len(text.lstrip())
    return TextRange(line, start, line, max(start, len(text.rstrip())))


def agent_name_from_file(path: Path) -> str:
    """A valid agent name made from a file name (``code reviewer.md`` -> ``code-reviewer``)."""
    name = re.sub(r"[^A-Za-z0-9_-]+", "-", path.stem).strip("-")
    if not name:
        return "my-agent"
    return name if NAME_PATTERN.match(name) else f"agent-{name}"


def quick_fixes(text: str, path: Path, problems: list[Problem]) -> list[Fix]:
    """The fixes for ``problems`` (of ``text``, the document at ``path``)."""
    outline = Outline.of(text)
    out: list[Fix] = []
    for problem in problems:
        out.extend(_fixes(outline, path, problem))
    return out


def _fixes(outline: Outline, path: Path, problem: Problem) -> list[Fix]:
    code = problem.code
    if problem.suggestion and problem.span is not None:
        where = problem_range(problem, outline.lines)
        wrong = _text(outline, where)
        edit = TextEdit(where, problem.suggestion)
        return [Fix(f"Replace '{wrong}' with '{problem.suggestion}'", (edit,), problem, True)]
    if code == ProblemCode.UNQUOTED_COLON:
        return _quote_fixes(outline, problem)
    if code == ProblemCode.LENIENT_VALUE:
        return _lenient_fixes(outline, problem)
    if code == ProblemCode.MISSING_NAME:
        name = agent_name_from_file(path)
        return [_set_or_add(outline, problem, "name", name, after=None)]
    if code == ProblemCode.MISSING_DESCRIPTION:
        return [_set_or_add(outline, problem, "description", DESCRIPTION_PLACEHOLDER, "name")]
    if code == ProblemCode.NOT_BOOLEAN:
        key = outline.key_at((problem.line or 1) - 1)
        if key is None:
            return []
        return [
            Fix(f"Set {key.key} to {value}", (_value_edit(outline, key, value),), problem, False)
            for value in ("true", "false")
        ]
    return []


def _quote_fixes(outline: Outline, problem: Problem) -> list[Fix]:
    key = outline.key_at((problem.line or 1) - 1)
    if key is None:
        return []
    out = []
    if key.line == key.last_line:
        # The whole line: a ' #' in a value YAML could not read is text, as Claude Code
        # reads it (the outline's value would stop there, as at a comment).
        where = _whole_line_value(outline, key)
        quoted = double_quoted(_text(outline, where))
        out.append(Fix("Quote the value", (TextEdit(where, quoted),), problem, True))
        value = _text(outline, where)
    else:
        where = outline.value_range(key)
        value = outline.value_text(key)
    parts = [line.strip() for line in value.split("\n")]
    block = ">-" + "".join(f"\n{_INDENT}{part}" if part else "\n" for part in parts)
    out.append(
        Fix(
            "Write the value as a folded block ('>-')",
            (_gap_edit(outline, where, block),),
            problem,
            key.line != key.last_line,
        )
    )
    return out


def _lenient_fixes(outline: Outline, problem: Problem) -> list[Fix]:
    """A one-line value read as the whole line: the same text in double quotes (a
    description's ``\\n`` stays a line break, as it was read); a folded block when
    that says the same."""
    where = _lenient_range(outline, problem)
    if where is None:
        return []
    value = _text(outline, where)
    key = outline.key_at(where.line)
    meaning = value
    if len(value) > 1 and value[0] == value[-1] == "'":  # YAML's single quotes, undone
        meaning = value[1:-1].replace("''", "'")
    if key is not None and key.key == "description":
        meaning = meaning.replace("\\n", "\n")
    out = [Fix("Quote the value", (TextEdit(where, double_quoted(meaning)),), problem, True)]
    if meaning == value and not value.startswith(("'", '"')):
        block = f">-\n{_INDENT}{value.strip()}"
        out.append(
            Fix(
                "Write the value as a folded block ('>-')",
                (_gap_edit(outline, where, block),),
                problem,
            )
        )
    return out


def double_quoted(text: str) -> str:
    """``text`` as a YAML double-quoted scalar (``\\``, ``"`` and line breaks escaped)."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def _lenient_range(outline: Outline, problem: Problem) -> TextRange | None:
    """The value as written on its line: the problem's span, else from after ``key: `` to
    the end of the line (trailing spaces left out)."""
    span = problem.span
    if span is not None and span.line == span.end_line and span.line - 1 < len(outline.lines):
        line = span.line - 1
        end = min(span.end_column, len(outline.lines[line]))
        if end > span.column:
            return TextRange(line, span.column, line, end)
    key = outline.key_at((problem.line or 1) - 1)
    if key is None or key.line != key.last_line:
        return None
    where = _whole_line_value(outline, key)
    return where if where.end_column > where.column else None


def _whole_line_value(outline: Outline, key: KeyLine) -> TextRange:
    end = max(key.value_start, len(outline.lines[key.line].rstrip()))
    return TextRange(key.line, key.value_start, key.line, end)


def _set_or_add(outline: Outline, problem: Problem, key: str, value: str, after: str | None) -> Fix:
    existing = outline.by_key.get(key)
    if existing is not None:
        return Fix(f"Set '{key}: {value}'", (_value_edit(outline, existing, value),), problem, True)
    anchor = outline.by_key.get(after) if after else None
    line = anchor.last_line + 1 if anchor is not None else (outline.open_line or 0) + 1
    edit = TextEdit(TextRange(line, 0, line, 0), f"{key}: {value}\n")
    return Fix(f"Add '{key}: {value}'", (edit,), problem, True)


def _value_edit(outline: Outline, key: KeyLine, value: str) -> TextEdit:
    """Replace a key's value; a space after the colon when there was none."""
    return _gap_edit(outline, outline.value_range(key), value)


def _gap_edit(outline: Outline, where: TextRange, value: str) -> TextEdit:
    """Replace the text at ``where``; a space before it when it follows the colon."""
    before = outline.lines[where.line][where.column - 1 : where.column]
    gap = "" if before in (" ", "\t") else " "
    return TextEdit(where, gap + value)


def _text(outline: Outline, where: TextRange) -> str:
    if where.line == where.end_line:
        return outline.lines[where.line][where.column : where.end_column]
    return outline.lines[where.line][where.column :]
