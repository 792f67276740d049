"""Listing saved sessions: ``wave/session/list`` over 1,000 transcripts (issue 10).

1,000 saved sessions of 40 messages each (about 8 MB of transcripts) in a fresh HOME. The
list is measured over LSP against a real ``wave-ls`` (request to result): the first call
(no summary cached yet: each transcript read once), then warm calls (each summary read from
its sidecar, the transcripts only stat'ed), and after one session grew by a turn (only its
new lines are read).

    .venv/bin/python benchmarks/bench_sessions.py [--quick]

Target: a warm list of 1,000 sessions <= 100 ms.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from common import figure, heading, note, parse_options, run_async, server_env, wave_server

from wave_ls.runtime.core import Message, ToolCall
from wave_ls.runtime.transcript import TranscriptWriter, transcript_path

MESSAGES = 40


def write_sessions(home: Path, count: int) -> None:
    for index in range(count):
        session_id = f"bench{index:05d}"
        with TranscriptWriter(transcript_path(home, session_id), fsync=False) as writer:
            writer.write_header(session_id, f"/projects/p{index % 10}", "bench-model")
            for turn in range(MESSAGES // 4):
                writer.append(Message("user", f"turn {turn} of session {index}: fix the tests"))
                call = ToolCall(f"c{turn}", "Read", '{"file_path": "src/app.py"}')
                writer.append(Message("assistant", "", [call]))
                writer.append(Message("tool", "x = 1\n" * 20, tool_call_id=f"c{turn}"))
                writer.append(Message("assistant", "Done: the tests pass now. " * 4))


async def timed_list(client: object) -> tuple[float, int]:
    started = time.perf_counter()
    result = await client.request("wave/session/list", {})  # type: ignore[attr-defined]
    return (time.perf_counter() - started) * 1000, len(result["sessions"])


async def main() -> None:
    options = parse_options(__doc__)
    count = 200 if options.quick else 1_000
    with tempfile.TemporaryDirectory(prefix="wave-bench-sessions-") as tmp:
        home = Path(tmp)
        write_sessions(home, count)
        size = sum(p.stat().st_size for p in (home / ".wave" / "sessions").glob("*.jsonl"))
        heading(f"wave/session/list over {count:,} saved sessions ({size / 1e6:.1f} MB)")
        async with wave_server(server_env(home)) as client:
            cold, listed = await timed_list(client)
            assert listed == count, listed
            warm = [(await timed_list(client))[0] for _ in range(7)]
            grown = transcript_path(home, "bench00000")
            with TranscriptWriter(grown, fsync=False) as writer:
                writer.append(Message("user", "one more turn"))
                writer.append(Message("assistant", "ok"))
            after_growth, _ = await timed_list(client)
        figure("first list (no summaries cached)", cold, "ms")
        figure(f"warm list of {count:,} sessions, median of 7", statistics.median(warm), "ms", 100)
        figure("list after one session grew", after_growth, "ms", 100)
        note(f"warm: min {min(warm):.1f} ms, max {max(warm):.1f} ms")


if __name__ == "__main__":
    run_async(main())
