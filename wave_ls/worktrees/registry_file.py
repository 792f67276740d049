"""Who made each wave worktree, and from which base: one small JSON file per worktree.

``<project>/.wave/worktrees/.registry/<name>.json`` (``<project>`` is the main repository,
or the project folder when a hook made the worktree outside git). One file per worktree, so
parallel subagents and several server processes never write the same file; each write is
atomic (temp file, fsync, rename), so a crash leaves the old record or the new one, never
half of one. A new worktree's record is written by a background thread
(``write_record_soon``), off the path of the agent's launch; every reader and ``delete_record``
here first waits for the pending writes, so nobody ever sees a record missing that was
asked for. The folder lies under ``.wave/worktrees/``, which ``info/exclude`` hides from
``git status``; a name never starts with ``.``, so it cannot collide with a worktree.

Each record carries a seal (``runtime/record_seal.py``, keyed by ``~/.wave/record.key``): a
record without a valid one (committed in a repository, written by a model, or by a wave-ls
before the seals) is not wave-ls's and is read as absent, so it never makes a Remove click
run a ``WorktreeRemove`` hook on a path it names.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import suppress
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from wave_ls.runtime import record_seal
from wave_ls.runtime.regular_files import read_if_regular
from wave_ls.runtime.trust import record_purpose

log = logging.getLogger(__name__)

REGISTRY_DIR = Path(".wave") / "worktrees" / ".registry"
VERSION = 1
MAX_RECORD_BYTES = 1024 * 1024


@dataclass
class WorktreeRecord:
    """One worktree as wave made (or first reused) it."""

    name: str
    path: str
    branch: str
    base_commit: str | None
    base_ref: str
    owner: str
    created_at: str
    hook_created: bool = False

    def to_json(self) -> dict[str, Any]:
        return {
            "version": VERSION,
            "name": self.name,
            "path": self.path,
            "branch": self.branch,
            "baseCommit": self.base_commit,
            "baseRef": self.base_ref,
            "owner": self.owner,
            "createdAt": self.created_at,
            "hookCreated": self.hook_created,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> WorktreeRecord:
        return cls(
            name=str(data["name"]),
            path=str(data["path"]),
            branch=str(data.get("branch") or ""),
            base_commit=data.get("baseCommit") or None,
            base_ref=str(data.get("baseRef") or ""),
            owner=str(data.get("owner") or ""),
            created_at=str(data.get("createdAt") or ""),
            hook_created=bool(data.get("hookCreated", False)),
        )


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def record_path(project: Path, name: str) -> Path:
    return project / REGISTRY_DIR / f"{name}.json"


def write_record(project: Path, record: WorktreeRecord) -> None:
    """Write ``record`` atomically; a failure is logged, never raised (it is bookkeeping)."""
    sealed = _sealed(record)
    if sealed is not None:
        _write(project, record.name, sealed)


def _sealed(record: WorktreeRecord) -> dict[str, Any] | None:
    try:
        return record_seal.seal(record.to_json(), Path.home(), record_purpose(record.name))
    except OSError as error:
        log.warning("cannot record worktree %s: no sealing key (%s)", record.name, error)
        return None


def _write(project: Path, name: str, sealed: dict[str, Any]) -> None:
    target = record_path(project, name)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=target.parent, prefix=f".{name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(sealed, handle, indent=2)
                handle.write("\n")
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp, target)
        except BaseException:
            with suppress(OSError):
                os.unlink(temp)
            raise
        _fsync_dir(target.parent)
    except OSError as error:
        log.warning("cannot record worktree %s in %s: %s", name, target, error)


_pending_lock = threading.Lock()
_pending: dict[Path, Future[None]] = {}
_writer: ThreadPoolExecutor | None = None


def write_record_soon(project: Path, record: WorktreeRecord) -> None:
    """``write_record`` in a background thread (one for all, so writes keep their order).

    The interpreter waits for it at exit; ``settle`` waits for it sooner.
    """
    global _writer
    target = record_path(project, record.name)
    sealed = _sealed(record)  # here: the thread's write stays as quick as it was unsealed
    if sealed is None:
        return
    with _pending_lock:
        if _writer is None:
            _writer = ThreadPoolExecutor(1, thread_name_prefix="wave-worktree-registry")
        future = _writer.submit(_write, project, record.name, sealed)
        _pending[target] = future
    future.add_done_callback(lambda done: _forget(target, done))


def _forget(target: Path, done: Future[None]) -> None:
    with _pending_lock:
        if _pending.get(target) is done:
            del _pending[target]


def settle(target: Path | None = None) -> None:
    """Wait until the pending record writes (only that of ``target`` when given) are done."""
    with _pending_lock:
        if target is None:
            waiting = list(_pending.values())
        else:
            waiting = [future for path, future in _pending.items() if path == target]
    for future in waiting:
        future.exception()  # waits; write_record logs its own failures


def _fsync_dir(directory: Path) -> None:
    with suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def read_record(project: Path, name: str) -> WorktreeRecord | None:
    """The record of ``name``, or None when absent or unreadable (logged)."""
    path = record_path(project, name)
    settle(path)
    return _read(path)


def _read(path: Path) -> WorktreeRecord | None:
    if not os.path.lexists(path):
        return None
    raw = read_if_regular(path, MAX_RECORD_BYTES)  # a FIFO planted here must not hang us
    if raw is None:
        log.warning("ignoring worktree record %s: not a regular file of a sane size", path)
        return None
    try:
        data = json.loads(raw)
        if not isinstance(data, dict):
            raise TypeError("not a JSON object")
        if not record_seal.is_sealed(data, Path.home(), record_purpose(path.stem)):
            log.warning("ignoring worktree record %s: not written by wave-ls (no valid seal)", path)
            return None
        return WorktreeRecord.from_json(data)
    except (OSError, ValueError, KeyError, TypeError) as error:
        log.warning("ignoring unreadable worktree record %s: %s", path, error)
        return None


def read_records(project: Path) -> list[WorktreeRecord]:
    """Every readable record of ``project``, sorted by name."""
    settle()
    folder = project / REGISTRY_DIR
    if not folder.is_dir():
        return []
    records = [_read(path) for path in sorted(folder.glob("*.json"))]
    return [r for r in records if r is not None]


def delete_record(project: Path, name: str) -> None:
    """Delete the record of ``name`` (after its pending write, which would bring it back)."""
    path = record_path(project, name)
    settle(path)
    with suppress(OSError):
        path.unlink()
