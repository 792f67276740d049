"""A task's output file: where it lives, appending to it, and reading its tail."""

from __future__ import annotations

from pathlib import Path

MAX_OUTPUT_CHARS = 30_000
# UTF-8 needs at most 4 bytes per character: this many bytes always hold ``max_chars``.
BYTES_PER_CHAR = 4


def default_output_dir(home: Path, session_id: str) -> Path:
    """``$HOME/.wave/tasks/<session_id>``."""
    return home / ".wave" / "tasks" / session_id


def append_text(path: Path, text: str) -> None:
    """Append ``text`` (a newline added when missing); a vanished folder is recreated."""
    if not text.endswith("\n"):
        text += "\n"
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as stream:
        stream.write(text)


def cap_tail(text: str, max_chars: int, full_output: Path | None = None) -> str:
    """``text`` if short enough, else its last ``max_chars`` characters after a marker line."""
    if len(text) <= max_chars:
        return text
    return _marker(len(text) - max_chars, "characters", full_output) + text[-max_chars:]


def read_tail(path: Path, max_chars: int = MAX_OUTPUT_CHARS) -> str:
    """The file's last ``max_chars`` characters, after a marker line when some were left out.

    Only the end of the file is read, so a gigabyte of server log costs what its tail costs.
    """
    try:
        with path.open("rb") as stream:
            size = stream.seek(0, 2)
            start = max(0, size - max_chars * BYTES_PER_CHAR)
            stream.seek(start)
            data = stream.read()
    except FileNotFoundError:
        return ""
    text = data.decode("utf-8", errors="replace")
    if start == 0 and len(text) <= max_chars:
        return text
    text = text[-max_chars:]
    omitted = max(1, size - len(text.encode("utf-8")))  # approximate around broken bytes
    return _marker(omitted, "bytes", path) + text


def _marker(omitted: int, unit: str, full_output: Path | None) -> str:
    where = f"; the full output is in {full_output}" if full_output else ""
    return f"[... {omitted:,} earlier {unit} omitted{where}]\n"
