"""bubblewrap (``bwrap``): the command runs in a mount namespace where the whole file system
is bound read-only and only the allowed trees (and ``/dev``) are writable; without network,
in a network namespace of its own as well."""

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
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return found if probe.returncode == 0 else None


@functools.cache
def bwrap_offline_path() -> str | None:
    """``bwrap`` when it can also make a network namespace here (checked once)."""
    found = bwrap_path()
    if found is None:
        return None
    try:
        probe = subprocess.run(
            [found, "--ro-bind", "/", "/", "--dev-bind", "/dev", "/dev", "--unshare-net", "true"],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=10,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return found if probe.returncode == 0 else None


def bwrap_argv(
    bwrap: str, writable: Iterable[Path] | None, argv: list[str], *, network: bool = True
) -> list[str]:
    """``argv`` run by ``bwrap`` with writes allowed beneath ``writable`` only (everywhere
    for None); ``network=False`` gives it a network namespace of its own (a loopback
    interface and nothing else: no route out, not even to the host's 127.0.0.1)."""
    binds: list[str] = []
    for path in writable or ():
        if Path(path).exists():
            binds += ["--bind", str(path), str(path)]
    root = "--ro-bind" if writable is not None else "--bind"
    return [
        bwrap,
        root,
        "/",
        "/",
        "--dev-bind",
        "/dev",
        "/dev",
        *binds,
        *([] if network else ["--unshare-net"]),
        "--die-with-parent",
        "--",
        *argv,
    ]
