"""Whether a process still runs, for tests that kill process groups."""

from __future__ import annotations

from pathlib import Path


def alive(pid: int) -> bool:
    """Running (zombies count as gone: PID 1 here may never reap orphans)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):  # gone before or while it was read
        return False
    return stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X")
