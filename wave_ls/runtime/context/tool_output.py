"""A single tool output too large for the window is cut before the model sees it.

The model gets the start and the end of the output with a note in between saying how much
was cut and where the whole output is (a file it can read in parts); the file is written
only for outputs that were cut.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path

from wave_ls.runtime.context.tokens import CHARS_PER_TOKEN

log = logging.getLogger(__name__)

# The largest share of the window one tool output may take.
MAX_OUTPUT_SHARE = 0.2
HEAD_SHARE = 0.7  # of what is kept, the part from the start (the rest is the end)
MIN_KEPT_CHARS = 2_000


def output_limit_chars(window_tokens: int, ratio: float = 1.0) -> int:
    """The most characters one tool output may have for a window of ``window_tokens``."""
    return max(MIN_KEPT_CHARS, int(window_tokens * MAX_OUTPUT_SHARE * CHARS_PER_TOKEN / ratio))


def cut_output(
    content: str, limit_chars: int, window_tokens: int, keep_at: Path | None
) -> str | None:
    """``content`` cut to about ``limit_chars`` with a note, or None when it fits. The whole
    output is written to ``keep_at`` (when given) for the model to read in parts."""
    if len(content) <= limit_chars:
        return None
    kept_path = _keep(content, keep_at)
    head = int(limit_chars * HEAD_SHARE)
    tail = limit_chars - head
    cut = len(content) - head - tail
    where = (
        f"The whole output is in {kept_path}: read it in parts (Read with offset and limit) "
        "or search it (Grep) for what you need."
        if kept_path is not None
        else "Run the tool again on a smaller part (a range of lines, a narrower search)."
    )
    note = (
        f"\n\n[... {cut:,} characters cut here: this output has {len(content):,} characters "
        f"(about {int(len(content) / CHARS_PER_TOKEN):,} tokens), more than "
        f"{MAX_OUTPUT_SHARE:.0%} of the model's context window ({window_tokens:,} tokens). "
        f"{where}]\n\n"
    )
    return content[:head] + note + content[len(content) - tail :]


def _keep(content: str, path: Path | None) -> Path | None:
    if path is None:
        return None
    try:
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8", errors="surrogateescape") as file:
            file.write(content)
    except OSError as error:
        log.warning("cannot keep a cut tool output in %s: %s", path, error)
        return None
    return path
