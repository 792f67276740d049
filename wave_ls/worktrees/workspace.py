"""Where one delegation runs: the ``Workspace`` seam between the runner and the isolation rules.

The runner asks for a workspace (``open_workspace``: in place, or an isolated worktree) and
gets one object with one call per phase:

- ``context``: the tool context to start with; ``ready()`` (the conversation's
  ``tools_ready``, None in place): the one to run tools in, once the worktree is made;
- ``run(turn)``: the turn, beside git's checkout (a checkout that fails stops it);
- ``finish()``: the keep/remove rule at any end, a stop included, and a typed report of
  worktree, outcome and sandbox (``report.py``).

What can refuse the worktree is checked in ``open_workspace`` (an ``IsolationError`` then
means nothing ran); git's checkout, the local copies and the sandbox go on in a thread, so
the first model request does not wait for them; the first tool call does (``ready``).
Every report the block should show goes to ``show`` as it changes.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import importlib
import logging
import threading
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from wave_ls.runtime.core import ModelClient, ToolContext
from wave_ls.runtime.request_sent import RequestSentSignal
from wave_ls.worktrees.model import Changes, IsolationError

if TYPE_CHECKING:  # imported by isolated runs only: an in-place one needs none of them
    from wave_ls.runtime.sandbox import Confinement
    from wave_ls.worktrees.isolation import IsolatedWorktree, WorktreeLaunch
    from wave_ls.worktrees.report import WorkspaceReport

T = TypeVar("T")

log = logging.getLogger(__name__)

# What an isolated delegation imports on its launch's path (~15 ms in a fresh process).
ISOLATION_MODULES = ("wave_ls.worktrees.isolation", "wave_ls.worktrees.report")
# A process's first request may still be connecting when it is "on its way": the imports
# start once it is surely written, so they never compete with it.
LOAD_DELAY_S = 0.01
_isolation_loading = threading.Event()


def load_isolation_soon() -> None:
    """Import ``ISOLATION_MODULES`` in a thread, once per process: called (on the event
    loop) when a parent's model request is on its way, so the imports run while the model
    reads it, and a delegation its answer asks to isolate does not wait for them (issue
    30). A session that never isolates pays them once, off every path."""
    if _isolation_loading.is_set():
        return
    _isolation_loading.set()

    def load() -> None:
        for name in ISOLATION_MODULES:
            try:
                importlib.import_module(name)
            except Exception:  # its first use then reports it
                log.debug("could not import %s early", name, exc_info=True)

    thread = threading.Thread(target=load, name="wave-load-isolation", daemon=True)
    try:
        asyncio.get_running_loop().call_later(LOAD_DELAY_S, thread.start)
    except RuntimeError:  # no loop in this thread: nothing to wait for
        thread.start()


@dataclass(frozen=True)
class WorkspaceRequest:
    """What a delegation asks of its workspace.

    ``session_id`` is the run's own id (its tool context's, and the worktree hooks');
    ``owner`` who holds the worktree (``wave/worktrees/list``); ``in_place_fallback``: when
    no worktree can be made, run in the caller's folder (saying so) instead of failing;
    ``intro_in_prompt`` False (a fork keeps its parent's system prompt verbatim): the
    sandbox's introduction comes with its first command's result instead.
    """

    session_id: str
    home: Path
    isolated: bool = False
    owner: str = ""
    in_place_fallback: bool = False
    intro_in_prompt: bool = True


class Workspace:
    """One delegation's workspace (``open_workspace``); see the module's docstring."""

    def __init__(
        self,
        context: ToolContext,
        show: Callable[[WorkspaceReport | None], None],
        report: WorkspaceReport | None,
        launch: WorktreeLaunch | None = None,
        intro: str = "",
        intro_in_prompt: bool = True,
    ) -> None:
        self.context = context
        # The sandbox's section of the system prompt ("" when nothing confines it).
        self.intro = intro if intro_in_prompt else ""
        self._note = "" if intro_in_prompt else intro.strip()
        self._show = show
        self._launch = launch
        self._abandoned = False
        # The status taken while the answer to request number ``_status_at`` came
        # (``sent``), and how many requests the run has sent.
        self._status: asyncio.Future[Changes] | None = None
        self._status_at = -1
        self._requests = 0
        self.report = report
        show(report)

    def client(self, client: ModelClient) -> ModelClient:
        """The model client the run sends with: an isolated run's says when each request is
        on its way (``sent``): the first begins git's checkout, so that its processes and
        the thread's Python do not compete with that request (issue 30: 7-9 ms of the
        isolated launch); a later one takes the worktree's status while the answer comes,
        which the end uses when nothing can have changed it since."""
        return client if self._launch is None else RequestSentSignal(client, self.sent)

    @property
    def checkout_begun(self) -> bool:
        """Whether git's checkout of its worktree has begun (False in place)."""
        return self._launch is not None and self._launch.begun

    @property
    def tools_ready(self) -> Callable[[], Awaitable[ToolContext]] | None:
        """What the first tool call awaits (None: nothing to wait for)."""
        return self.ready if self._launch is not None else None

    async def ready(self) -> ToolContext:
        """The context to run tools in, once the worktree and its sandbox are made."""
        wt, box = await self._wait()
        if self._note and box.confined:
            box.note = self._note
        from wave_ls.worktrees.report import SandboxReport, WorkspaceReport, WorktreeReport

        self._report(WorkspaceReport(WorktreeReport.made(wt), SandboxReport.of(box)))
        self.context = dataclasses.replace(
            self.context,
            cwd=wt.cwd,
            write_root=wt.path,
            services=self.context.services.for_subagent(wt),
            sandbox=box,
        )
        return self.context

    async def run(self, turn: Awaitable[T]) -> T:
        """``turn``, while the worktree is still being made; a worktree that cannot be made
        after all stops the turn, and its ``IsolationError`` is raised instead."""
        ready = self._launch.ready if self._launch is not None else None
        if ready is None or ready.done():
            return await turn
        running = asyncio.ensure_future(turn)
        either: set[asyncio.Future[Any]] = {running, ready}
        try:
            await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            await _stop(running)  # its end (tool calls closed, commands stopped) first
            raise
        if ready.done() and not ready.cancelled() and (error := ready.exception()) is not None:
            await _stop(running)
            raise error
        return await running

    def sent(self) -> None:
        """A request of the run is on its way (``client``): the first begins
        the checkout; once the worktree is made, each takes its status while the answer
        comes (a git process in a thread: the end then need not wait for one)."""
        self._requests += 1
        launch = self._launch
        if launch is None or self._abandoned:
            return
        launch.begin()
        if not launch.ready.done() or launch.ready.cancelled():
            return
        if launch.ready.exception() is not None:
            return
        wt, box = launch.ready.result()
        if box.commands_running():  # they may still change it: taken at the end instead
            return
        from wave_ls.worktrees.isolation import start_worktree_changes

        self._status_at = self._requests
        # git's processes start here, on the loop (about 1 ms, while the request is out): a
        # thread preparing them would contend with the answer's reading (issue 30: 3-4 ms).
        status = start_worktree_changes(wt, launch.manager)
        self._status = asyncio.ensure_future(asyncio.to_thread(status))

    async def _known_changes(self, box: Confinement) -> Changes | None:
        """The status taken while the last answer came, when nothing can have changed the
        worktree since: no request after it (so no tool call), and no command of its sandbox
        running then or now. None: take it now."""
        status, self._status = self._status, None
        if status is None:
            return None
        try:
            changes = await asyncio.shield(status)
        except Exception:
            return None
        fresh = self._status_at == self._requests and not box.commands_running()
        return changes if fresh and changes.determinable else None

    async def finish(
        self,
        after: Callable[[asyncio.Future[None]], None] | None = None,
        settled: bool = False,
        begin_later: Callable[[], Awaitable[None]] | None = None,
    ) -> WorkspaceReport | None:
        """End the worktree by the keep/remove rule (never raises: WT-7) and report how.

        With ``after``, the removal of an unchanged worktree goes on once this has returned
        (the result need not wait for it; it begins once ``begin_later`` has returned):
        ``after`` gets the end's task before anything is
        awaited, for whoever must see it done (the parent's turn end, its close), also when
        this caller is cancelled meanwhile. ``settled``: the run ended on an answer without tool
        calls and nothing ran after it (no ``Stop`` hook): the status taken while that answer
        came stands, if nothing else can have changed the worktree (``_known_changes``). A
        run stopped before its worktree was made does not wait for git's checkout: the
        worktree is ended in the background once made (``abandon``)."""
        launch = self._launch
        if launch is None:
            return self.report
        if self._abandoned or (not launch.ready.done() and _stopping()):
            self.abandon()
            return self.report
        try:
            wt, box = await self._wait()
        except Exception:  # it could not be made: nothing to end (a cancellation goes on)
            return self.report
        from wave_ls.worktrees import isolation
        from wave_ls.worktrees.report import SandboxReport, WorkspaceReport, WorktreeReport

        if after is None or _stopping():
            ended = await isolation.finish_isolated_worktree(
                wt, manager=launch.manager, sandbox=box
            )
        else:  # the whole end is one task ``after`` holds, even if this is cancelled
            ended = await isolation.finish_isolated_worktree_soon(
                wt,
                after,
                manager=launch.manager,
                sandbox=box,
                changes=(lambda: self._known_changes(box)) if settled else None,
                begin_later=begin_later,
            )
        # Never silently unconfined: the summary says so too.
        summary = ended.summary if box.confined else f"{ended.summary}\n{box.note}"
        self._report(
            WorkspaceReport(WorktreeReport.ended(wt, ended, summary), SandboxReport.of(box))
        )
        return self.report

    def abandon(self) -> None:
        """Nobody waits for the worktree any more (a stopped run): once made, it is ended by
        the keep/remove rule in the background (once, however often this is called)."""
        if self._launch is not None and not self._abandoned:
            self._abandoned = True
            self._launch.drop()

    async def _wait(self) -> tuple[IsolatedWorktree, Confinement]:
        assert self._launch is not None
        self._launch.begin()  # a tool call or the end waits for it: it starts now at the latest
        try:
            return await asyncio.shield(self._launch.ready)
        except asyncio.CancelledError:
            self.abandon()
            raise

    def _report(self, report: WorkspaceReport | None) -> None:
        self.report = report
        self._show(report)


async def open_workspace(
    request: WorkspaceRequest,
    ctx: ToolContext,
    show: Callable[[WorkspaceReport | None], None] = lambda _report: None,
) -> Workspace:
    """The workspace of a run asked for by a tool call running in ``ctx``: in place (its
    caller's folder, write root and sandbox), or isolated in a worktree on its way. Raises
    the ``IsolationError`` that refuses the worktree (unless ``in_place_fallback``)."""
    in_place = ToolContext(
        cwd=ctx.cwd,
        home=ctx.home,
        session_id=request.session_id,
        write_root=ctx.write_root,
        services=ctx.services.for_subagent(None),
        sandbox=ctx.sandbox,
    )
    if not request.isolated:
        return Workspace(in_place, show, None)
    from wave_ls.worktrees.report import WorkspaceReport, WorktreeReport

    try:
        launch = await _launch(request, ctx.cwd)
    except IsolationError as exc:
        if not request.in_place_fallback:
            raise
        note = f"The fork ran in place in {ctx.cwd}: no worktree could be made ({exc})."
        return Workspace(
            in_place, show, WorkspaceReport(WorktreeReport.ran_in_place(ctx.cwd, note))
        )
    wt = launch.ready.result()[0] if launch.ready.done() else launch.planned
    context = dataclasses.replace(
        in_place,
        cwd=wt.cwd,
        write_root=wt.path,
        services=ctx.services.for_subagent(wt),
        sandbox=None,  # its own, once made (``ready``)
    )
    report = WorkspaceReport(WorktreeReport.made(wt))
    return Workspace(context, show, report, launch, _intro(wt), request.intro_in_prompt)


async def _launch(request: WorkspaceRequest, cwd: Path) -> WorktreeLaunch:
    # Loaded by then, as a rule (``load_isolation_soon``, when the parent's request went out).
    from wave_ls.worktrees.isolation import WorktreeRequest, launch_worktree

    # The fallback, or the agent's directory, needs it made; else it is begun by the run's
    # first request (``Workspace.client``) or its first tool call.
    needed = request.in_place_fallback
    launch = await launch_worktree(
        WorktreeRequest(cwd, home=request.home, owner=request.owner, session_id=request.session_id),
        begin=needed,
    )
    if needed or not launch.cwd_known:
        launch.begin()
        try:
            await asyncio.shield(launch.ready)
        except asyncio.CancelledError:
            launch.drop()
            raise
    return launch


def _intro(wt: IsolatedWorktree) -> str:
    from wave_ls.runtime.sandbox import sandbox_confines
    from wave_ls.worktrees.sandboxing import sandbox_prompt

    return sandbox_prompt(wt.path, wt.branch) if sandbox_confines() else ""


def _stopping() -> bool:
    """Whether the running task is being cancelled (a stop, not a timeout)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


async def _stop(running: asyncio.Future[Any]) -> None:
    running.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await running
