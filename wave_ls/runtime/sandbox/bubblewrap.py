"""bubblewrap (``bwrap``): the command runs in a mount namespace where the whole file system
is bound read-only and only the allowed trees (and ``/dev``) are writable."""

from __future__ import annotations

import functools
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path


@functools.cache
def bwrap_path() -> str | None:
    """``bwrap`` when it is installed and can make namespaces here (checked once)."""
    found = shutil.which("bwrap")
    if found is None:
        return None
    try:
        probe = subprocess.run(
            [found, "--ro-bind", "/", "/", "--dev-bind", "/dev", "/dev", "true"],
            capture_output=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return found if probe.returncode == 0 else None


def bwrap_argv(bwrap: str, writable: Iterable[Path], argv: list[str]) -> list[str]:
    """``argv`` run by ``bwrap`` with writes allowed beneath ``writable`` only."""
    binds: list[str] = []
    for path in writable:
        if Path(path).exists():
            binds += ["--bind", str(path), str(path)]
    return [
        bwrap,
        "--ro-bind",
        "/",
        "/",
        "--dev-bind",
        "/dev",
        "/dev",
        *binds,
        "--die-with-parent",
        "--",
        *argv,
    ]
