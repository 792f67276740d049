"""``BackgroundTasks``: one main session's background shell commands and subagents.

- A shell task is ``bash -c`` in its own process group; its output goes straight to the
  task's output file. It ends when the shell exits: exit code 0 = completed, else failed.
- A subagent task runs a coroutine the caller supplies; the coroutine reports through a
  ``TaskHandle`` and returns a ``SubagentResultLike``.
- ``stop`` kills a shell's process group (SIGTERM, then SIGKILL) or cancels a subagent's
  coroutine and waits for its own cleanup (``finally``) to finish. Status: ``stopped``.
- Each task that ends puts exactly one ``Notice`` (its ``<task-notification>``) in the notice
  queue, whatever ended it; ``take_notices`` hands each out once (the session's inbox turns
  them into the user-role messages the main agent reads before its next round).
"""

from __future__ import annotations

import asyncio
import builtins
import contextlib
import logging
import secrets
import signal
import time
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wave_ls.runtime.background_work import run_task
from wave_ls.runtime.core import RunUsage
from wave_ls.runtime.processes import KILL_GRACE_S, RunningCommand, signal_group, stop_group
from wave_ls.tasks.model import (
    SubagentResultLike,
    TaskError,
    TaskInfo,
    TaskStatus,
    UnknownTask,
)
from wave_ls.tasks.notices import Notice, NoticeQueue, notice_text
from wave_ls.tasks.output import (
    MAX_OUTPUT_CHARS,
    append_text,
    default_output_dir,
    read_tail,
)
from wave_ls.tasks.shell import spawn_shell

if TYPE_CHECKING:
    from wave_ls.runtime.sandbox import Confinement

log = logging.getLogger(__name__)

# How long ``stop`` waits for a task to end (a subagent's cleanup may remove a worktree).
STOP_WAIT_S = 30.0
# How much of a shell command's output its completion notice quotes.
NOTICE_OUTPUT_CHARS = 4_000
DEFAULT_STOP_REASON = "Stopped on request."
SHUTDOWN_REASON = "Stopped because the session ended."
CANCELLED_REASON = "Cancelled."

TaskListener = Callable[[TaskInfo], None]


def new_subagent_session_id() -> str:
    return "sub-" + secrets.token_hex(4)


class TaskHandle:
    """What a background subagent's coroutine uses to show its progress.

    ``write`` appends lines to the output file (each tool call, say); ``report`` sets the
    short status line clients show; ``record`` keeps the usage and worktree summary so that
    a stopped run's notice still carries them (call it from the run's ``finally``). The
    final text is written to the output file by the manager, not by the run.
    """

    def __init__(self, info: TaskInfo, changed: TaskListener) -> None:
        self._info = info
        self._changed = changed
        self.usage: RunUsage | None = None
        self.worktree_summary: str | None = None

    @property
    def task_id(self) -> str:
        return self._info.task_id

    @property
    def session_id(self) -> str:
        """The subagent's own session id (``sub-<8 hex>``)."""
        return self._info.subagent_session_id or ""

    @property
    def output_file(self) -> Path:
        return self._info.output_file

    def write(self, text: str) -> None:
        """Append ``text`` as one or more lines; ignored once the task has ended."""
        if not self._info.running:
            return
        try:
            append_text(self._info.output_file, text)
        except OSError:  # the log is a convenience; a full disk must not fail the run
            log.warning("cannot write to %s", self._info.output_file, exc_info=True)

    def report(self, status: str) -> None:
        """Set the task's short status line (``Read src/app.py · 1,234 tokens``)."""
        if self._info.running and status != self._info.progress:
            self._info.progress = status
            self._changed(self._info)

    def record(self, *, usage: RunUsage | None = None, worktree_summary: str | None = None) -> None:
        """Keep what the completion notice must carry even if the run is stopped."""
        if usage is not None:
            self.usage = usage
        if worktree_summary is not None:
            self.worktree_summary = worktree_summary


@dataclass
class _Entry:
    info: TaskInfo
    started: float  # time.monotonic()
    done: asyncio.Event = field(default_factory=asyncio.Event)
    runner: asyncio.Task[None] | None = None
    process: RunningCommand | None = None
    handle: TaskHandle | None = None
    stop_reason: str | None = None  # set once a stop was asked for


class BackgroundTasks:
    """The background tasks of one main session (its tools reach them as
    ``ctx.services.background``)."""

    def __init__(
        self,
        session_id: str,
        home: Path,
        *,
        output_dir: Path | None = None,
        kill_grace: float = KILL_GRACE_S,
        stop_wait: float = STOP_WAIT_S,
        notice_output_chars: int = NOTICE_OUTPUT_CHARS,
    ) -> None:
        self.session_id = session_id
        self.output_dir = output_dir or default_output_dir(home, session_id)
        self.kill_grace = kill_grace
        self.stop_wait = stop_wait
        self.notice_output_chars = notice_output_chars
        self._entries: dict[str, _Entry] = {}
        self._notices = NoticeQueue()
        self._change_listeners: list[TaskListener] = []
        self._notice_listeners: list[TaskListener] = []
        self._closed = False

    # ------------------------------------------------------------------ starting

    async def start_shell(
        self,
        command: str,
        cwd: Path,
        description: str,
        *,
        tool_call_id: str | None = None,
        sandbox: Confinement | None = None,
    ) -> str:
        """Start ``command`` in ``cwd`` (confined by ``sandbox`` when given: the calling
        agent's); return its task id (``bash-<8 hex>``)."""
        self._check_open()
        task_id = self._new_id("bash")
        info = TaskInfo(
            task_id=task_id,
            session_id=self.session_id,
            kind="shell",
            description=description,
            output_file=self.output_dir / f"{task_id}.output",
            started_at=time.time(),
            command=command,
            cwd=cwd,
            tool_call_id=tool_call_id,
        )
        try:
            process = await spawn_shell(command, cwd, info.output_file, sandbox)
        except TaskError:
            info.output_file.unlink(missing_ok=True)
            raise
        info.pid = process.pid
        entry = _Entry(info, time.monotonic(), process=process)
        self._entries[task_id] = entry
        entry.runner = self._spawn(entry, self._watch_shell(entry, process))
        self._changed(info)
        return task_id

    def start_subagent(
        self,
        run: Callable[[TaskHandle], Awaitable[SubagentResultLike]],
        *,
        subagent_type: str,
        description: str,
        session_id: str | None = None,
        tool_call_id: str | None = None,
    ) -> TaskInfo:
        """Start ``run(handle)`` as a background subagent task (``agent-<8 hex>``).

        ``session_id`` is the subagent's own session id (a new ``sub-<8 hex>`` when omitted).
        Must be called with a running event loop.
        """
        asyncio.get_running_loop()  # fail before anything is registered
        self._check_open()
        task_id = self._new_id("agent")
        info = TaskInfo(
            task_id=task_id,
            session_id=self.session_id,
            kind="subagent",
            description=description,
            output_file=self.output_dir / f"{task_id}.output",
            started_at=time.time(),
            subagent_type=subagent_type,
            subagent_session_id=session_id or new_subagent_session_id(),
            tool_call_id=tool_call_id,
        )
        info.output_file.parent.mkdir(parents=True, exist_ok=True)
        info.output_file.touch()
        entry = _Entry(info, time.monotonic())
        entry.handle = TaskHandle(info, self._changed)
        self._entries[task_id] = entry
        entry.runner = self._spawn(entry, self._drive_subagent(entry, run))
        self._changed(info)
        return info

    # ------------------------------------------------------------------ reading

    def output_file(self, task_id: str) -> Path | None:
        """Where a task's output is written (None for an unknown task)."""
        info = self.get(task_id)
        return info.output_file if info is not None else None

    def get(self, task_id: str) -> TaskInfo | None:
        entry = self._entries.get(task_id)
        return entry.info if entry else None

    def require(self, task_id: str) -> TaskInfo:
        """The task, or ``UnknownTask`` with a message that lists the running ones."""
        entry = self._entries.get(task_id)
        if entry is None:
            raise UnknownTask(self._unknown_message(task_id))
        return entry.info

    async def read_output(
        self,
        task_id: str,
        *,
        block: bool = False,
        timeout: float | None = 30.0,
        max_chars: int = MAX_OUTPUT_CHARS,
    ) -> tuple[TaskInfo, str]:
        """The task and the tail of its output file; with ``block``, first wait (at most
        ``timeout`` seconds, None = no limit) for the task to end."""
        info = self.require(task_id)
        entry = self._entries[task_id]
        if block and info.running:
            await self._wait_done(entry, timeout)
        return info, read_tail(info.output_file, max_chars)

    @property
    def has_running(self) -> bool:
        return any(entry.info.running for entry in self._entries.values())

    @property
    def closed(self) -> bool:
        """True after ``stop_all``: no new task may start."""
        return self._closed

    # ------------------------------------------------------------------ stopping

    async def stop(self, task_id: str, reason: str = DEFAULT_STOP_REASON) -> bool:
        """Stop a running task and wait until it has ended (its cleanup included).

        True when this call stopped it; False for an unknown or already-ended task (and for
        a second caller while a stop is under way: it waits, then gets False).
        ``reason`` becomes the notice's result text.
        """
        entry = self._entries.get(task_id)
        if entry is None or not entry.info.running:
            return False
        if entry.stop_reason is not None:
            await entry.done.wait()
            return False
        entry.stop_reason = reason
        if entry.process is not None:
            await self._stop_shell(entry, entry.process)
        else:
            await self._stop_subagent(entry)
        return entry.info.status == "stopped"

    async def stop_all(self, reason: str = SHUTDOWN_REASON) -> None:
        """Shutdown: refuse new tasks, stop every running one, wait for all of them."""
        self._closed = True
        running = [task_id for task_id, e in self._entries.items() if e.info.running]
        outcomes = await asyncio.gather(
            *(self.stop(task_id, reason) for task_id in running), return_exceptions=True
        )
        for task_id, outcome in zip(running, outcomes, strict=True):
            if isinstance(outcome, BaseException):
                log.error("stopping %s failed", task_id, exc_info=outcome)

    # ------------------------------------------------------------------ notices & listeners

    def take_notices(self) -> builtins.list[Notice]:
        """Every pending completion notice, each handed out exactly once."""
        return self._notices.take_all()

    @property
    def pending_notices(self) -> int:
        return len(self._notices)

    def on_change(self, callback: TaskListener) -> Callable[[], None]:
        """Call ``callback(info)`` when a task starts, reports a status, or ends.

        Returns a function that unsubscribes. Callbacks must not block.
        """
        return self._subscribe(self._change_listeners, callback)

    def on_notice(self, callback: TaskListener) -> Callable[[], None]:
        """Call ``callback(info)`` right after a task's notice was queued (start a turn)."""
        return self._subscribe(self._notice_listeners, callback)

    # ------------------------------------------------------------------ internals

    def _check_open(self) -> None:
        if self._closed:
            raise TaskError("This session has ended; no background task can start.")

    def _new_id(self, prefix: str) -> str:
        while True:
            task_id = f"{prefix}-{secrets.token_hex(4)}"
            if (
                task_id not in self._entries
                and not (self.output_dir / f"{task_id}.output").exists()
            ):
                return task_id

    def _spawn(self, entry: _Entry, work: Coroutine[Any, Any, None]) -> asyncio.Task[None]:
        # _runner_done reports a crash as the task's own failure: no second log line.
        task = run_task(work, f"wave-task-{entry.info.task_id}", log_failure=False)
        task.add_done_callback(lambda done: self._runner_done(entry, done))
        return task

    def _runner_done(self, entry: _Entry, task: asyncio.Task[None]) -> None:
        """Safety net: a runner that ended without finishing its task (cancelled before it
        started, or a bug of ours) still ends the task, with one notice."""
        if task.cancelled():
            error = None
        else:
            exc = task.exception()
            error = None if exc is None else f"{type(exc).__name__}: {exc}"
            if exc is not None:
                log.error("runner of %s crashed", entry.info.task_id, exc_info=exc)
        if not entry.info.running:
            return
        if error is None:
            self._finish(entry, "stopped", entry.stop_reason or CANCELLED_REASON)
        else:
            self._finish(entry, "failed", error)

    async def _watch_shell(self, entry: _Entry, process: RunningCommand) -> None:
        try:
            code = await process.wait()
        except asyncio.CancelledError:
            # Our event loop is going away: take the command with us, never leave orphans.
            signal_group(process.pid, signal.SIGKILL)
            raise
        info = entry.info
        info.exit_code = code
        if entry.stop_reason is not None:
            self._finish(entry, "stopped", entry.stop_reason)
            return
        output = read_tail(info.output_file, self.notice_output_chars).rstrip("\n")
        self._finish(entry, "completed" if code == 0 else "failed", output or "(no output)")

    async def _stop_shell(self, entry: _Entry, process: RunningCommand) -> None:
        await stop_group(process, self.kill_grace)
        if not await self._wait_done(entry, self.stop_wait):
            log.warning("shell task %s did not exit after SIGKILL", entry.info.task_id)
            self._finish(entry, "stopped", entry.stop_reason or DEFAULT_STOP_REASON)

    async def _drive_subagent(
        self, entry: _Entry, run: Callable[[TaskHandle], Awaitable[SubagentResultLike]]
    ) -> None:
        assert entry.handle is not None
        result: SubagentResultLike | None = None
        error: str | None = None
        try:
            result = await run(entry.handle)
        except asyncio.CancelledError:
            if entry.stop_reason is None:  # not our stop (the loop is closing): end, re-raise
                entry.stop_reason = CANCELLED_REASON
                self._finish_subagent(entry, None, None)
                raise
        except Exception as exc:  # the subagent's crash is its failure, reported verbatim
            log.exception("background subagent %s crashed", entry.info.task_id)
            error = f"{type(exc).__name__}: {exc}"
        self._finish_subagent(entry, result, error)

    async def _stop_subagent(self, entry: _Entry) -> None:
        assert entry.runner is not None
        entry.runner.cancel()
        if not await self._wait_done(entry, self.stop_wait):
            log.warning(
                "background subagent %s did not finish its cleanup within %g s",
                entry.info.task_id,
                self.stop_wait,
            )
            self._finish(entry, "stopped", entry.stop_reason or DEFAULT_STOP_REASON)

    def _finish_subagent(
        self, entry: _Entry, result: SubagentResultLike | None, error: str | None
    ) -> None:
        handle = entry.handle
        assert handle is not None
        usage = result.usage if result is not None and result.usage else handle.usage
        worktree = (result.worktree_summary if result is not None else None) or (
            handle.worktree_summary
        )
        status: TaskStatus
        if entry.stop_reason is not None:
            status, text = "stopped", entry.stop_reason
        elif error is not None:
            status, text = "failed", error
        elif result is not None:
            status = "completed" if result.status == "completed" else "failed"
            text = result.text
        else:
            status, text = "failed", "The subagent returned no result."
        self._finish(entry, status, text, usage=usage, worktree_summary=worktree)

    def _finish(
        self,
        entry: _Entry,
        status: TaskStatus,
        result: str,
        *,
        usage: RunUsage | None = None,
        worktree_summary: str | None = None,
    ) -> None:
        """End the task once: record the outcome, queue its notice, tell the listeners."""
        info = entry.info
        if not info.running:
            return
        if info.kind == "subagent":
            with contextlib.suppress(OSError):
                append_text(info.output_file, f"\n--- {status} ---\n{result}")
        info.status = status
        info.result = result
        info.usage = usage
        info.worktree_summary = worktree_summary
        info.ended_at = time.time()
        info.duration_ms = int((time.monotonic() - entry.started) * 1000)
        entry.done.set()
        self._notices.put(Notice(info.task_id, status, notice_text(info)))
        self._changed(info)
        self._emit(self._notice_listeners, info)

    async def _wait_done(self, entry: _Entry, timeout: float | None) -> bool:
        try:
            await asyncio.wait_for(entry.done.wait(), timeout)
        except TimeoutError:
            return False
        return True

    def _unknown_message(self, task_id: str) -> str:
        running = [e.info for e in self._entries.values() if e.info.running]
        listed = ", ".join(f"{i.task_id} ({i.label})" for i in running) or "none"
        return f"No background task with id '{task_id}' in this session. Running tasks: {listed}."

    def _changed(self, info: TaskInfo) -> None:
        self._emit(self._change_listeners, info)

    @staticmethod
    def _emit(listeners: builtins.list[TaskListener], info: TaskInfo) -> None:
        for listener in list(listeners):
            try:
                listener(info)
            except Exception:  # an adapter's bug must not break the task registry
                log.exception("background task listener failed")

    @staticmethod
    def _subscribe(
        listeners: builtins.list[TaskListener], callback: TaskListener
    ) -> Callable[[], None]:
        listeners.append(callback)

        def unsubscribe() -> None:
            with contextlib.suppress(ValueError):
                listeners.remove(callback)

        return unsubscribe

    def list(self) -> builtins.list[TaskInfo]:
        """Every task of the session, running and ended, in the order they started."""
        return [entry.info for entry in self._entries.values()]
