"""Session transcripts: one JSON Lines file per session, written as the conversation goes.

``$HOME/.wave/sessions/<sessionId>.jsonl``: the first line is a header
``{"type": "session", "version": 1, "sessionId", "cwd", "model", "createdAt", ...}``, then one
``{"type": "message", "message": <Message.to_json()>}`` line per message, and a
``{"type": "config", "permissionMode"?, "model"?}`` line whenever the session is
reconfigured. Each line is written and flushed on its own, so a killed process loses at most
the line in flight (``load_transcript`` skips such a torn line, with a warning, and keeps the
rest); the fsync that makes lines survive a machine crash runs on a background thread, off
the event loop every session shares.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import stat
import threading
from collections.abc import Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, BinaryIO, cast

from wave_ls.runtime.core import PERMISSION_MODES, Message, PermissionMode
from wave_ls.runtime.regular_files import FileTooLarge, NotRegularFile, read_regular
from wave_ls.runtime.text import json_dumps

log = logging.getLogger(__name__)

TRANSCRIPT_VERSION = 1
# One thread fsyncs every transcript of the process, so no fsync blocks the event loop.
_SYNC = ThreadPoolExecutor(max_workers=1, thread_name_prefix="transcript-fsync")
_SESSION_ID = re.compile(r"[A-Za-z0-9_-]{1,64}")
# Resuming a session reads its transcript whole; a bigger one is reported, not loaded (no
# model's context holds that much: a real transcript stays far below).
MAX_TRANSCRIPT_BYTES = 128 * 1024 * 1024
MIB = 1024 * 1024


class UnreadableTranscript(ValueError):
    """A transcript that is not loaded: not a regular file (a FIFO, a device), or over
    ``MAX_TRANSCRIPT_BYTES``; the message says which."""


class InvalidSessionId(ValueError):
    """A session id that could escape the sessions folder or is not one of ours."""


def valid_session_id(session_id: object) -> bool:
    """True if ``session_id`` is 1-64 of ``A-Z a-z 0-9 _ -`` (so it cannot leave the folder)."""
    return isinstance(session_id, str) and _SESSION_ID.fullmatch(session_id) is not None


def validate_session_id(session_id: str) -> str:
    """``session_id`` itself, if it is 1-64 of ``A-Z a-z 0-9 _ -``; else InvalidSessionId."""
    if not valid_session_id(session_id):
        raise InvalidSessionId(
            f"invalid session id {session_id!r}: use 1-64 letters, digits, '_' or '-'"
        )
    return session_id


def transcript_path(home: Path, session_id: str) -> Path:
    """Where the session's transcript lives: ``<home>/.wave/sessions/<id>.jsonl``."""
    return home / ".wave" / "sessions" / f"{validate_session_id(session_id)}.jsonl"


class TranscriptWriter:
    """Appends one session's lines durably. Safe to share between threads.

    The file is opened on the first write. Appending to an existing transcript (a resumed
    session) first ends a torn last line, so that the new lines stay readable.
    """

    def __init__(self, path: Path, *, fsync: bool = True) -> None:
        self.path = path
        self.fsync = fsync
        self._file: BinaryIO | None = None
        self._lock = threading.Lock()
        self._sync_pending = False

    def write_header(self, session_id: str, cwd: Path | str, model: str, **extra: Any) -> bool:
        """Write the header line if the transcript is new; False if it already has lines.

        ``extra`` keys are added in the protocol's camelCase (``permission_mode`` becomes
        ``permissionMode``).
        """
        validate_session_id(session_id)
        header = {
            "type": "session",
            "version": TRANSCRIPT_VERSION,
            "sessionId": session_id,
            "cwd": str(cwd),
            "model": model,
            "createdAt": datetime.now(UTC).isoformat(timespec="milliseconds"),
            **{_camel(key): value for key, value in extra.items()},
        }
        with self._lock:
            handle = self._open()
            if handle.tell() > 0:
                return False
            self._write(handle, header)
            return True

    def append(self, message: Message) -> None:
        """Append one message; a killed process keeps it once this returns (a machine crash
        once the background fsync ran, unless ``fsync=False``)."""
        self.write_record({"type": "message", "message": message.to_json()})

    def write_record(self, record: dict[str, Any]) -> None:
        """Append one record (``{"type": ..., ...}``)."""
        with self._lock:
            self._write(self._open(), record)

    def flush(self) -> None:
        """Wait until every line written so far is on disk (fsync), e.g. before a report."""
        with self._lock:
            if self._file is not None:
                os.fsync(self._file.fileno())

    def close(self) -> None:
        """Sync and close the file (a later write opens it again)."""
        with self._lock:
            if self._file is not None:
                if self.fsync:
                    with contextlib.suppress(OSError):
                        os.fsync(self._file.fileno())
                self._file.close()
                self._file = None

    def __enter__(self) -> TranscriptWriter:
        return self

    def __exit__(self, *_exc: object) -> None:
        self.close()

    def _open(self) -> BinaryIO:
        if self._file is not None:
            return self._file
        created = not self.path.parent.exists()
        # Transcripts hold code and prompts: readable by their owner only.
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_NONBLOCK, 0o600)
        if not stat.S_ISREG(os.fstat(fd).st_mode):  # a FIFO would take lines until it is full
            os.close(fd)
            raise UnreadableTranscript(f"{self.path} is not a regular file; nothing is written")
        os.set_blocking(fd, True)
        handle = os.fdopen(fd, "r+b")
        handle.seek(0, os.SEEK_END)
        if handle.tell() > 0:
            handle.seek(-1, os.SEEK_END)
            if handle.read(1) != b"\n":
                log.warning("transcript %s ended in a torn line; appending after it", self.path)
                handle.write(b"\n")
                handle.flush()
        elif created and self.fsync:
            _fsync_dir(self.path.parent)
        self._file = handle
        return handle

    def _write(self, handle: BinaryIO, record: dict[str, Any]) -> None:
        # json_dumps: text UTF-8 cannot hold (a file name that is not UTF-8) is escaped.
        line = json_dumps(record, separators=(",", ":")) + "\n"
        handle.write(line.encode("utf-8"))
        handle.flush()
        if self.fsync and not self._sync_pending:
            self._sync_pending = True
            _SYNC.submit(self._sync)

    def _sync(self) -> None:
        """fsync what was written (on the fsync thread); one call covers every line before."""
        with self._lock:
            self._sync_pending = False
            if self._file is None:
                return  # close() synced already
            fd = os.dup(self._file.fileno())
        try:
            os.fsync(fd)
        except OSError as error:
            log.warning("cannot fsync %s: %s", self.path, error)
        finally:
            os.close(fd)


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return  # not possible on every platform; the file's own fsync still holds
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def load_transcript(path: Path) -> tuple[dict[str, Any], list[Message]]:
    """The header (``{}`` if it is missing or torn; with the last ``config`` record's values)
    and the messages of a transcript.

    A line that is not valid JSON or not a valid record is skipped with a warning; lines of
    unknown ``type`` are ignored (written by a newer version). Raises
    ``UnreadableTranscript`` for a file that is not regular or is over
    ``MAX_TRANSCRIPT_BYTES`` (never read), else only when the file cannot be read at all
    (``FileNotFoundError``, ``PermissionError``).
    """
    header: dict[str, Any] = {}
    messages: list[Message] = []
    try:
        data = read_regular(path, MAX_TRANSCRIPT_BYTES)
    except FileTooLarge as error:
        raise UnreadableTranscript(
            f"the transcript {path} is {error.size / MIB:,.0f} MiB; wave-ls loads at most "
            f"{MAX_TRANSCRIPT_BYTES // MIB} MiB of a transcript, so it was not loaded"
        ) from None
    except NotRegularFile:
        raise UnreadableTranscript(f"{path} is not a regular file; it was not read") from None
    # Split on "\n" only: str.splitlines() would also split on U+2028 and friends, which
    # json.dumps(ensure_ascii=False) leaves raw inside strings.
    lines = data.decode("utf-8", errors="replace").split("\n")
    last = max((i for i, line in enumerate(lines) if line.strip()), default=-1)
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            kind = record.get("type") if isinstance(record, dict) else None
            if kind == "session" and not header and not messages:
                header = record
            elif kind == "config":
                header.update(
                    (key, value)
                    for key, value in record.items()
                    if key in ("permissionMode", "model") and isinstance(value, str)
                )
            elif kind == "message":
                messages.append(Message.from_json(record["message"]))
            elif kind is None:
                raise ValueError("not a transcript record")
        except (ValueError, KeyError, TypeError, AttributeError) as error:
            where = "torn last line" if number - 1 == last else "corrupt line"
            log.warning("transcript %s: %s %d skipped (%s)", path, where, number, error)
    return header, messages


@dataclass(frozen=True)
class SavedHeader:
    """A transcript's header as a resume reads it, with the last ``config`` record's values.

    ``model`` and ``permission_mode`` are None when missing or not usable (a mode that is
    not one of the four); ``model`` may be the placeholder a session saved while no model
    was configured (``runtime.settings.session_model`` passes over it).
    """

    session_id: str
    cwd: str  # as written; "" when missing
    model: str | None
    permission_mode: PermissionMode | None

    @classmethod
    def from_record(cls, record: Mapping[str, Any], session_id: str) -> SavedHeader:
        """The header of ``load_transcript``'s first value (``{}`` for a missing header)."""
        model = record.get("model")
        mode = record.get("permissionMode")
        cwd = record.get("cwd")
        return cls(
            session_id=session_id,
            cwd=cwd if isinstance(cwd, str) else "",
            model=model if isinstance(model, str) and model else None,
            permission_mode=cast(PermissionMode, mode) if mode in PERMISSION_MODES else None,
        )


@dataclass(frozen=True)
class SavedSession:
    """A saved session: its header and its messages."""

    header: SavedHeader
    messages: list[Message]


def read_saved(home: Path, session_id: str) -> SavedSession | None:
    """The saved session ``session_id`` of ``home``, or None when it has no transcript.

    ``UnreadableTranscript`` for a transcript that is not loaded (``load_transcript``);
    ``InvalidSessionId`` for an id that is not one of ours.
    """
    path = transcript_path(home, session_id)
    if not path.exists():
        return None
    record, messages = load_transcript(path)
    return SavedSession(SavedHeader.from_record(record, session_id), messages)
