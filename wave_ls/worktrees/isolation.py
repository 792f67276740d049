"""The isolation lifecycle: make a worktree for a subagent or a session, and end it.

Rules (SPEC section 6, ``reference/worktree.md``; decisions in ``docs/worktrees.md``):

- Where: ``<main repo>/.wave/worktrees/<name>`` on branch ``worktree-<name>``, the main
  repository resolved from the caller's directory even inside a linked worktree (WT-2,
  WT-10). Names: ``agent-<8 hex>`` for subagents, ``adjective-adjective-noun`` for sessions.
- Base: ``worktree.baseRef`` ``fresh`` (default) = ``origin/<default branch>`` after a quick
  fetch, HEAD with a note when there is no origin; ``head`` = the caller's HEAD.
- How: the ``WorktreeCreate`` hooks first (WT-3); when none succeeds, git; neither -> a
  readable ``IsolationError`` (WT-11), never the parent's directory.
- A new git worktree gets the local files (``include.py``); a reused one (same name exists)
  gets nothing and is always kept.
- End (``finish_isolated_worktree``): nothing changed -> folder and ``worktree-<name>``
  deleted (WT-5); changes or no way to tell -> kept and reported (WT-6, WT-8); a failed
  cleanup is reported, never raised (WT-7). Hook-made ones are removed by the
  ``WorktreeRemove`` hooks only, or kept with a warning. ``finish_isolated_worktree_soon``
  returns once the rule has decided, and removes an unchanged one after (issue 30), in
  one task its caller hands over first; an unchanged one's branch is deleted only at its
  base commit (``WorktreeManager.delete_branch_at``).
  Every end of an isolated run goes through ``finish_worktree_sync``.

Every blocking step runs in a thread; creation finishes even when its caller is cancelled,
and then removes its worktree again if it changed nothing.
"""

from __future__ import annotations

import asyncio
import logging
import math
import os
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypeVar

from wave_ls.runtime import git_command, git_dirs
from wave_ls.runtime.background_work import run_task
from wave_ls.runtime.processes import run_process, warm_sandbox
from wave_ls.runtime.sandbox import Confinement, confinement, sandbox_confines
from wave_ls.worktrees import in_use, layout, registry_file
from wave_ls.worktrees.git_cli import inspect_worktree, run_git
from wave_ls.worktrees.hooks import run_create_hooks, run_remove_hooks
from wave_ls.worktrees.include import LOCAL_SETTINGS, copy_local_files
from wave_ls.worktrees.inspection import WorktreeDirs, registered_dirs
from wave_ls.worktrees.layout import worktree_location
from wave_ls.worktrees.manager import WorktreeManager
from wave_ls.worktrees.model import Changes, IsolationError, WorktreeError
from wave_ls.worktrees.names import agent_name, name_problem, session_name
from wave_ls.worktrees.object_store import (
    PrivateStore,
    close_private_store,
    has_objects,
    import_objects,
    open_private_store,
)
from wave_ls.worktrees.sandboxing import (
    DetachedHead,
    PinnedLinks,
    detach_head,
    isolated_writable,
    pin_links,
    reattach_head,
    restore_links,
)
from wave_ls.worktrees.settings import BaseRef, load_worktree_settings
from wave_ls.worktrees.timing import PhaseClock

log = logging.getLogger(__name__)
T = TypeVar("T")

FETCH_TIMEOUT = 15.0
# One fetch per repository per minute: parallel subagents share it, and an offline
# machine does not wait FETCH_TIMEOUT for every delegation.
FETCH_INTERVAL = 60.0
DETAIL_LINES = 20


@dataclass
class IsolatedWorktree:
    """A worktree an agent works in.

    ``main_repo`` is the main repository (the project folder for a hook-made worktree
    outside git); ``base_commit`` the worktree's HEAD when it was made (None when unknown:
    changes then count as undeterminable); ``work_dir`` the caller's subfolder mapped into
    the worktree (its root when that folder does not exist there): the agent's ``cwd``.
    """

    name: str
    path: Path
    branch: str
    main_repo: Path
    base_commit: str | None
    is_new: bool
    hook_created: bool
    notes: list[str] = field(default_factory=list)
    work_dir: Path | None = None
    base_ref: str = ""
    owner: str = ""
    home: Path | None = None
    session_id: str = ""
    copied: list[str] = field(default_factory=list)
    # Set while a sandboxed agent runs in it: HEAD detached, the branch moved at the end
    # (``worktrees/sandboxing.py``).
    detached: DetachedHead | None = None
    # Its git dirs as registered when it was made (before any agent ran in it): our own
    # git uses these, never its ``.git`` or ``commondir`` (``inspection.py``).
    git: WorktreeDirs | None = None
    # While a sandboxed agent runs: its private object store and the pinned git links.
    store: PrivateStore | None = None
    links: PinnedLinks | None = None
    # Seconds per phase of its creation: prepare, hooks, base, create, include, registry.
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def cwd(self) -> Path:
        """Where the agent starts: ``work_dir`` or the worktree's root."""
        return self.work_dir or self.path

    def to_json(self) -> dict[str, Any]:
        """For tool-block details and protocol messages: its ``WorktreeReport``'s."""
        from wave_ls.worktrees.report import WorktreeReport

        return WorktreeReport.made(self).to_json()


@dataclass
class WorktreeOutcome:
    """How a worktree ended; ``summary`` is the text for the tool result (WT-5, WT-6).

    ``changed_files``/``commits`` are None when they could not be determined.
    """

    kept: bool
    path: Path
    branch: str
    changed_files: int | None
    commits: int | None
    summary: str
    notes: list[str] = field(default_factory=list)
    # Seconds per phase of the end: reattach, status, remove, registry.
    timings: dict[str, float] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "kept": self.kept,
            "path": str(self.path),
            "branch": self.branch,
            "changedFiles": self.changed_files,
            "commits": self.commits,
            "summary": self.summary,
        }


_default_manager: WorktreeManager | None = None


def default_manager() -> WorktreeManager:
    """One shared ``WorktreeManager`` (it holds no state beyond the backend choice)."""
    global _default_manager
    if _default_manager is None:
        _default_manager = WorktreeManager()
    return _default_manager


# ---------------------------------------------------------------------- public API


@dataclass(frozen=True)
class WorktreeRequest:
    """A worktree asked for from ``cwd``: called ``name`` (reused when it exists), else a
    free name from ``generate``; held by ``owner`` (``in_use``) until it ends; ``home`` is
    where user-level settings are read; ``session_id`` goes to the worktree hooks."""

    cwd: Path
    name: str | None = None
    generate: Callable[[], str] = agent_name
    home: Path | None = None
    owner: str = ""
    session_id: str = ""


async def create_isolated_worktree(
    parent_cwd: Path,
    *,
    name: str | None = None,
    home: Path | None = None,
    owner: str = "",
    session_id: str = "",
    manager: WorktreeManager | None = None,
) -> IsolatedWorktree:
    """A worktree for an isolated subagent started from ``parent_cwd`` (WT-1..3, 10, 11)."""
    request = WorktreeRequest(parent_cwd, name, agent_name, home, owner, session_id)
    wm = manager or default_manager()
    return await _create_detached(lambda: create_worktree_sync(request, wm), wm)


async def finish_isolated_worktree(
    wt: IsolatedWorktree,
    *,
    manager: WorktreeManager | None = None,
    sandbox: Confinement | None = None,
) -> WorktreeOutcome:
    """Apply the keep/remove rule at the end of a run (any end), then close ``sandbox``
    (``finish_worktree_sync``); never raises (WT-7)."""
    wm = manager or default_manager()
    # Shielded: a cancelled caller (TaskStop) must not leave a half-removed worktree.
    return await asyncio.shield(asyncio.to_thread(finish_worktree_sync, wt, wm, sandbox))


async def finish_isolated_worktree_soon(
    wt: IsolatedWorktree,
    after: Callable[[asyncio.Future[None]], None],
    *,
    manager: WorktreeManager | None = None,
    sandbox: Confinement | None = None,
    changes: Callable[[], Awaitable[Changes | None]] | None = None,
    begin_later: Callable[[], Awaitable[None]] | None = None,
) -> WorktreeOutcome:
    """``finish_isolated_worktree``, returning as soon as the rule has decided: removing an
    unchanged worktree (git's remove, its branch, its record, then the sandbox's close) goes
    on after, once ``begin_later`` has returned (the caller's next model request is on its
    way: git's processes then do not compete with it). The whole end (``changes``: the
    status already known, if any; the rule; the removal) is one task, given to ``after``
    before anything is awaited: whoever waits for it (the session's turn end, its close)
    sees the worktree ended even when this caller is cancelled meanwhile. A removal that
    fails then is logged; the worktree stays, as ``wave/worktrees/list`` shows."""
    wm = manager or default_manager()
    decided: asyncio.Future[WorktreeOutcome] = asyncio.get_running_loop().create_future()
    # Its caller may be gone (cancelled): nobody else reads a failure.
    decided.add_done_callback(lambda done: done.cancelled() or done.exception())

    async def end() -> None:
        later: list[Callable[[], object]] = []
        try:
            try:
                known = await changes() if changes is not None else None
            except Exception:
                known = None
            outcome = await asyncio.to_thread(finish_worktree_sync, wt, wm, sandbox, later, known)
            decided.set_result(outcome)
        except Exception as error:
            decided.set_exception(error)
            raise
        finally:  # this task cancelled (the loop's end): its caller must not wait forever
            if not decided.done():
                decided.cancel()
        if later:
            if begin_later is not None:
                await begin_later()
            await asyncio.to_thread(_run_later, wt, later)

    ending = run_task(end(), "wave-worktree-end")
    after(ending)
    return await asyncio.shield(decided)


def _run_later(wt: IsolatedWorktree, later: list[Callable[[], object]]) -> None:
    for step in later:
        try:
            done = step()
        except Exception:
            log.exception("ending worktree %s failed", wt.path)
            continue
        if isinstance(done, WorktreeOutcome) and done.kept:
            log.warning("worktree %s: %s", wt.path, done.summary)


async def enter_session_worktree(
    cwd: Path,
    name: str | None = None,
    home: Path | None = None,
    *,
    owner: str = "",
    session_id: str = "",
    manager: WorktreeManager | None = None,
) -> IsolatedWorktree:
    """A worktree for a session (``-w``, ``EnterWorktree``); a generated name when empty."""
    request = WorktreeRequest(cwd, name or None, session_name, home, owner, session_id)
    wm = manager or default_manager()
    return await _create_detached(lambda: create_worktree_sync(request, wm), wm)


async def exit_session_worktree(
    wt: IsolatedWorktree,
    action: Literal["keep", "remove"],
    discard_changes: bool = False,
    *,
    manager: WorktreeManager | None = None,
) -> WorktreeOutcome:
    """Keep or remove a session's worktree (``ExitWorktree``).

    ``remove`` is refused with an ``IsolationError`` naming the changes when there are any
    (or when they cannot be determined) unless ``discard_changes``. A removal that fails
    returns a kept outcome saying so; only the refusal raises.
    """
    wm = manager or default_manager()
    return await asyncio.shield(
        asyncio.to_thread(exit_worktree_sync, wt, action, discard_changes, wm)
    )


async def _create_detached(make: Callable[[], T], manager: WorktreeManager) -> T:
    # The caller, or finish_when_made when it was cancelled, deals with a failure.
    future = run_task(asyncio.to_thread(make), "wave-worktree-create", log_failure=False)
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        finish_when_made(future, manager)
        raise


def finish_when_made(making: asyncio.Future[Any], manager: WorktreeManager) -> None:
    """Nobody waits for ``making`` any more (its caller was cancelled, a run was stopped):
    once it holds a made worktree (with its sandbox or not), that worktree is ended by the
    rule in the background (``finish_worktree_sync``); a plan or a failure made nothing."""

    def end(done: asyncio.Future[Any]) -> None:
        if done.cancelled() or done.exception() is not None:
            return
        made = done.result()
        wt, box = made if isinstance(made, tuple) else (made, None)
        if isinstance(wt, IsolatedWorktree):
            threading.Thread(
                target=finish_worktree_sync, args=(wt, manager, box), daemon=True
            ).start()

    making.add_done_callback(end)


Made = tuple[IsolatedWorktree, Confinement]


class _Making:
    """The checkout of a launched worktree, begun at most once (``WorktreeLaunch.begin``)."""

    def __init__(self, make: Callable[[], IsolatedWorktree], manager: WorktreeManager) -> None:
        self.make = make
        self.manager = manager
        self.ready: asyncio.Future[Made] = asyncio.get_running_loop().create_future()
        self.begun = False

    def begin(self) -> None:
        if self.begun or self.ready.done():
            return
        self.begun = True
        making = run_task(
            asyncio.to_thread(_made_and_confined, self.make, self.manager),
            "wave-worktree-create",
            log_failure=False,
        )
        making.add_done_callback(self._settle)

    def _settle(self, making: asyncio.Task[Made]) -> None:
        if self.ready.done():  # dropped meanwhile: nobody will use it, the rule ends it
            finish_when_made(making, self.manager)
        elif making.cancelled():
            self.ready.cancel()
        elif (error := making.exception()) is not None:
            self.ready.set_exception(error)
        else:
            self.ready.set_result(making.result())


@dataclass(frozen=True)
class WorktreeLaunch:
    """An isolated worktree on its way (``launch_worktree``).

    ``planned`` is the worktree as it will be (name, path, branch); ``ready`` gives it made,
    with the sandbox of its commands (``confine_isolated_worktree``), or raises why it could
    not be made, leaving nothing behind, once ``begin`` has started git's checkout.
    ``cwd_known``: the agent will start at ``planned.cwd`` (else only ``ready``'s worktree
    says where).
    """

    planned: IsolatedWorktree
    ready: asyncio.Future[Made]
    cwd_known: bool
    manager: WorktreeManager
    _making: _Making

    @property
    def begun(self) -> bool:
        return self._making.begun

    def begin(self) -> None:
        """Start git's checkout, the local copies and the sandbox in a thread (once)."""
        self._making.begin()

    def drop(self) -> None:
        """Nobody will use the worktree: one not begun is never made (``ready`` is
        cancelled); one begun is ended by the rule once made (``finish_when_made``)."""
        if self._making.begun:
            finish_when_made(self.ready, self.manager)
        else:
            self.ready.cancel()


async def launch_worktree(
    request: WorktreeRequest, manager: WorktreeManager | None = None, *, begin: bool = True
) -> WorktreeLaunch:
    """``create_isolated_worktree`` and ``confine_isolated_worktree`` in two steps, so the
    agent's first model request need not wait for git's checkout: what can refuse the
    worktree (WT-11, a bad name, no commit, the hooks) is raised here as an
    ``IsolationError``; the checkout, the local copies and the sandbox go on in a thread
    (``WorktreeLaunch.ready``), from now on, or with ``begin=False`` once the caller calls
    ``WorktreeLaunch.begin`` (after its first request is out: the checkout's processes and
    Python then do not compete with that request)."""
    wm = manager or default_manager()
    plan = await _create_detached(lambda: plan_worktree_sync(request, wm), wm)
    if isinstance(plan, IsolatedWorktree):
        planned, cwd_known = plan, True
        make: Callable[[], IsolatedWorktree] = lambda: plan  # noqa: E731
    else:
        planned, cwd_known = plan.planned(), plan.cwd_known
        make = lambda: make_worktree_sync(plan, wm)  # noqa: E731
    making = _Making(make, wm)
    making.ready.add_done_callback(_warm_sandbox)
    launch = WorktreeLaunch(planned, making.ready, cwd_known, wm, making)
    if begin or isinstance(plan, IsolatedWorktree):  # one already in use ends by the rule
        launch.begin()
    return launch


def _warm_sandbox(ready: asyncio.Future[tuple[IsolatedWorktree, Confinement]]) -> None:
    """The sandbox's helper starts as soon as the worktree is made, not at the agent's first
    command (its ~40 ms start was on the path of that command)."""
    if not ready.cancelled() and ready.exception() is None:
        warm_sandbox(ready.result()[1])


def _made_and_confined(
    make: Callable[[], IsolatedWorktree], manager: WorktreeManager
) -> tuple[IsolatedWorktree, Confinement]:
    wt = make()
    try:
        made = wt, confine_isolated_worktree(wt)
    except BaseException:
        finish_worktree_sync(wt, manager)  # nothing ran in it: the rule removes it
        raise
    return made


def confine_isolated_worktree(wt: IsolatedWorktree) -> Confinement:
    """The sandbox of the commands of an agent working in ``wt`` (blocking; close it after
    ``finish_isolated_worktree``): writes only in the worktree, its git admin dir, its own
    object store and a private ``TMPDIR``. When it confines, the worktree's HEAD is detached
    until the end (``worktrees/sandboxing.py``), its objects go to a private store
    (``object_store.py``) and its git links are pinned."""
    dirs = wt.git
    store: PrivateStore | None = None
    if dirs is not None and dirs.linked and not wt.hook_created and sandbox_confines():
        try:
            store = open_private_store(dirs, wt.main_repo, wt.name)
        except OSError as error:  # the shared store, as before: the run still works
            log.warning("worktree %s: no private object store (%s)", wt.path, error)
    box = confinement(
        isolated_writable(wt.path, dirs, store.objects if store else None),
        private_tmp=True,
        advice=(
            f"Note: this command ran in a sandbox that allows writes only inside the worktree "
            f"{wt.path} and $TMPDIR; the failure above is probably a write it refused "
            "elsewhere (see the Sandbox section of your instructions)."
        ),
    )
    if not box.confined:
        if store is not None:
            close_private_store(store)
        return box
    try:
        if dirs is not None:
            wt.links = pin_links(dirs)
            if store is not None:
                wt.store, wt.git = store, dirs.with_store(store.objects)
        if wt.detached is None:
            wt.detached = detach_head(wt.path, dirs)
    except BaseException:
        box.close()
        raise
    return box


# ---------------------------------------------------------------------- create


def create_worktree_sync(request: WorktreeRequest, manager: WorktreeManager) -> IsolatedWorktree:
    """The blocking body of ``create_isolated_worktree``/``enter_session_worktree``.

    The worktree is in use by the request's owner (``in_use``) until it is finished or exited.
    """
    plan = plan_worktree_sync(request, manager)
    return plan if isinstance(plan, IsolatedWorktree) else make_worktree_sync(plan, manager)


@dataclass
class WorktreePlan:
    """A new git worktree decided but not made yet (``plan_worktree_sync``): everything
    that can refuse it has been checked, only git's checkout and the local copies remain."""

    parent: Path
    main: Path
    name: str
    path: Path
    branch: str
    base_ref: str
    notes: list[str]
    made: dict[str, Any]
    clock: PhaseClock

    def planned(self) -> IsolatedWorktree:
        """The worktree as it will be (its base commit is known once it is made); its
        ``cwd`` is the root, which is also where the agent starts when ``cwd_known``."""
        return IsolatedWorktree(
            name=self.name,
            path=self.path,
            branch=self.branch,
            main_repo=self.main,
            base_commit=None,
            is_new=True,
            hook_created=False,
            notes=list(self.notes),
            base_ref=self.base_ref,
            **self.made,
        )

    @property
    def cwd_known(self) -> bool:
        """Whether the agent's directory is known before the checkout: the caller works at
        the top of its work tree (a subfolder is mapped only when the checkout has it)."""
        return _relative_work_dir(self.parent) == Path()


def plan_worktree_sync(
    request: WorktreeRequest, manager: WorktreeManager
) -> IsolatedWorktree | WorktreePlan:
    """The part of creation that decides: a reused or hook-made worktree is returned done
    (in use by its owner); a new git worktree as a plan for ``make_worktree_sync``."""
    clock = PhaseClock()
    try:
        plan = _plan(request, manager, clock)
    except WorktreeError as error:
        raise IsolationError(f"Could not create the worktree: {error}") from error
    if isinstance(plan, IsolatedWorktree):
        return _in_use(plan, clock)
    return plan


def make_worktree_sync(plan: WorktreePlan, manager: WorktreeManager) -> IsolatedWorktree:
    """Make the planned git worktree: checkout, local copies, registry record."""
    try:
        wt = _make(plan, manager)
    except WorktreeError as error:
        raise IsolationError(f"Could not create the worktree: {error}") from error
    return _in_use(wt, plan.clock)


def _in_use(wt: IsolatedWorktree, clock: PhaseClock) -> IsolatedWorktree:
    in_use.hold(wt.path, wt.owner)
    wt.timings = clock.phases
    log.debug("worktree %s set up: %s", wt.name, clock.text())
    return wt


def _plan(
    request: WorktreeRequest, manager: WorktreeManager, clock: PhaseClock
) -> IsolatedWorktree | WorktreePlan:
    parent = Path(request.cwd).expanduser()
    if not parent.is_dir():
        raise IsolationError(f"Cannot create a worktree: {parent} is not a directory")
    parent = parent.resolve()
    main = manager.main_repo(parent)
    project = main or parent
    settings = load_worktree_settings(project, request.home)
    notes = list(settings.warnings)
    name = request.name
    if name:
        problem = name_problem(name)
        if problem:
            raise IsolationError(problem[0].upper() + problem[1:])
    else:
        name = _unique_name(project, main, request.generate)
    path, branch = worktree_location(project, name)
    made: dict[str, Any] = {
        "owner": request.owner,
        "home": request.home,
        "session_id": request.session_id,
    }
    if main is not None:
        _exclude(manager, main)  # before anything appears under .wave/worktrees/

    reused = _reusable(manager, main, project, parent, name, path, made)
    clock.lap("prepare")
    if reused is not None:
        return reused

    failures: list[str] = []
    if settings.create_hooks:
        hooked = run_create_hooks(
            settings.create_hooks,
            name=name,
            branch=branch,
            project_dir=project,
            cwd=parent,
            base_ref=settings.base_ref,
            session_id=request.session_id,
        )
        clock.lap("hooks")
        if hooked.path is not None:
            notes.extend(hooked.failures)
            return _hook_worktree(manager, project, parent, name, hooked.path, notes, made)
        failures = hooked.failures
        notes.extend(f"{failure}; falling back to git" for failure in failures)
    if main is None:
        raise IsolationError(_not_a_repo(parent, failures))

    base_ref, base_notes = choose_base(manager, main, settings.base_ref)
    notes.extend(base_notes)
    if base_ref == "HEAD" and layout.read_head(main) is None and not _has_commit(manager, main):
        raise IsolationError(
            f"Could not create the worktree '{name}' at {path}: the repository has no commit "
            "yet (commit once, then try again)"
        )
    clock.lap("base")
    return WorktreePlan(parent, main, name, path, branch, base_ref, notes, made, clock)


def _has_commit(manager: WorktreeManager, main: Path) -> bool:
    """Whether HEAD names a commit, asking git when the ref files do not say."""
    if manager.git is None:
        return True  # dulwich's create says it readably
    return run_git(main, "rev-parse", "--verify", "--quiet", "HEAD^{commit}").returncode == 0


def _make(plan: WorktreePlan, manager: WorktreeManager) -> IsolatedWorktree:
    main, clock = plan.main, plan.clock
    try:
        with _repo_lock(main):
            info = manager.create(plan.parent, plan.path, plan.branch, plan.base_ref)
            clock.lap("create")
    except WorktreeError as error:
        raise IsolationError(
            f"Could not create the worktree '{plan.name}' at {plan.path}: {error}"
        ) from error
    wt = IsolatedWorktree(
        name=plan.name,
        path=info.path,
        branch=info.branch or "",
        main_repo=main,
        base_commit=info.base_commit,
        is_new=info.is_new,
        hook_created=False,
        notes=list(plan.notes),
        work_dir=map_work_dir(plan.parent, info.path),
        base_ref=plan.base_ref,
        git=registered_dirs(info.path, main),
        **plan.made,
    )
    if info.is_new:
        report = copy_local_files(main, info.path, use_git=manager.git is not None)
        if report.copied_local_settings:
            # So the copy never counts as a change of the worktree (WT-5).
            _exclude(manager, main, LOCAL_SETTINGS)
        wt.copied = report.copied
        wt.notes.extend(report.warnings)
    clock.lap("include")
    _record(main, wt, soon=True)  # bookkeeping: off the launch's path
    clock.lap("registry")
    log.info("worktree %s created at %s (base %s)", plan.name, wt.path, plan.base_ref)
    return wt


_repo_locks: dict[Path, threading.Lock] = {}
_repo_locks_guard = threading.Lock()


def _repo_lock(main: Path) -> threading.Lock:
    """One worktree creation or removal at a time per repository in this process: two
    concurrent ``git worktree add`` on one repository sometimes fail reading each other's
    half-written admin dir (``failed to read .git/worktrees/<x>/commondir``; 1 in 15 with
    plain git), and a removal leaves such a half-deleted one for a moment."""
    with _repo_locks_guard:
        return _repo_locks.setdefault(main, threading.Lock())


def _exclude(manager: WorktreeManager, main: Path, pattern: str | None = None) -> None:
    try:
        if pattern is None:
            manager.ensure_excluded(main)
        else:
            manager.ensure_excluded(main, pattern)
    except (WorktreeError, OSError) as error:
        log.warning("cannot update info/exclude of %s: %s", main, error)


def _unique_name(project: Path, main: Path | None, generate: Callable[[], str]) -> str:
    common = git_dirs.common_dir_of(main) if main is not None else None
    for _ in range(50):
        name = generate()
        path, branch = worktree_location(project, name)
        if os.path.lexists(path) or registry_file.read_record(project, name) is not None:
            continue
        if common is not None and layout.branch_exists(common, branch):
            continue
        return name
    raise IsolationError(f"Could not find a free worktree name under {project}/.wave/worktrees")


def _reusable(
    manager: WorktreeManager,
    main: Path | None,
    project: Path,
    parent: Path,
    name: str,
    path: Path,
    made: dict[str, Any],
) -> IsolatedWorktree | None:
    """The existing worktree called ``name``, if any: reused as it is (never copied into)."""
    record = registry_file.read_record(project, name)
    if record is not None and record.hook_created and Path(record.path).is_dir():
        hook_path = Path(record.path)
        return IsolatedWorktree(
            name=name,
            path=hook_path,
            branch=record.branch,
            main_repo=project,
            base_commit=record.base_commit,
            is_new=False,
            hook_created=True,
            notes=[f"reused the existing worktree {hook_path} (made by the WorktreeCreate hook)"],
            work_dir=map_work_dir(parent, hook_path),
            base_ref=record.base_ref,
            **made,
        )
    if main is None or not os.path.lexists(path):
        return None
    live = next(
        (
            info
            for info in manager.list(main)[1:]
            if layout.same_path(info.path, path) and not info.prunable
        ),
        None,
    )
    if live is None:
        return None
    base = record.base_commit if record is not None and record.base_commit else live.head
    wt = IsolatedWorktree(
        name=name,
        path=Path(os.path.realpath(path)),
        branch=live.branch or "",
        main_repo=main,
        base_commit=base,
        is_new=False,
        hook_created=False,
        notes=[f"reused the existing worktree {path}: nothing copied, and it is always kept"],
        work_dir=map_work_dir(parent, path),
        base_ref=record.base_ref if record is not None else "",
        git=registered_dirs(path, main),
        **made,
    )
    if record is None:
        _record(project, wt)
    return wt


def _hook_worktree(
    manager: WorktreeManager,
    project: Path,
    parent: Path,
    name: str,
    path: Path,
    notes: list[str],
    made: dict[str, Any],
) -> IsolatedWorktree:
    head, branch = git_state(path, manager)
    wt = IsolatedWorktree(
        name=name,
        path=path,
        branch=branch,
        main_repo=project,
        base_commit=head,
        is_new=True,
        hook_created=True,
        notes=[*notes, f"created by the WorktreeCreate hook at {path}"],
        work_dir=map_work_dir(parent, path),
        base_ref="",
        **made,
    )
    _record(project, wt)
    log.info("worktree %s created by a WorktreeCreate hook at %s", name, path)
    return wt


def git_state(path: Path, manager: WorktreeManager) -> tuple[str | None, str]:
    """HEAD commit and branch of ``path`` if it is itself a git work tree, else (None, "")."""
    if not (path / ".git").exists():
        return None, ""
    head = layout.read_head(path)
    if head is None and manager.git is not None:
        done = run_git(path, "rev-parse", "--verify", "--quiet", "HEAD")
        head = (done.stdout.strip() or None) if done.returncode == 0 else None
    git_dir = git_dirs.git_dir_of(path)
    branch = ""
    if git_dir is not None:
        try:
            text = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
        except OSError:
            text = ""
        branch = text.removeprefix("ref: refs/heads/") if text.startswith("ref: ") else ""
    return head, branch


def map_work_dir(parent: Path, worktree: Path) -> Path:
    """``parent``'s place in its own work tree, mapped into ``worktree`` when it exists."""
    relative = _relative_work_dir(parent)
    if relative is None:
        return worktree
    candidate = worktree / relative
    return candidate if candidate.is_dir() else worktree


def _relative_work_dir(parent: Path) -> Path | None:
    """``parent`` relative to the top of its work tree (``Path()`` at the top); None when
    it cannot be placed."""
    dot_git = git_dirs.find_dot_git(parent)
    top = dot_git.parent if dot_git is not None else parent
    try:
        return Path(os.path.realpath(parent)).relative_to(os.path.realpath(top))
    except ValueError:
        return None


def _not_a_repo(parent: Path, failures: list[str]) -> str:
    if failures:
        return (
            f"Cannot run in an isolated worktree: every WorktreeCreate hook failed and {parent} "
            "is not inside a git repository to fall back to.\n" + "\n".join(failures)
        )
    return (
        f"Cannot run in an isolated worktree: {parent} is not inside a git repository and no "
        "WorktreeCreate hook is configured. Run it in a git repository (git init and a first "
        "commit), or configure a WorktreeCreate hook in .wave/settings.json."
    )


def choose_base(manager: WorktreeManager, main: Path, mode: BaseRef) -> tuple[str, list[str]]:
    """The ref a new worktree starts from, and notes about the choice (WT-2)."""
    if mode == "head":
        return "HEAD", []
    try:
        default = manager.default_branch(main)
    except WorktreeError:
        default = None
    if default is None:
        return "HEAD", ["no origin remote: based on HEAD"]
    problem = fetch_default_branch(manager, main, default)
    return f"origin/{default}", [problem] if problem else []


_fetch_locks_guard = threading.Lock()
_fetch_locks: dict[str, threading.Lock] = {}
_last_fetch: dict[str, float] = {}


def fetch_default_branch(manager: WorktreeManager, main: Path, branch: str) -> str | None:
    """``git fetch origin <branch>`` (at most once a minute per repo); a note when it failed."""
    if manager.git is None:
        return None
    key = str(main)
    with _fetch_locks_guard:
        lock = _fetch_locks.setdefault(key, threading.Lock())
    with lock:  # parallel delegations in one repository share one fetch
        if time.monotonic() - _last_fetch.get(key, -math.inf) < FETCH_INTERVAL:
            return None
        _last_fetch[key] = time.monotonic()
        try:
            argv = git_command.git_argv(main, ["fetch", "--quiet", "--no-tags", "origin", branch])
        except git_command.GitCommandError as error:
            return f"could not fetch origin ({error}): based on the last fetched origin/{branch}"
        run = run_process(
            argv,
            cwd=main,
            env=git_command.git_environment(),
            stdin=None,
            timeout=FETCH_TIMEOUT,
        )
    if run.ok:
        return None
    note = f"could not fetch origin ({run.output()}): based on the last fetched origin/{branch}"
    log.warning("%s: %s", main, note)
    return note


def _record(project: Path, wt: IsolatedWorktree, *, soon: bool = False) -> None:
    write = registry_file.write_record_soon if soon else registry_file.write_record
    write(
        project,
        registry_file.WorktreeRecord(
            name=wt.name,
            path=str(wt.path),
            branch=wt.branch,
            base_commit=wt.base_commit,
            base_ref=wt.base_ref,
            owner=wt.owner,
            created_at=registry_file.now_iso(),
            hook_created=wt.hook_created,
        ),
    )


# ---------------------------------------------------------------------- finish / exit


def worktree_changes(wt: IsolatedWorktree, manager: WorktreeManager) -> Changes:
    """What ``wt`` holds beyond its base; undeterminable when anything is unknown (WT-8)."""
    return start_worktree_changes(wt, manager)()


def start_worktree_changes(wt: IsolatedWorktree, manager: WorktreeManager) -> Callable[[], Changes]:
    """``worktree_changes`` begun in the caller's thread (git's processes start here), its
    result when the returned call is made (blocking: from a thread). Never raises."""
    if not wt.path.is_dir():
        return lambda: Changes.unknown(f"{wt.path} no longer exists")
    if not (wt.path / ".git").exists():
        return lambda: Changes.unknown(f"{wt.path} is not a git worktree")
    if not wt.base_commit:
        return lambda: Changes.unknown("its base commit is unknown")
    try:
        finish = manager.start_changes(wt.path, wt.base_commit, dirs=wt.git)
    except Exception as error:  # fail-safe by design: unknown means keep
        problem = Changes.unknown(str(error))
        return lambda: problem

    def result() -> Changes:
        try:
            return finish()
        except Exception as error:
            return Changes.unknown(str(error))

    return result


def finish_worktree_sync(
    wt: IsolatedWorktree,
    manager: WorktreeManager,
    sandbox: Confinement | None = None,
    later: list[Callable[[], object]] | None = None,
    changes: Changes | None = None,
) -> WorktreeOutcome:
    """The blocking body of ``finish_isolated_worktree``: the keep/remove rule, then the
    run's ``sandbox`` closed. Every end of an isolated run comes here (its end, a stop, a
    cancelled creation, a sandbox that could not be made).

    With ``later``, the removal of an unchanged worktree (and the sandbox's close after it)
    is appended there instead of done: the outcome says it is removed, ``later`` removes it
    (``finish_isolated_worktree_soon``). ``changes``: what the worktree holds, when the
    caller knows it already (``Workspace``'s status taken while the last answer came)."""
    clock = PhaseClock()
    try:
        outcome = _finish(wt, manager, clock, later, changes)
    finally:
        # Held until the worktree is gone: an EnterWorktree of its name, or another
        # session's remove, must not take it while it is being removed.
        release = lambda: in_use.release(wt.path, wt.owner)  # noqa: E731
        if later:
            if sandbox is not None:
                later.append(sandbox.close)
            later.append(release)
        else:
            if sandbox is not None:
                sandbox.close()
            release()
    outcome.timings = clock.phases
    log.debug("worktree %s ended: %s", wt.name, clock.text())
    return outcome


def _finish(
    wt: IsolatedWorktree,
    manager: WorktreeManager,
    clock: PhaseClock,
    later: list[Callable[[], object]] | None = None,
    known: Changes | None = None,
) -> WorktreeOutcome:
    # The record was written in the background: on disk when the run ends, kept or not.
    registry_file.settle(registry_file.record_path(wt.main_repo, wt.name))
    if later is not None and known is not None and _removable(wt, known):
        # The status taken while the last answer came found it unchanged: git's links and
        # its HEAD are put back with its removal, after the result (issue 30: 2-3 ms).
        later.append(lambda: _end_and_remove(wt, manager, known))
        return removed_outcome(wt, known)
    try:
        _end_sandboxed_git(wt)  # the run's objects into the parent's store, links restored
        _reattach(wt)  # before counting: the branch must hold the run's commits
        clock.lap("reattach")
        changes = known if known is not None else worktree_changes(wt, manager)
        clock.lap("status")
        if not wt.is_new:
            return kept_outcome(wt, changes, reused=True)
        if changes.has_changes:
            return kept_outcome(wt, changes)
        if wt.hook_created:
            return _remove_by_hook(wt, changes)
        if later is not None:
            later.append(lambda: _remove_by_git(wt, manager, changes, force=False, beside=True))
            return removed_outcome(wt, changes)
        return _remove_by_git(wt, manager, changes, force=False, clock=clock)
    except Exception as error:  # WT-7: the run's result never depends on cleanup
        log.exception("finishing worktree %s failed", wt.path)
        return _cleanup_failed(wt, error, None)


def _removable(wt: IsolatedWorktree, changes: Changes) -> bool:
    """Whether the rule removes ``wt`` by git: made by this run, unchanged, not by a hook."""
    return wt.is_new and changes.determinable and not changes.has_changes and not wt.hook_created


def _end_and_remove(wt: IsolatedWorktree, manager: WorktreeManager, changes: Changes) -> object:
    """The deferred end of an unchanged worktree: git's links and HEAD back, then removed
    (it stays when they cannot be put back: ``wave/worktrees/list`` shows it)."""
    try:
        _end_sandboxed_git(wt)
        _reattach(wt)
    except Exception:
        log.exception("ending worktree %s failed: it stays", wt.path)
        return None
    return _remove_by_git(wt, manager, changes, force=False, beside=True)


def _end_sandboxed_git(wt: IsolatedWorktree) -> None:
    """Bring the private store's objects in (through git) and put git's links back; a store
    whose objects could not be brought in stays in use, and the notes say so."""
    store, wt.store = wt.store, None
    links, wt.links = wt.links, None
    if links is not None:
        wt.notes.extend(restore_links(links))
    if store is None:
        return
    problem = import_objects(store) if has_objects(store) else None
    if problem is not None:
        note = f"{problem}; they stay in {store.root}, which the worktree still uses"
        log.warning("worktree %s: %s", wt.path, note)
        wt.notes.append(note)
        return
    close_private_store(store)
    if wt.git is not None:
        wt.git = wt.git.with_store(None)


def _reattach(wt: IsolatedWorktree) -> None:
    """Undo ``detach_head``: the branch gets the commits made on the detached HEAD."""
    detached, wt.detached = wt.detached, None
    if detached is None:
        return
    problem = reattach_head(detached)
    if problem is not None:
        log.warning("worktree %s: %s", wt.path, problem)
        wt.notes.append(problem)


def exit_worktree_sync(
    wt: IsolatedWorktree,
    action: Literal["keep", "remove"],
    discard_changes: bool,
    manager: WorktreeManager,
) -> WorktreeOutcome:
    """The blocking body of ``exit_session_worktree``."""
    if action not in ("keep", "remove"):
        raise IsolationError(f'action must be "keep" or "remove", got {action!r}')
    registry_file.settle(registry_file.record_path(wt.main_repo, wt.name))
    changes = worktree_changes(wt, manager)
    if action == "keep":
        in_use.release(wt.path, wt.owner)
        return kept_outcome(wt, changes)
    others = [holder for holder in in_use.holders(wt.path) if holder != wt.owner]
    if others:
        raise IsolationError(
            f"Refusing to remove the worktree {wt.path}: it is in use by {', '.join(others)}. "
            'Leave it with action: "keep".'
        )
    if not os.path.lexists(wt.path):
        in_use.release(wt.path, wt.owner)
        return WorktreeOutcome(
            False, wt.path, wt.branch, None, None, f"The worktree {wt.path} no longer exists."
        )
    if changes.has_changes and not discard_changes:
        raise IsolationError(refusal_message(wt, changes, manager))
    try:
        return discard_worktree(wt, changes, manager)
    finally:  # held while it is removed: nobody enters or removes it meanwhile
        in_use.release(wt.path, wt.owner)


def discard_worktree(
    wt: IsolatedWorktree, changes: Changes, manager: WorktreeManager
) -> WorktreeOutcome:
    """Remove ``wt`` with whatever it holds (by its ``WorktreeRemove`` hooks when a hook made
    it; else git, with its ``worktree-<name>`` branch); a failure is a kept outcome."""
    try:
        if wt.hook_created:
            return _remove_by_hook(wt, changes)
        return _remove_by_git(wt, manager, changes, force=True)
    except Exception as error:
        log.exception("removing worktree %s failed", wt.path)
        return _cleanup_failed(wt, error, changes)


def deletable_branch(wt: IsolatedWorktree) -> str | None:
    """Only ``worktree-<name>`` is ever deleted, never another branch found in a worktree."""
    return wt.branch if wt.branch == f"worktree-{wt.name}" else None


def _remove_by_git(
    wt: IsolatedWorktree,
    manager: WorktreeManager,
    changes: Changes,
    *,
    force: bool,
    clock: PhaseClock | None = None,
    beside: bool = False,
) -> WorktreeOutcome:
    """``beside``: the removal runs beside other work (after the result): git's processes,
    which hold no lock of this interpreter, rather than dulwich's Python."""
    clock = clock or PhaseClock()
    branch = deletable_branch(wt)
    by_git = force or changes.has_changes or not changes.determinable
    # An unchanged one's branch goes only while it is where the worktree was made: a commit
    # made on it after the status (a command that outlived the run) is never lost.
    at_base = branch if branch and not force and wt.base_commit else None
    try:
        with _repo_lock(wt.main_repo):  # never while git adds another worktree beside it
            if by_git or (beside and manager.git is not None):
                manager.remove(wt.main_repo, wt.path, None if at_base else branch, force=force)
            else:  # the status just taken is the check git's remove would repeat
                manager.remove_unchanged(wt.main_repo, wt.path, None if at_base else branch)
    except Exception as error:
        log.warning("cannot remove worktree %s: %s", wt.path, error)
        return _cleanup_failed(wt, error, changes)
    kept = _delete_branch_at_base(wt, manager, at_base) if at_base else None
    clock.lap("remove")
    registry_file.delete_record(wt.main_repo, wt.name)
    clock.lap("registry")
    return removed_outcome(wt, changes, kept)


def _delete_branch_at_base(
    wt: IsolatedWorktree, manager: WorktreeManager, branch: str
) -> str | None:
    """Delete ``branch`` if it still points at the worktree's base commit; else why it stays."""
    assert wt.base_commit is not None
    try:
        with _repo_lock(wt.main_repo):
            tip = manager.delete_branch_at(wt.main_repo, branch, wt.base_commit)
    except Exception as error:
        why = f"branch {branch} kept: it could not be deleted ({error})"
    else:
        if tip is None:
            return None
        why = (
            f"branch {branch} kept: it moved to {tip[:12]} after the worktree was found "
            f"unchanged (made at {wt.base_commit[:12]})"
        )
    log.warning("worktree %s: %s", wt.path, why)
    return why


def removed_outcome(
    wt: IsolatedWorktree, changes: Changes, branch_kept: str | None = None
) -> WorktreeOutcome:
    """The outcome (and its summary) of a worktree git removed (WT-5); ``branch_kept``: why
    its branch stays after all."""
    branch = deletable_branch(wt)
    deleted = f"branch {branch} deleted" if branch else f"branch {wt.branch or '(none)'} kept"
    deleted = branch_kept or deleted
    what = "changes discarded" if changes.has_changes else "no changes"
    files, commits = _counts(changes)
    summary = f"Worktree removed: {what} ({wt.path}, {deleted})."
    return WorktreeOutcome(False, wt.path, wt.branch, files, commits, summary)


def _remove_by_hook(wt: IsolatedWorktree, changes: Changes) -> WorktreeOutcome:
    files, commits = _counts(changes)
    settings = load_worktree_settings(wt.main_repo, wt.home)
    if not settings.remove_hooks:
        warning = f"No WorktreeRemove hook configured, hook-based worktree left at: {wt.path}"
        log.warning("%s", warning)
        return WorktreeOutcome(
            True, wt.path, wt.branch, files, commits, f"Worktree kept: {warning}.", [warning]
        )
    failures = run_remove_hooks(
        settings.remove_hooks,
        worktree_path=wt.path,
        project_dir=wt.main_repo,
        session_id=wt.session_id,
    )
    if os.path.lexists(wt.path):
        why = "; ".join(failures) or "the hook exited 0 but did not delete it"
        summary = f"Worktree kept: the WorktreeRemove hook left {wt.path} in place ({why})."
        return WorktreeOutcome(True, wt.path, wt.branch, files, commits, summary, failures)
    registry_file.delete_record(wt.main_repo, wt.name)
    return WorktreeOutcome(
        False,
        wt.path,
        wt.branch,
        files,
        commits,
        f"Worktree removed by the WorktreeRemove hook ({wt.path}).",
        failures,
    )


def _cleanup_failed(
    wt: IsolatedWorktree, error: BaseException, changes: Changes | None
) -> WorktreeOutcome:
    files, commits = _counts(changes) if changes is not None else (None, None)
    how = ""
    if not wt.hook_created and wt.branch:
        how = f" Remove it by hand: git -C {wt.main_repo} worktree remove --force {wt.path}" + (
            f" && git -C {wt.main_repo} branch -D {wt.branch}" if deletable_branch(wt) else ""
        )
    summary = f"Worktree kept: cleanup of {wt.path} failed ({error}).{how}"
    return WorktreeOutcome(True, wt.path, wt.branch, files, commits, summary, [summary])


def _counts(changes: Changes) -> tuple[int | None, int | None]:
    if not changes.determinable:
        return None, None
    return changes.changed_files, changes.commits


def plural(count: int, word: str) -> str:
    return f"{count} {word}" if count == 1 else f"{count} {word}s"


def kept_outcome(
    wt: IsolatedWorktree, changes: Changes, *, reused: bool = False
) -> WorktreeOutcome:
    """The outcome (and its summary) of a worktree that stays (WT-6, WT-8)."""
    where = f"{wt.path} on branch {wt.branch}" if wt.branch else str(wt.path)
    if not changes.determinable:
        text = (
            f"Worktree kept: {where} — its changes could not be determined ({changes.error}), "
            "so it was kept to be safe."
        )
    elif changes.has_changes:
        text = (
            f"Worktree kept: {where} — {plural(changes.changed_files, 'changed file')}, "
            f"{plural(changes.commits, 'commit')}."
        )
    else:
        text = f"Worktree kept: {where} — no changes."
    if reused:
        text += " It existed before this run, so it is never removed automatically."
    if changes.has_changes:
        text += " The changes were NOT applied to the parent directory; review and merge them"
        if wt.branch:
            text += f" yourself (git -C {wt.main_repo} merge {wt.branch})."
        else:
            text += " yourself."
        if changes.determinable and changes.changed_files and wt.branch:
            text += (
                " Uncommitted files must be committed in the worktree first "
                f"(git -C {wt.path} add -A && git -C {wt.path} commit)."
            )
    if changes.has_changes and wt.notes:
        text += "".join(f"\nNote: {note}" for note in wt.notes)
    files, commits = _counts(changes)
    return WorktreeOutcome(True, wt.path, wt.branch, files, commits, text)


def refusal_message(wt: IsolatedWorktree, changes: Changes, manager: WorktreeManager) -> str:
    """Why ``ExitWorktree`` with ``remove`` is refused, naming the files and commits."""
    again = (
        "Ask the user first; to remove it anyway call ExitWorktree again with "
        'discard_changes: true, or keep it with action: "keep".'
    )
    if not changes.determinable:
        return (
            f"Refusing to remove the worktree {wt.path}: its changes cannot be verified "
            f"({changes.error}), so removing it could lose work. {again}"
        )
    lines = [f"Refusing to remove the worktree {wt.path}:"]
    if changes.changed_files:
        lines.append(
            f"You have {plural(changes.changed_files, 'uncommitted file')}. "
            "These will be lost if you remove the worktree."
        )
    if changes.commits:
        lines.append(
            f"You have {plural(changes.commits, 'commit')} on {wt.branch or 'its branch'}. "
            "The branch will be deleted if you remove the worktree."
        )
    lines.extend("  " + line for line in describe_changes(wt, manager))
    lines.append(again)
    return "\n".join(lines)


def describe_changes(wt: IsolatedWorktree, manager: WorktreeManager) -> list[str]:
    """``git status`` entries and commit subjects (at most 20 each); empty without git."""
    if manager.git is None or not wt.base_commit:
        return []
    found: list[str] = []
    try:
        status, log_ = inspect_worktree(
            wt.path,
            ("status", "--porcelain", "--untracked-files=all", "--no-renames"),
            ("log", "--format=%h %s", f"{wt.base_commit}..HEAD"),
            dirs=wt.git,
        )
    except WorktreeError:
        return []
    if status.returncode == 0:
        found += _capped(status.stdout.splitlines(), "files")
    if log_.returncode == 0:
        found += _capped([f"commit {line}" for line in log_.stdout.splitlines()], "commits")
    return found


def _capped(lines: list[str], what: str) -> list[str]:
    if len(lines) <= DETAIL_LINES:
        return lines
    return [*lines[:DETAIL_LINES], f"... and {len(lines) - DETAIL_LINES} more {what}"]
