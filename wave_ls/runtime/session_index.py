"""Saved sessions at a glance: one summary per transcript, cached in one index, read
incrementally.

Listing many sessions must not read whole transcripts. ``<home>/.wave/sessions/index.json``
caches, per session, what the list shows (title, message count, the header's cwd and
creation time) with how many bytes of the transcript that covers and the transcript's
mtime. A listing reads the index once and stats every transcript: an entry whose size and
mtime still match is current; a transcript that grew since (a turn, a crash before the
index was saved) is read from the covered byte on only; anything else (no entry, a shorter
or rewritten file) is read once in full. The index is only a cache: deleting it, or losing
a write to another process, costs only speed.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
import threading
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from wave_ls.runtime.regular_files import CHUNK, open_regular, read_regular
from wave_ls.runtime.transcript import MAX_TRANSCRIPT_BYTES, valid_session_id

log = logging.getLogger(__name__)

SUMMARY_VERSION = 1
INDEX_NAME = "index.json"
TRANSCRIPT_SUFFIX = ".jsonl"
TITLE_LIMIT = 80
MAX_INDEX_BYTES = 64 * 1024 * 1024  # ~200,000 sessions
# What our writer puts first on each line (compact JSON, "type" first); other spellings are
# parsed.
_MESSAGE_PREFIX = b'{"type":"message"'
_OTHER_PREFIXES = (b'{"type":"session"', b'{"type":"config"')


@dataclass
class SessionSummary:
    """What a session list shows of one saved session."""

    session_id: str
    cwd: str
    title: str
    created_at: int  # epoch ms
    updated_at: int  # epoch ms: the transcript's last change
    message_count: int
    size: int  # bytes of the transcript this summary covers (complete lines only)
    # Over MAX_TRANSCRIPT_BYTES: only that much was read, and it cannot be resumed.
    too_large: bool = False

    def to_json(self, *, live: bool) -> dict[str, Any]:
        """An item of ``wave/session/list``."""
        item: dict[str, Any] = {
            "sessionId": self.session_id,
            "cwd": self.cwd,
            "title": self.title,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
            "messageCount": self.message_count,
            "live": live,
        }
        if self.too_large:
            item["tooLarge"] = True
        return item


def title_of(message: dict[str, Any]) -> str | None:
    """The list title a message gives its session: a user's own message (no reminder, no
    task notice), verbatim with tags, on one line, at most ``TITLE_LIMIT`` characters."""
    if message.get("role") != "user":
        return None
    meta = message.get("meta") or {}
    if isinstance(meta, dict) and (meta.get("reminder") or meta.get("isMeta")):
        return None
    content = message.get("content")
    if not isinstance(content, str):
        return None
    line = " ".join(content.split())
    return line if len(line) <= TITLE_LIMIT else line[: TITLE_LIMIT - 1] + "…"


def read_summary(transcript: Path) -> SessionSummary | None:
    """The current summary of one transcript (None when it has no readable header), read
    incrementally and saved to the index (what a session does when a turn ends)."""
    with _lock:
        index = _load_index(transcript.parent)
        summary = _current(transcript, index.get(transcript.name.removesuffix(TRANSCRIPT_SUFFIX)))
        if summary is not None and index.get(summary.session_id) != summary:
            index[summary.session_id] = summary
            _save_index(transcript.parent, index)
    return summary


def list_sessions(home: Path, cwd: Path | None = None) -> list[SessionSummary]:
    """Every saved session under ``home`` (only those of ``cwd`` when given), the most
    recently changed first."""
    folder = home / ".wave" / "sessions"
    wanted = os.path.realpath(cwd) if cwd is not None else None
    try:
        # is_file: a FIFO (whose opening would wait for a writer) or a device is skipped
        entries = [
            e for e in os.scandir(folder) if e.name.endswith(TRANSCRIPT_SUFFIX) and e.is_file()
        ]
    except OSError:
        return []
    with _lock:
        index = _load_index(folder)
        current: dict[str, SessionSummary] = {}
        for entry in entries:
            session_id = entry.name.removesuffix(TRANSCRIPT_SUFFIX)
            if not valid_session_id(session_id):
                continue
            summary = _current(Path(entry.path), index.get(session_id))
            if summary is not None:
                current[session_id] = summary
        if current != index:
            _save_index(folder, current)
    found = [
        s for s in current.values() if wanted is None or os.path.realpath(s.cwd or "/") == wanted
    ]
    found.sort(key=lambda s: (s.updated_at, s.created_at), reverse=True)
    return found


def _current(transcript: Path, cached: SessionSummary | None) -> SessionSummary | None:
    """``cached`` if it still describes ``transcript``, else brought up to date."""
    try:
        stat = transcript.stat()
        updated = stat.st_mtime_ns // 1_000_000
        if (
            cached is not None
            and (cached.size == stat.st_size or cached.too_large)
            and cached.updated_at == updated
        ):
            return cached  # the common case: only the stat
        fd, stat = open_regular(transcript)  # never a FIFO swapped in since
        with os.fdopen(fd, "rb") as handle:
            summary = _advance(
                handle, cached, stat.st_size, transcript.name.removesuffix(TRANSCRIPT_SUFFIX)
            )
    except OSError as error:
        log.warning("cannot summarise %s: %s", transcript, error)
        return None
    if summary is not None:
        summary.updated_at = updated
    return summary


# ---------------------------------------------------------------------- reading


def _advance(
    handle: Any, cached: SessionSummary | None, size: int, session_id: str
) -> SessionSummary | None:
    """``cached`` brought up to ``size`` bytes: from its end when the file only grew. No
    more than ``MAX_TRANSCRIPT_BYTES`` of a transcript is read, a chunk at a time."""
    start = 0
    summary = None
    if cached is not None and 0 < cached.size <= size:
        handle.seek(cached.size - 1)
        if handle.read(1) == b"\n":  # still the same line boundary: the file only grew
            start, summary = cached.size, SessionSummary(**asdict(cached))
    if summary is not None and start == size:
        return summary
    stop = min(size, MAX_TRANSCRIPT_BYTES)
    handle.seek(start)
    done, rest = start, bytearray()  # the complete lines read so far end at ``done``
    while done + len(rest) < stop:
        chunk = handle.read(min(CHUNK, stop - done - len(rest)))
        if not chunk:
            break
        searched = len(rest)
        rest += chunk
        # A torn last line is not counted until it is complete.
        end = rest.rfind(b"\n", searched) + 1
        if not end:
            continue
        for line in bytes(rest[:end]).split(b"\n"):
            if line.strip():
                summary = _observe(summary, line, session_id)
        del rest[:end]
        done += end
    if summary is not None:
        summary.size = done
        summary.too_large = size > MAX_TRANSCRIPT_BYTES
    return summary


def _observe(summary: SessionSummary | None, line: bytes, session_id: str) -> SessionSummary | None:
    if summary is not None and line.startswith(_MESSAGE_PREFIX) and summary.title:
        summary.message_count += 1  # the common case: counted without parsing
        return summary
    if summary is not None and line.startswith(_OTHER_PREFIXES):
        return summary
    try:
        record = json.loads(line)
    except ValueError:
        return summary  # a corrupt line: load_transcript skips it too
    if not isinstance(record, dict):
        return summary
    kind = record.get("type")
    if kind == "session" and summary is None:
        return SessionSummary(
            session_id=session_id,
            cwd=str(record.get("cwd") or ""),
            title="",
            created_at=_epoch_ms(record.get("createdAt")),
            updated_at=0,
            message_count=0,
            size=0,
        )
    if kind == "message" and summary is not None and isinstance(record.get("message"), dict):
        summary.message_count += 1
        if not summary.title:
            summary.title = title_of(record["message"]) or ""
    return summary


def _epoch_ms(value: Any) -> int:
    try:
        return int(datetime.fromisoformat(str(value)).timestamp() * 1000)
    except ValueError:
        return 0


# ---------------------------------------------------------------------- the index

_lock = threading.Lock()  # one reader-writer of the index at a time in this process


def _load_index(folder: Path) -> dict[str, SessionSummary]:
    try:
        data = json.loads(read_regular(folder / INDEX_NAME, MAX_INDEX_BYTES))
        if data.get("version") != SUMMARY_VERSION:
            return {}
        return {s["session_id"]: SessionSummary(**s) for s in data["sessions"]}
    except FileNotFoundError:
        return {}
    except (OSError, ValueError, TypeError, KeyError, AttributeError) as error:
        log.debug("ignoring the session index in %s: %s", folder, error)
        return {}


def _save_index(folder: Path, index: dict[str, SessionSummary]) -> None:
    """Replace the index atomically; a failure only costs the next listing some reading."""
    data = {"version": SUMMARY_VERSION, "sessions": [asdict(s) for s in index.values()]}
    try:
        fd, temp = tempfile.mkstemp(dir=folder, prefix=".index-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(json.dumps(data, ensure_ascii=False, separators=(",", ":")))
            os.replace(temp, folder / INDEX_NAME)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise
    except OSError as error:
        log.debug("cannot save the session index in %s: %s", folder, error)
