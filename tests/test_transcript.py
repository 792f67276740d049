"""Session transcripts: durable JSON Lines, tolerant loading, safe session ids."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from wave_ls.runtime.core import Message, ToolCall
from wave_ls.runtime.transcript import (
    InvalidSessionId,
    TranscriptWriter,
    load_transcript,
    transcript_path,
    valid_session_id,
    validate_session_id,
)

CONVERSATION = [
    Message("user", "<system-reminder>memory</system-reminder>", meta={"isMeta": True}),
    Message("user", "fix the tests [@agent:test-runner]"),
    Message(
        "assistant",
        "",
        tool_calls=[ToolCall("call_1", "Agent", '{"subagent_type": "test-runner"}')],
    ),
    Message("tool", "All 12 tests pass.", tool_call_id="call_1", name="Agent"),
    Message("assistant", "Done: ünïcödé, line\u2028separator, 日本語."),
]


def write_session(path: Path, messages: list[Message]) -> None:
    with TranscriptWriter(path) as writer:
        assert writer.write_header("s1", "/work/p", "gpt-x", permission_mode="plan")
        for message in messages:
            writer.append(message)


def test_round_trip_keeps_header_and_every_message(home: Path) -> None:
    path = transcript_path(home, "s1")
    write_session(path, CONVERSATION)
    header, messages = load_transcript(path)
    assert header["type"] == "session"
    assert (header["sessionId"], header["cwd"], header["model"]) == ("s1", "/work/p", "gpt-x")
    assert header["permissionMode"] == "plan"
    assert header["createdAt"].endswith("+00:00")
    assert messages == CONVERSATION


def test_file_layout_is_one_json_record_per_line(home: Path) -> None:
    path = transcript_path(home, "s1")
    assert path == home / ".wave" / "sessions" / "s1.jsonl"
    write_session(path, CONVERSATION[:2])
    lines = path.read_text(encoding="utf-8").split("\n")
    assert lines[-1] == ""  # every line ends with a newline
    records = [json.loads(line) for line in lines[:-1]]
    assert [r["type"] for r in records] == ["session", "message", "message"]
    assert records[2]["message"] == {"role": "user", "content": CONVERSATION[1].content}


def test_transcripts_are_private_to_their_owner(home: Path) -> None:
    path = transcript_path(home, "s1")
    write_session(path, [])
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700


def test_header_is_written_once_and_resuming_appends(home: Path) -> None:
    path = transcript_path(home, "s1")
    write_session(path, CONVERSATION[:2])
    with TranscriptWriter(path) as writer:
        assert not writer.write_header("s1", "/elsewhere", "other-model")
        writer.append(CONVERSATION[2])
    header, messages = load_transcript(path)
    assert header["cwd"] == "/work/p"
    assert messages == CONVERSATION[:3]


def test_torn_last_line_is_skipped_with_a_warning(
    home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = transcript_path(home, "s1")
    write_session(path, CONVERSATION[:3])
    whole = path.read_bytes()
    path.write_bytes(whole[:-25])  # a kill in the middle of the last line
    with caplog.at_level(logging.WARNING, logger="wave_ls.runtime.transcript"):
        header, messages = load_transcript(path)
    assert header["sessionId"] == "s1"
    assert messages == CONVERSATION[:2]
    assert "torn last line 4" in caplog.text


def test_appending_after_a_torn_line_keeps_new_messages_readable(home: Path) -> None:
    path = transcript_path(home, "s1")
    write_session(path, CONVERSATION[:3])
    path.write_bytes(path.read_bytes()[:-10])
    with TranscriptWriter(path) as writer:
        writer.append(CONVERSATION[3])
    _, messages = load_transcript(path)
    assert messages == [*CONVERSATION[:2], CONVERSATION[3]]


def test_corrupt_lines_anywhere_are_skipped_and_unknown_records_ignored(
    home: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = transcript_path(home, "s1")
    write_session(path, CONVERSATION[:1])
    with path.open("a", encoding="utf-8") as handle:
        handle.write("{not json\n")
        handle.write('{"type": "message", "message": {"content": "no role"}}\n')
        handle.write('{"type": "usage", "total": 12}\n')  # a future record type
        handle.write("[1, 2]\n")
        handle.write(json.dumps({"type": "message", "message": CONVERSATION[1].to_json()}) + "\n")
    with caplog.at_level(logging.WARNING, logger="wave_ls.runtime.transcript"):
        _, messages = load_transcript(path)
    assert messages == CONVERSATION[:2]
    assert caplog.text.count("corrupt line") == 3


def test_transcript_torn_inside_the_header_loads_as_empty(home: Path) -> None:
    path = transcript_path(home, "s1")
    path.parent.mkdir(parents=True)
    path.write_text('{"type":"session","sessionId":"s', encoding="utf-8")
    assert load_transcript(path) == ({}, [])


def test_killed_writer_loses_at_most_the_line_in_flight(home: Path) -> None:
    # A real process appends and is killed with SIGKILL: everything appended before is there.
    path = transcript_path(home, "s1")
    script = (
        "import sys, os, signal\n"
        "from pathlib import Path\n"
        "from wave_ls.runtime.core import Message\n"
        "from wave_ls.runtime.transcript import TranscriptWriter\n"
        "w = TranscriptWriter(Path(sys.argv[1]))\n"
        "w.write_header('s1', '/p', 'm')\n"
        "for i in range(20):\n"
        "    w.append(Message('user', f'message {i}'))\n"
        "os.kill(os.getpid(), signal.SIGKILL)\n"
    )
    result = subprocess.run([sys.executable, "-c", script, str(path)], check=False)
    assert result.returncode == -9
    _, messages = load_transcript(path)
    assert [m.content for m in messages] == [f"message {i}" for i in range(20)]


@pytest.mark.parametrize(
    "bad", ["", "../etc/passwd", "a/b", "..", "a b", "x" * 65, "s1.jsonl", "é", "a\n"]
)
def test_bad_session_ids_are_refused(home: Path, bad: str) -> None:
    assert not valid_session_id(bad)
    with pytest.raises(InvalidSessionId):
        transcript_path(home, bad)
    with pytest.raises(InvalidSessionId):
        TranscriptWriter(home / "t.jsonl").write_header(bad, "/p", "m")
    assert not (home / "t.jsonl").exists()


@pytest.mark.parametrize("good", ["s1", "sub-1a2b3c4d", "A_b-9", "x" * 64])
def test_good_session_ids_are_accepted(good: str) -> None:
    assert valid_session_id(good)
    assert validate_session_id(good) == good


def test_missing_transcript_raises_file_not_found(home: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_transcript(transcript_path(home, "nope"))


def test_append_without_fsync_still_writes(home: Path) -> None:
    path = transcript_path(home, "s1")
    writer = TranscriptWriter(path, fsync=False)
    writer.append(CONVERSATION[1])
    assert os.path.getsize(path) > 0  # flushed even before close
    writer.close()
    assert load_transcript(path) == ({}, [CONVERSATION[1]])
