"""Saved-session summaries (``runtime/session_index.py``): correct, incremental, and never
worse than reading the transcript when the cache is missing or stale."""

from __future__ import annotations

import json
import os
from pathlib import Path

from wave_ls.runtime.core import Message
from wave_ls.runtime.session_index import INDEX_NAME, list_sessions, read_summary, title_of
from wave_ls.runtime.transcript import TranscriptWriter, load_transcript, transcript_path


def write(home: Path, session_id: str, cwd: str, *messages: Message) -> Path:
    path = transcript_path(home, session_id)
    with TranscriptWriter(path, fsync=False) as writer:
        writer.write_header(session_id, cwd, "m")
        for message in messages:
            writer.append(message)
    return path


def test_title_is_the_first_own_user_message_on_one_line() -> None:
    assert title_of({"role": "user", "content": "fix\n  the [@agent:x]  tests"}) == (
        "fix the [@agent:x] tests"
    )
    assert title_of({"role": "user", "content": "r", "meta": {"reminder": "agent"}}) is None
    assert title_of({"role": "user", "content": "n", "meta": {"isMeta": True}}) is None
    assert title_of({"role": "assistant", "content": "a"}) is None
    long = title_of({"role": "user", "content": "y" * 200})
    assert long is not None and len(long) == 80 and long.endswith("…")


def test_summary_counts_messages_and_caches_what_it_read(home: Path) -> None:
    path = write(
        home,
        "s1",
        "/p",
        Message("user", "<memory>", meta={"isMeta": True}),
        Message("user", "hello there"),
        Message("assistant", "hi"),
    )
    summary = read_summary(path)
    assert summary is not None
    assert (summary.title, summary.message_count, summary.cwd) == ("hello there", 3, "/p")
    assert summary.size == path.stat().st_size
    index = path.parent / INDEX_NAME
    assert json.loads(index.read_text())["sessions"][0]["title"] == "hello there"

    # Grown by a turn: only the new bytes are read (the cache holds the old count).
    with TranscriptWriter(path, fsync=False) as writer:
        writer.append(Message("user", "more"))
    cached = json.loads(index.read_text())
    cached["sessions"][0]["message_count"] = 100  # proves the old part is not read again
    index.write_text(json.dumps(cached))
    again = read_summary(path)
    assert again is not None and again.message_count == 101

    # A broken cache is ignored, and a torn last line is not counted until complete.
    index.write_text("{not json")
    with path.open("ab") as handle:
        handle.write(b'{"type":"message","message":{"role":"user","con')
    fresh = read_summary(path)
    assert fresh is not None and fresh.message_count == 4
    assert len(load_transcript(path)[1]) == 4


def test_list_filters_by_folder_and_sorts_newest_first(home: Path, tmp_path: Path) -> None:
    a = write(home, "a", str(tmp_path), Message("user", "first"))
    b = write(home, "b", "/elsewhere", Message("user", "second"))
    (home / ".wave" / "sessions" / "not-a-session.txt").write_text("x")
    (home / ".wave" / "sessions" / "bad.jsonl").write_text("garbage\n")
    os.utime(a, ns=(2_000_000_000_000_000_000, 2_000_000_000_000_000_000))
    os.utime(b, ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))
    assert [s.session_id for s in list_sessions(home)] == ["a", "b"]
    assert [s.session_id for s in list_sessions(home, tmp_path)] == ["a"]
    assert list_sessions(tmp_path / "nobody") == []
