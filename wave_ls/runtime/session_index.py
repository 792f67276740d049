"""Saved sessions at a glance: a summary per transcript, kept beside it, read incrementally.

Listing many sessions must not read whole transcripts. Each ``<id>.jsonl`` gets a small
sidecar ``<id>.summary.json`` that caches what the list shows (title, message count, the
header's cwd and creation time) together with how many bytes of the transcript it covers.
A summary whose byte count equals the file's size is current; a transcript that grew since
(a turn, a crash before the summary was saved) is read from that byte on only; anything else
(no sidecar, a shorter or rewritten file) is read once in full. The sidecar is a cache: it
can always be deleted, and a write that fails costs only speed.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
from dataclasses import asdict, dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from wave_ls.runtime.transcript import valid_session_id

log = logging.getLogger(__name__)

SUMMARY_VERSION = 1
SUMMARY_SUFFIX = ".summary.json"
TRANSCRIPT_SUFFIX = ".jsonl"
TITLE_LIMIT = 80
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
    version: int = SUMMARY_VERSION

    def to_json(self, *, live: bool) -> dict[str, Any]:
        """An item of ``wave/session/list``."""
        return {
            "sessionId": self.session_id,
            "cwd": self.cwd,
            "title": self.title,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
            "messageCount": self.message_count,
            "live": live,
        }


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


def summary_path(transcript: Path) -> Path:
    return transcript.with_name(transcript.name.removesuffix(TRANSCRIPT_SUFFIX) + SUMMARY_SUFFIX)


def read_summary(transcript: Path, stat: os.stat_result | None = None) -> SessionSummary | None:
    """The current summary of ``transcript`` (None when it has no readable header), reading
    only what the cached summary does not cover, and caching the result."""
    session_id = transcript.name.removesuffix(TRANSCRIPT_SUFFIX)
    try:
        stat = stat or transcript.stat()
        cached = _load(summary_path(transcript), session_id)
        with transcript.open("rb") as handle:
            summary = _advance(handle, cached, stat.st_size, session_id)
    except OSError as error:
        log.warning("cannot summarise %s: %s", transcript, error)
        return None
    if summary is None:
        return None
    summary.updated_at = stat.st_mtime_ns // 1_000_000
    if summary != cached:
        _save(summary_path(transcript), summary)
    return summary


def list_sessions(home: Path, cwd: Path | None = None) -> list[SessionSummary]:
    """Every saved session under ``home`` (only those of ``cwd`` when given), the most
    recently changed first."""
    folder = home / ".wave" / "sessions"
    wanted = os.path.realpath(cwd) if cwd is not None else None
    found: list[SessionSummary] = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    for entry in entries:
        if not entry.name.endswith(TRANSCRIPT_SUFFIX):
            continue
        if not valid_session_id(entry.name.removesuffix(TRANSCRIPT_SUFFIX)):
            continue
        try:
            stat = entry.stat()
        except OSError:
            continue
        summary = read_summary(Path(entry.path), stat)
        if summary is None:
            continue
        if wanted is not None and os.path.realpath(summary.cwd or "/") != wanted:
            continue
        found.append(summary)
    found.sort(key=lambda s: (s.updated_at, s.created_at), reverse=True)
    return found


# ---------------------------------------------------------------------- reading


def _advance(
    handle: Any, cached: SessionSummary | None, size: int, session_id: str
) -> SessionSummary | None:
    """``cached`` brought up to ``size`` bytes: from its end when the file only grew."""
    start = 0
    summary = None
    if cached is not None and 0 < cached.size <= size:
        handle.seek(cached.size - 1)
        if handle.read(1) == b"\n":  # still the same line boundary: the file only grew
            start, summary = cached.size, SessionSummary(**asdict(cached))
    if summary is not None and start == size:
        return summary
    handle.seek(start)
    data = handle.read(size - start)
    end = data.rfind(b"\n") + 1  # a torn last line is not counted until it is complete
    for line in data[:end].split(b"\n"):
        if not line.strip():
            continue
        summary = _observe(summary, line, session_id)
    if summary is not None:
        summary.size = start + end
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


# ---------------------------------------------------------------------- the sidecar


def _load(path: Path, session_id: str) -> SessionSummary | None:
    try:
        data = json.loads(path.read_bytes())
        summary = SessionSummary(**data)
    except FileNotFoundError:
        return None
    except (OSError, ValueError, TypeError) as error:
        log.debug("ignoring summary %s: %s", path, error)
        return None
    if summary.version != SUMMARY_VERSION or summary.session_id != session_id:
        return None
    return summary


def _save(path: Path, summary: SessionSummary) -> None:
    """Replace the sidecar atomically; a failure only costs the next listing some reading."""
    try:
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=".summary-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(asdict(summary), handle, ensure_ascii=False, separators=(",", ":"))
            os.replace(temp, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise
    except OSError as error:
        log.debug("cannot cache the summary %s: %s", path, error)
