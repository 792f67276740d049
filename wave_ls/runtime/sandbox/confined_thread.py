"""One thread, confined once, that runs calls for every caller in turn.

A Landlock domain (and ``no_new_privs``) belongs to a thread: a thread that confined itself
can start commands with vfork and they inherit its domain (``processes.popen_confined``).
For a sandbox used again and again (our own read-only git: ``read_only_confinement``) one
such thread serves every start: a new thread and domain per start cost ~0.3 ms at best,
more than 1 ms on a busy machine, beside a git status of ~3 ms (issue 30).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, TypeVar

T = TypeVar("T")


class ConfinedThread:
    """A daemon thread that runs ``restrict`` once, then each call given to ``run``. When
    ``restrict`` fails every call raises its error: nothing runs unconfined."""

    def __init__(self, restrict: Callable[[], None]) -> None:
        self._restrict = restrict
        self._calls: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]]]
        self._calls = queue.SimpleQueue()
        threading.Thread(target=self._serve, name="wave-confined", daemon=True).start()

    def run(self, call: Callable[[], T]) -> T:
        """``call()`` run in the confined thread; its result, or its exception raised here."""
        done: Future[T] = Future()
        self._calls.put((call, done))
        return done.result()

    def _serve(self) -> None:
        try:
            self._restrict()
            broken: Exception | None = None
        except Exception as error:
            broken = error
        while True:
            call, done = self._calls.get()
            if broken is not None:
                done.set_exception(broken)
                continue
            try:
                done.set_result(call())
            except Exception as error:
                done.set_exception(error)
