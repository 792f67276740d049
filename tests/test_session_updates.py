"""The update coalescer (``server/updates.py``) on its own: runtime events become
``wave/session/update`` payloads, streaming ones at most ``max_rate`` a second per block,
merged in between, without losing the order or the final state.

Tested until now only through a real server; here a real event loop runs its timers, and
each test waits for the send it expects (never for a time).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from wave_ls.runtime.core import (
    AssistantContentDelta,
    ToolBlockUpdated,
    TurnEnded,
    Usage,
    UsageUpdated,
)
from wave_ls.server.updates import UPDATE_METHOD, Coalescer, SessionUpdateSink

RATE = 20.0  # a send per key every 50 ms


class Sent:
    """What the coalescer sent, when, and a way to wait for a send."""

    def __init__(self) -> None:
        self.updates: list[dict[str, Any]] = []
        self.times: list[float] = []
        self._changed = asyncio.Event()

    def __call__(self, update: dict[str, Any]) -> None:
        self.updates.append(update)
        self.times.append(time.monotonic())
        self._changed.set()

    async def until(self, predicate: Callable[[list[dict[str, Any]]], bool]) -> None:
        async def wait() -> None:
            while not predicate(self.updates):
                self._changed.clear()
                await self._changed.wait()

        await asyncio.wait_for(wait(), 5)


def delta(text: str) -> dict[str, Any]:
    return {"kind": "assistantDelta", "delta": text}


def block(call_id: str, status: str, short: str = "") -> dict[str, Any]:
    return {"kind": "toolBlock", "toolCallId": call_id, "status": status, "shortResult": short}


def texts(updates: list[dict[str, Any]]) -> str:
    return "".join(u["delta"] for u in updates if u["kind"] == "assistantDelta")


async def test_the_first_delta_goes_at_once_and_the_next_ones_are_merged() -> None:
    sent = Sent()
    coalescer = Coalescer(sent, RATE)
    coalescer.push(delta("Hel"))
    assert sent.updates == [delta("Hel")]  # nothing to wait for the first time
    for piece in ("lo", ", ", "world"):
        coalescer.push(delta(piece))
    assert len(sent.updates) == 1  # held back: the interval has not passed
    await sent.until(lambda updates: len(updates) == 2)
    assert sent.updates[1] == delta("lo, world")  # one update for the three, in order
    assert sent.times[1] - sent.times[0] >= 0.9 / RATE


async def test_a_burst_of_deltas_is_sent_a_few_times_and_loses_nothing() -> None:
    sent = Sent()
    coalescer = Coalescer(sent, RATE)
    pieces = [f"{n} " for n in range(2_000)]
    for piece in pieces:
        coalescer.push(delta(piece))
    await sent.until(lambda updates: texts(updates) == "".join(pieces))
    assert len(sent.updates) == 2
    assert all("_parts" not in update for update in sent.updates)  # no internals on the wire


async def test_a_running_block_sends_only_its_latest_state() -> None:
    sent = Sent()
    coalescer = Coalescer(sent, RATE)
    coalescer.push(block("c1", "pending"))
    coalescer.push(block("c1", "running", "1 line"))
    coalescer.push(block("c1", "running", "2 lines"))
    await sent.until(lambda updates: len(updates) == 2)
    assert sent.updates == [block("c1", "pending"), block("c1", "running", "2 lines")]


async def test_a_final_update_first_flushes_what_is_held_back_in_order() -> None:
    sent = Sent()
    coalescer = Coalescer(sent, RATE)
    coalescer.push(delta("a"))
    coalescer.push(block("c1", "running", "first"))
    coalescer.push(delta("b"))
    coalescer.push(block("c1", "running", "second"))
    coalescer.push(block("c1", "completed", "done"))  # not coalesced: sends the rest first
    assert sent.updates == [
        delta("a"),
        block("c1", "running", "first"),
        delta("b"),
        block("c1", "running", "second"),
        block("c1", "completed", "done"),
    ]
    assert coalescer.pending == {} and coalescer.timers == {}  # no timer left to fire later


async def test_blocks_are_paced_each_on_its_own() -> None:
    sent = Sent()
    coalescer = Coalescer(sent, RATE)
    coalescer.push(block("c1", "running", "one"))
    coalescer.push(block("c2", "running", "two"))  # another key: not held back by c1
    coalescer.push(delta("text"))
    assert sent.updates == [
        block("c1", "running", "one"),
        block("c2", "running", "two"),
        delta("text"),
    ]


async def test_flush_sends_everything_pending_now() -> None:
    sent = Sent()
    coalescer = Coalescer(sent, RATE)
    coalescer.push(delta("a"))
    coalescer.push(delta("b"))
    coalescer.push(block("c1", "running", "x"))
    coalescer.push(block("c1", "running", "y"))
    assert sent.updates == [delta("a"), block("c1", "running", "x")]
    coalescer.flush()  # in the order they were first held back
    assert sent.updates[2:] == [delta("b"), block("c1", "running", "y")]
    assert coalescer.pending == {} and coalescer.timers == {}


async def test_the_session_sink_turns_events_into_updates_with_the_session_id() -> None:
    notified: list[tuple[str, dict[str, Any]]] = []
    mirrored: list[dict[str, Any]] = []
    sink = SessionUpdateSink(
        "s1", lambda method, params: notified.append((method, params)), RATE, mirrored.append
    )
    sink.emit(AssistantContentDelta("Hi"))
    sink.emit(ToolBlockUpdated("c1", "Read", '{"file_path": "a"}', "running", "reading"))
    sink.emit(AssistantContentDelta(" there"))  # held back ...
    sink.emit(UsageUpdated(Usage(1, 2, 3), Usage(1, 2, 3)))  # ... until this one comes
    sink.emit(TurnEnded("completed", "Hi there"))
    sink.push({"kind": "task", "task": {"taskId": "t"}})

    assert {method for method, _ in notified} == {UPDATE_METHOD}
    params = [p for _, p in notified]
    assert all(p["sessionId"] == "s1" for p in params)
    assert [p["kind"] for p in params] == [
        "assistantDelta",
        "toolBlock",
        "assistantDelta",
        "usage",
        "turnEnded",
        "task",
    ]
    assert params[2]["delta"] == " there"
    assert params[1]["arguments"] == '{"file_path": "a"}' and params[1]["shortResult"] == "reading"
    assert params[4] == {
        "sessionId": "s1",
        "kind": "turnEnded",
        "status": "completed",
        "text": "Hi there",
        "error": None,
    }
    assert mirrored == [{k: v for k, v in p.items() if k != "sessionId"} for p in params]
