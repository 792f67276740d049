r"""Markdown files with a ``---`` frontmatter: agent files, skills, memory rules.

The one splitter for all of them, with one set of rules: a BOM is ignored, ``\r\n`` and
``\r`` end lines like ``\n``, blank lines may come before the opening ``---``, and the
frontmatter ends at the next line that is ``---`` (or YAML's ``...``). What the YAML says is
each caller's business. A longer run of dashes (``-----``) also closes it, as in Claude Code:
in YAML such a line could only be an error, and files written for Claude Code use it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DELIMITER = "---"
CLOSERS = (DELIMITER, "...")
NO_FRONTMATTER = "start the file with a '---' line"
_LINE_BREAK = re.compile(r"\r\n|\r|\n")
_BLANK = "\ufeff \t"
_DASH_RUN = re.compile(r"-{3,}")


class FrontmatterError(Exception):
    """The text has no usable frontmatter; ``line`` is 1-based in the file (None: the file
    as a whole), ``code`` names the kind of problem for an editor's quick fix."""

    def __init__(self, line: int | None, message: str, code: str | None = None) -> None:
        super().__init__(message)
        self.line = line
        self.message = message
        self.code = code


@dataclass(frozen=True)
class Frontmatter:
    """The YAML text between the delimiters, where it starts, and the body after them."""

    yaml_text: str
    first_line: int  # 1-based file line of the first YAML line
    open_line: int  # 1-based file line of the opening '---'
    body: str
    closer: str = DELIMITER  # the closing line as written (stripped)


def split_lines(text: str) -> list[str]:
    r"""The lines of ``text`` as editors count them (``\n``, ``\r\n`` and ``\r`` end a line;
    a BOM stays, so that columns are the editor's)."""
    return _LINE_BREAK.split(text)


def find_delimiters(lines: list[str]) -> tuple[int | None, int | None]:
    """The 0-based lines of the opening and the closing delimiter: ``(None, None)`` without
    a frontmatter, ``(open, None)`` when it is not closed."""
    start = next((i for i, line in enumerate(lines) if line.strip(_BLANK)), None)
    if start is None or lines[start].lstrip("\ufeff").rstrip() != DELIMITER:
        return None, None
    for end in range(start + 1, len(lines)):
        closer = lines[end].rstrip()
        if closer in CLOSERS or _DASH_RUN.fullmatch(closer):
            return start, end
    return start, None


def split_frontmatter(text: str, how_to_start: str = NO_FRONTMATTER) -> Frontmatter:
    """The frontmatter at the top of ``text``; ``FrontmatterError`` when the text is empty,
    has none (``how_to_start`` says what to write) or does not close it."""
    lines = split_lines(text)
    if not any(line.strip(_BLANK) for line in lines):
        raise FrontmatterError(None, f"the file is empty; {how_to_start}")
    start, end = find_delimiters(lines)
    if start is None:
        first = next(i for i, line in enumerate(lines) if line.strip(_BLANK))
        raise FrontmatterError(first + 1, f"no frontmatter: {how_to_start}")
    if end is None:
        raise FrontmatterError(
            start + 1, "the frontmatter is not closed: add a '---' line after the last key"
        )
    return Frontmatter(
        yaml_text="\n".join(lines[start + 1 : end]) + "\n",
        first_line=start + 2,
        open_line=start + 1,
        body="\n".join(lines[end + 1 :]).strip(),
        closer=lines[end].rstrip(),
    )


def optional_frontmatter(text: str) -> tuple[str | None, str]:
    """``(yaml_text, body)`` of a file whose frontmatter is optional: ``(None, text)``
    without one. ``FrontmatterError`` when one is opened and not closed."""
    start, _end = find_delimiters(split_lines(text))
    if start is None:
        return None, text.removeprefix("\ufeff").strip()
    front = split_frontmatter(text)
    return front.yaml_text, front.body
