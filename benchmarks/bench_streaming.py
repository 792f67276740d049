"""Streaming an answer: CPU per delta must stay flat as the answer grows (issue 10).

One model round streams 10,000 deltas through the real pipeline in this process: the
conversation loop, the ``wave/session/update`` sink (coalescing) and the JSON encoding of
each notification a client would receive. The model is a scripted ``ModelClient`` that
yields to the event loop between deltas, as a network stream does. CPU time
(``time.process_time``) is measured for the first and the last 1,000 deltas (the best of
three runs, so another process's load cannot decide): when each update carried the whole
text so far, the last ones cost many times the first.

    .venv/bin/python benchmarks/bench_streaming.py [--quick]

Target: the last 1,000 deltas cost at most 1.5x the first 1,000 (flat).
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from common import figure, heading, note, parse_options, run_async

from wave_ls.runtime.core import ModelRequest, ModelResponse, Usage
from wave_ls.server.updates import SessionUpdateSink
from wave_ls.session import AgentSession

DELTA = "word " * 4  # 20 characters, a typical chunk of a fast model
SLICE = 1_000


class StreamingModel:
    """Streams ``count`` deltas, noting the CPU time at each slice boundary."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.marks: list[float] = []

    async def complete(
        self, request: ModelRequest, on_delta: Callable[[str], None] | None = None
    ) -> ModelResponse:
        assert on_delta is not None
        for index in range(self.count):
            if index % SLICE == 0:
                self.marks.append(time.process_time())
            on_delta(DELTA)
            await asyncio.sleep(0)
        self.marks.append(time.process_time())
        return ModelResponse(DELTA * self.count, [], Usage(1, self.count, self.count + 1))


async def stream(count: int) -> tuple[list[float], list[int]]:
    """CPU seconds per slice of deltas, and the size of each notification sent."""
    sent: list[int] = []

    def notify(method: str, params: dict[str, Any]) -> None:
        sent.append(len(json.dumps({"method": method, "params": params})))

    model = StreamingModel(count)
    with tempfile.TemporaryDirectory(prefix="wave-bench-stream-") as tmp:
        root = Path(tmp)
        session = AgentSession(
            cwd=root,
            home=root,
            model="bench",
            client=model,
            sink=SessionUpdateSink("bench", notify),
            persist=False,
        )
        await session.send("stream a long answer")
    return [b - a for a, b in zip(model.marks, model.marks[1:], strict=False)], sent


async def main() -> None:
    options = parse_options(__doc__)
    count = 2_000 if options.quick else 10_000
    runs = [await stream(count) for _ in range(3)]
    slices = [min(run[0][i] for run in runs) for i in range(len(runs[0][0]))]
    sent = runs[0][1]
    heading(f"streaming {count:,} deltas of {len(DELTA)} characters through the update sink")
    first, last = slices[0] / SLICE * 1e6, slices[-1] / SLICE * 1e6
    figure("CPU per delta, first 1,000", first, "µs")
    figure("CPU per delta, last 1,000", last, "µs")
    figure("growth, last vs first", last / first, "x", 1.5)
    note(f"{len(sent):,} notifications sent, {sum(sent):,} bytes of JSON in all")
    note(f"largest notification: {max(sent):,} bytes")


if __name__ == "__main__":
    run_async(main())
