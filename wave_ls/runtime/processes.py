"""Every process the agent starts, and how it ends: the one place that spawns and kills.

- ``spawn_bash``: ``bash -c <command>`` for the Bash tool (output to a pipe) and for
  background shells (output appended to a file), non-interactive (``NON_INTERACTIVE_ENV``).
- ``run_process``: a command with a deadline and its output captured (worktree hooks).
- ``stop_group``: SIGTERM a command's process group, then SIGKILL it after a grace period.

Every command leads a new process group (a new session), so that stopping it stops what it
started, and gets stdin from ``/dev/null`` (or its own pipe): the server's stdin is the
editor's LSP pipe, which a command would otherwise read. Each group is reported to one
reaper process per server (``group_reaper``), which kills the groups still alive a moment
after the server ends, however it ends, SIGKILL included.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from wave_ls.runtime.sandbox import Confinement

log = logging.getLogger(__name__)

# Commands must never wait for a person: git opens no editor and asks for no password.
NON_INTERACTIVE_ENV = {"GIT_EDITOR": "true", "GIT_TERMINAL_PROMPT": "0"}
# After SIGTERM, how long a process group gets before SIGKILL.
KILL_GRACE_S = 1.0
OUTPUT_LIMIT = 500

REAPER_SCRIPT = Path(__file__).with_name("group_reaper.py")


class GroupReaper:
    """Starts the reaper on first use and tells it each new process group."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        """Start the reaper now (a server does at start-up; otherwise the first ``watch``
        does), so that its pipe is there from the beginning."""
        with self._lock:
            self._running()

    def watch(self, pgid: int) -> None:
        """Have ``pgid`` killed when this process ends (best effort: never raises)."""
        line = b"%d\n" % pgid
        with self._lock:
            for _attempt in range(2):
                process = self._running()
                if process is None or process.stdin is None:
                    return
                try:
                    os.write(process.stdin.fileno(), line)
                    return
                except OSError:  # the reaper died: start another one
                    with contextlib.suppress(OSError):
                        process.stdin.close()
                    self._process = None

    def _running(self) -> subprocess.Popen[bytes] | None:
        if self._process is None or self._process.poll() is not None:
            if self._process is not None and self._process.stdin is not None:
                with contextlib.suppress(OSError):
                    self._process.stdin.close()
            self._process = self._start()
        return self._process

    def _start(self) -> subprocess.Popen[bytes] | None:
        try:
            return subprocess.Popen(
                [sys.executable, "-I", "-S", str(REAPER_SCRIPT)],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,  # not in the server's group: it must outlive it
            )
        except OSError as error:
            log.warning("cannot start the process reaper: %s", error)
            return None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None


reaper = GroupReaper()


class RunningCommand(Protocol):
    """A started command: ``asyncio.subprocess.Process``, or one a sandbox's helper
    started (``sandbox/spawner.SpawnedProcess``)."""

    @property
    def pid(self) -> int: ...

    @property
    def returncode(self) -> int | None: ...

    async def wait(self) -> int: ...


async def spawn_group(
    *argv: str, sandbox: Confinement | None = None, **options: Any
) -> asyncio.subprocess.Process:
    """``asyncio.create_subprocess_exec`` in a new process group the reaper watches.

    With ``sandbox``, the command is started confined (its argv wrapped, its ``preexec``
    run between fork and exec, its ``env`` added): what it starts inherits the confinement.
    """
    command = list(argv)
    options.setdefault("stdin", subprocess.DEVNULL)  # never the server's: the editor's pipe
    if sandbox is not None:
        command, options = confined(command, sandbox, options)
    process = await asyncio.create_subprocess_exec(*command, start_new_session=True, **options)
    reaper.watch(process.pid)
    return process


def confined(
    argv: list[str], sandbox: Confinement, options: dict[str, Any]
) -> tuple[list[str], dict[str, Any]]:
    """``argv`` and the ``subprocess`` options that start it inside ``sandbox``."""
    options = dict(options)
    if sandbox.preexec is not None:
        options["preexec_fn"] = sandbox.preexec
    if sandbox.env:
        options["env"] = {**(options.get("env") or os.environ), **sandbox.env}
    return sandbox.argv(argv), options


def popen_confined(
    starts: Sequence[tuple[list[str], dict[str, Any]]], sandbox: Confinement
) -> list[subprocess.Popen[Any]]:
    """``subprocess.Popen(argv, **options)`` for each of ``starts``, inside ``sandbox``.

    With Landlock they start from a new thread that confines itself first (the children
    inherit its domain), so Python can use vfork: ``preexec_fn`` would make it fork the
    whole server, which costs ~9 ms per start at its size. The thread ends with the starts,
    but for a lasting sandbox's: its one ``confined_thread`` starts them all.
    """
    # Never the server's stdin (the editor's LSP pipe) unless a caller passes its own.
    starts = [(argv, {"stdin": subprocess.DEVNULL, **options}) for argv, options in starts]
    restrict = sandbox.restrict_thread
    if restrict is None:
        wrapped = [confined(argv, sandbox, options) for argv, options in starts]
        return [subprocess.Popen(argv, **options) for argv, options in wrapped]
    if sandbox.confined_thread is not None:  # one that lasts: its thread confined once
        return sandbox.confined_thread.run(lambda: _start_all(starts, sandbox))
    started: list[subprocess.Popen[Any]] = []
    failure: list[BaseException] = []

    def start_all() -> None:
        try:
            restrict()
            started.extend(_start_all(starts, sandbox))
        except BaseException as error:  # raised again in the caller's thread
            failure.append(error)

    thread = threading.Thread(target=start_all, name="wave-confined-start", daemon=True)
    thread.start()
    thread.join()
    if failure:
        raise failure[0]
    return started


def _start_all(
    starts: Sequence[tuple[list[str], dict[str, Any]]], sandbox: Confinement
) -> list[subprocess.Popen[Any]]:
    """Start each of ``starts`` from this (confined) thread; none is left running when one
    cannot start."""
    started: list[subprocess.Popen[Any]] = []
    try:
        for argv, options in starts:
            options = {**options, "env": {**(options.get("env") or os.environ), **sandbox.env}}
            started.append(subprocess.Popen(sandbox.argv(argv), **options))
    except BaseException:
        for process in started:
            process.kill()
            process.wait()
        raise
    return started


def popen_group(argv: list[str], **options: Any) -> subprocess.Popen[Any]:
    """``subprocess.Popen`` in a new process group the reaper watches (stdin ``/dev/null``
    unless given: the server's own is the editor's LSP pipe)."""
    options.setdefault("stdin", subprocess.DEVNULL)
    process = subprocess.Popen(argv, start_new_session=True, **options)
    reaper.watch(process.pid)
    return process


def signal_group(pgid: int, sig: int) -> None:
    """Send ``sig`` to a process group; a group that is already gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def stop_group(process: RunningCommand, grace: float = KILL_GRACE_S) -> None:
    """SIGTERM the command's process group, then SIGKILL it after ``grace`` seconds; always
    the SIGKILL, so children that ignored SIGTERM or outlived the leader go too."""
    pgid = process.pid  # start_new_session: the command leads its own group
    signal_group(pgid, signal.SIGTERM)
    try:
        await asyncio.wait_for(process.wait(), grace)
    except TimeoutError:
        pass
    finally:
        signal_group(pgid, signal.SIGKILL)


def warm_sandbox(sandbox: Confinement) -> None:
    """Start ``sandbox``'s helper process before its first command needs it (beside a
    worktree's checkout: issue 30); a failure is left for that command to report."""
    spawner = sandbox.spawner(reaper.watch)
    if spawner is not None:
        try:
            spawner.warm()
        except OSError as error:
            log.debug("the sandbox helper could not start early: %s", error)


async def spawn_bash(
    command: str,
    cwd: Path,
    *,
    output: int | IO[Any],
    env: Mapping[str, str] | None = None,
    sandbox: Confinement | None = None,
) -> RunningCommand:
    """``bash -c command`` in a new watched process group, stdin ``/dev/null``, stdout and
    stderr both to ``output`` (a pipe, or a file the output is appended to), with
    ``NON_INTERACTIVE_ENV`` over ``env`` (the server's own environment by default) and git
    kept out of bare repositories it was not pointed at (``bash_environment``); confined by
    ``sandbox`` when given (the agent's: ``docs/sandbox.md``), through its helper process."""
    environment = bash_environment(os.environ if env is None else env)
    spawner = sandbox.spawner(reaper.watch) if sandbox is not None else None
    if spawner is not None and sandbox is not None:
        descriptor = output if isinstance(output, int) else output.fileno()
        return await spawner.spawn(
            ["bash", "-c", command],
            cwd=cwd,
            env={**environment, **sandbox.env},
            output=descriptor,
        )
    return await spawn_group(
        "bash",
        "-c",
        command,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=output,
        stderr=output,
        env=environment,
        sandbox=sandbox,
    )


def bash_environment(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` for an agent's command: non-interactive, and with git's
    ``safe.bareRepository=explicit`` added to the configuration given by the environment.

    A repository can track a bare repository as plain files; its ``config``
    (``diff.external``, ``core.fsmonitor``, ...) would run a program of the repository's
    when a command that reads as read-only (``git -C evil diff``) works in it. Git then works
    in a bare repository only when told to (``--git-dir``, ``GIT_DIR``); linked worktrees
    and ordinary checkouts are not bare.
    """
    environment = {**env, **NON_INTERACTIVE_ENV}
    try:
        count = max(0, int(environment.get("GIT_CONFIG_COUNT", "0")))
    except ValueError:
        count = 0
    environment[f"GIT_CONFIG_KEY_{count}"] = "safe.bareRepository"
    environment[f"GIT_CONFIG_VALUE_{count}"] = "explicit"
    environment["GIT_CONFIG_COUNT"] = str(count + 1)
    return environment


@dataclass
class ProcessRun:
    """How one ``run_process`` ended; ``returncode`` is None when it timed out or never
    started (``error`` says which)."""

    command: str
    returncode: int | None
    stdout: str = ""
    stderr: str = ""
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    def output(self) -> str:
        """What a person needs to see: the error, else stderr, else stdout (shortened)."""
        text = self.error or (self.stderr or self.stdout).strip()
        if not text and self.returncode not in (None, 0):
            text = f"exit code {self.returncode}"
        return text if len(text) <= OUTPUT_LIMIT else text[:OUTPUT_LIMIT] + "..."


def run_process(
    argv: Sequence[str], *, cwd: Path, env: dict[str, str], stdin: str | None, timeout: float
) -> ProcessRun:
    """Run ``argv`` with a deadline, killing its whole process group on timeout; never raises.
    Blocks: async callers use ``asyncio.to_thread``."""
    command = " ".join(argv)
    try:
        proc = popen_group(
            list(argv),
            cwd=cwd,
            env=env,
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            encoding="utf-8",
            errors="replace",
        )
    except OSError as error:
        return ProcessRun(command, None, error=f"cannot start {argv[0]}: {error}")
    try:
        out, err = proc.communicate(stdin, timeout=timeout)
    except subprocess.TimeoutExpired:
        signal_group(proc.pid, signal.SIGKILL)
        try:
            out, err = proc.communicate(timeout=5)
        except subprocess.TimeoutExpired:  # a grandchild left the group and holds the pipes
            proc.kill()
            out, err = "", ""
        return ProcessRun(command, None, out, err, error=f"timed out after {timeout:g} s")
    return ProcessRun(command, proc.returncode, out, err)
