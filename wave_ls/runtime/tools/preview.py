"""What a file change would look like: the unified diff shown in permission prompts."""

from __future__ import annotations

import difflib
from pathlib import Path

NO_NEWLINE = "\\ No newline at end of file\n"


def unified_diff(path: Path, before: str | None, after: str) -> str:
    """The unified diff (``---``/``+++`` headers, ``@@`` hunks) from ``before`` to ``after``.

    ``before`` is None for a file that does not exist yet (``--- /dev/null``). Lines are
    compared with their endings, so a change of line ending shows; a last line without a
    newline is marked as ``diff -u`` marks it.
    """
    old = [] if before is None else _lines(before)
    new = _lines(after)
    header_old = "/dev/null" if before is None else str(path)
    out = []
    for line in difflib.unified_diff(old, new, header_old, str(path), lineterm="\n"):
        if line.endswith("\n"):
            out.append(line)
        else:
            out.append(line + "\n" + NO_NEWLINE)
    return "".join(out)


def change_preview(path: Path, before: str | None, after: str) -> dict[str, str]:
    """The ``preview`` of a permission request: ``{path, diff}``."""
    return {"path": str(path), "diff": unified_diff(path, before, after)}


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)
