"""A seal (HMAC-SHA256) on the JSON records wave-ls writes into project folders.

A record in ``<project>/.wave/worktrees/.registry/`` tells wave-ls that a hook made a
worktree, and so that a Remove click runs the ``WorktreeRemove`` hooks on its path. A
repository can commit such a file, and a model can write one: only a record carrying the seal
made with the user's key (``~/.wave/record.key``, 32 random bytes, mode 0600, made at the
first write) is taken as wave-ls's own.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
import stat
import threading
from pathlib import Path
from typing import Any

KEY_FILE = Path(".wave") / "record.key"
FIELD = "hmac"
KEY_BYTES = 32
_LOCK = threading.Lock()


def _read_key(path: Path) -> bytes | None:
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size != KEY_BYTES:
            return None
        if info.st_uid != os.getuid() or info.st_mode & 0o077:
            return None  # a key others can read or write seals nothing
        key = os.read(fd, KEY_BYTES)
        return key if len(key) == KEY_BYTES else None
    finally:
        os.close(fd)


def key(home: Path, *, create: bool) -> bytes | None:
    """The user's sealing key; made (0600) when ``create`` and there is none usable."""
    path = home / KEY_FILE
    with _LOCK:
        found = _read_key(path)
        if found is not None or not create:
            return found
        path.parent.mkdir(parents=True, exist_ok=True)
        fresh = secrets.token_bytes(KEY_BYTES)
        temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, fresh)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(temporary, path)
        return fresh


def _digest(secret: bytes, purpose: str, data: dict[str, Any]) -> str:
    body = {k: v for k, v in data.items() if k != FIELD}
    text = json.dumps([purpose, body], sort_keys=True, separators=(",", ":"))
    return hmac.new(secret, text.encode("utf-8"), hashlib.sha256).hexdigest()


def seal(data: dict[str, Any], home: Path, purpose: str) -> dict[str, Any]:
    """``data`` with its seal; ``purpose`` (such as the record's file path) binds the seal
    to one place, so a record copied elsewhere is not sealed there."""
    secret = key(home, create=True)
    assert secret is not None
    return {**data, FIELD: _digest(secret, purpose, data)}


def is_sealed(data: dict[str, Any], home: Path, purpose: str) -> bool:
    """Whether ``data`` carries a valid seal for ``purpose`` made with the user's key."""
    given = data.get(FIELD)
    if not isinstance(given, str):
        return False
    secret = key(home, create=False)
    if secret is None:
        return False
    return hmac.compare_digest(given, _digest(secret, purpose, data))
