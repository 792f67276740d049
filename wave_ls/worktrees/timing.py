"""Where a worktree's set-up and end spend their time, phase by phase (for logs and
``benchmarks/bench_delegation.py``)."""

from __future__ import annotations

import time


class PhaseClock:
    """Laps of one operation: ``lap("create")`` books the time since the previous lap."""

    def __init__(self) -> None:
        self.phases: dict[str, float] = {}
        self._last = time.perf_counter()

    def lap(self, phase: str) -> None:
        now = time.perf_counter()
        self.phases[phase] = self.phases.get(phase, 0.0) + now - self._last
        self._last = now

    def text(self) -> str:
        """``create 14.2 ms, include 0.1 ms, ...`` for a log line."""
        return ", ".join(f"{name} {seconds * 1000:.1f} ms" for name, seconds in self.phases.items())
