"""Sandboxed commands: a command may write only inside the trees a policy allows.

One small interface over two kernel mechanisms:

- **Landlock** (Linux >= 5.13, unprivileged): the child confines itself between fork and exec;
  inherited by everything it starts (background jobs, double forks included).
- **bubblewrap** (``bwrap``, when installed and allowed to make namespaces): the command runs
  with the file system bound read-only except the allowed trees.

``confinement(writable)`` (``/dev/shm`` is always added) picks the first that works here
(``WAVE_SANDBOX`` may force ``landlock``, ``bubblewrap`` or ``none``); where neither does, the
confinement is ``none`` and its ``note`` says so, for the caller to tell the user once
(never silently). Reads and
execution stay open in every case; ``/dev`` device files (``/dev/null``, terminals) stay
writable.

The network is open unless ``network=False``: then Landlock (ABI >= 4) refuses TCP connect
and bind and a seccomp filter refuses every IP socket, or bubblewrap gives the command a
network namespace of its own. ``Confinement.offline()`` is a sandbox's sibling without
network, ``offline_confinement()`` one that restricts nothing but the network;
``without_network`` picks between them for plan mode and the read-only agents (issue 25).
Where neither mechanism can cut the network, they hand back what they were given, and the
permission policy asks instead of running such commands unasked.
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from wave_ls.runtime.sandbox.bubblewrap import bwrap_argv, bwrap_offline_path, bwrap_path
from wave_ls.runtime.sandbox.confined_thread import ConfinedThread
from wave_ls.runtime.sandbox.landlock import (
    NETWORK_ABI,
    LandlockError,
    LandlockRuleset,
    abi_version,
)
from wave_ls.runtime.sandbox.spawner import Spawner

log = logging.getLogger(__name__)

MECHANISMS = ("landlock", "bubblewrap")
# Writable in every sandbox: POSIX shared memory and semaphores (Python's multiprocessing,
# so test runners that use worker processes), a tmpfs that holds nothing of a project.
ALWAYS_WRITABLE = (Path("/dev/shm"),)
UNSANDBOXED_NOTE = (
    "Note: commands run WITHOUT a sandbox here ({why}); they can write outside the allowed folders."
)


OFFLINE_ADVICE = (
    "Note: this command ran without network access: in plan mode and in the read-only "
    "agents (Explore, Plan) commands cannot reach the network, so the failure above is "
    "probably a connection it refused. Read web pages with WebFetch instead."
)
# What a refused connection or name lookup reads like (curl, git, Python, node, bash).
NETWORK_MARKERS = (
    "Could not resolve",
    "Couldn't connect",
    "Failed to connect",
    "Network is unreachable",
    "Temporary failure in name resolution",
    "Name or service not known",
    "No address associated",
    "socket: Permission denied",
    "connect: Permission denied",
    "Connection refused",
    "getaddrinfo",
    "EAI_AGAIN",
    "ENOTFOUND",
    "ECONNREFUSED",
    "unable to access",
)


# What a refused write reads like in a command's output (Landlock: EACCES, or EXDEV for a
# link across the boundary; bubblewrap: EROFS). git stash hides the error behind its own line.
REFUSAL_MARKERS = (
    "Permission denied",
    "Read-only file system",
    "Invalid cross-device link",
    "Operation not permitted",
    "Cannot save the current status",
)


@dataclass
class Confinement:
    """How to start a confined command: ``argv(...)`` wraps the command line, ``preexec``
    (when set) runs in the child between fork and exec, ``env`` is added to its environment
    (``TMPDIR`` for a private temporary directory). ``mechanism`` is ``landlock``,
    ``bubblewrap`` or ``none``; ``note`` explains an unconfined one (``take_note`` hands it
    out once, with the agent's first command: it also carries, for a fork, how its commands
    are confined); ``advice`` is the line added to a command that failed on a refused write.
    ``network`` is False when its commands cannot reach the network; ``restricts_writes``
    False for one that confines nothing but the network (``offline_confinement``)."""

    mechanism: str
    writable: tuple[Path, ...] = ()
    note: str = ""
    network: bool = True
    restricts_writes: bool = True
    preexec: Callable[[], None] | None = None
    # Confines the calling thread instead (Landlock): see ``processes.popen_confined``.
    restrict_thread: Callable[[], None] | None = None
    # Kept for the whole process (``read_only_confinement``): ``close`` keeps it usable.
    lasting: bool = False
    # With Landlock, a lasting one's commands start from this one thread confined once.
    confined_thread: ConfinedThread | None = field(default=None, repr=False)
    env: dict[str, str] = field(default_factory=dict)
    advice: str = ""
    _wrap: Callable[[list[str]], list[str]] = field(default=lambda argv: argv, repr=False)
    _close: Callable[[], None] = field(default=lambda: None, repr=False)
    _noted: bool = field(default=False, repr=False)
    _cleanups: list[Callable[[], None]] = field(default_factory=list, repr=False)
    _spawner: Spawner | None = field(default=None, repr=False)
    _offline: Confinement | None = field(default=None, repr=False)
    _parent: Confinement | None = field(default=None, repr=False)  # of an offline sibling

    @property
    def confined(self) -> bool:
        return self.mechanism != "none"

    def argv(self, argv: list[str]) -> list[str]:
        return self._wrap(argv)

    def spawner(self, watch: Callable[[int], None] = lambda _pid: None) -> Spawner | None:
        """The helper that starts this sandbox's commands (``spawner.py``: no fork of the
        server per command); None when nothing is confined. ``watch`` gets every pid."""
        if not self.confined:
            return None
        if self._spawner is None:
            self._spawner = Spawner(self.argv, self.preexec, watch)
        return self._spawner

    def commands_running(self) -> bool:
        """Whether a command started in this sandbox (or its offline sibling) still runs;
        None of an unconfined one is known, so it counts as running."""
        if not self.confined:
            return True
        offline = self._offline if self._offline is not self else None
        return any(
            box._spawner is not None and box._spawner.running > 0
            for box in (self, offline)
            if box is not None
        )

    def take_note(self) -> str:
        """``note`` the first time (an unconfined agent is told once, never silently), then
        an empty string. An offline sibling hands out its sandbox's."""
        if self._parent is not None:
            return self._parent.take_note()
        if self._noted or not self.note:
            return ""
        self._noted = True
        return self.note

    def offline(self) -> Confinement:
        """This sandbox without network: the same writable trees and environment, its own
        helper (made at its first command), closed with this one. ``self`` when it has no
        network already, or when no mechanism here can cut it."""
        if not self.network:
            return self
        if self._offline is None:
            trees = self.writable if self.restricts_writes else None
            box = _confinement(trees, network=False)
            if box.network:  # nothing here can cut the network
                box.close()
                self._offline = self
            else:
                box.env, box.advice, box._parent = dict(self.env), self.advice, self
                self._offline = box
        return self._offline

    def refusal_hint(self, output: str) -> str:
        """What to add to a failed command's ``output``: ``OFFLINE_ADVICE`` when it shows a
        refused connection in a sandbox without network, else ``advice`` when it shows a
        refused write, else ""."""
        if not self.confined:
            return ""
        if not self.network and any(marker in output for marker in NETWORK_MARKERS):
            return OFFLINE_ADVICE
        if self.advice and any(marker in output for marker in REFUSAL_MARKERS):
            return self.advice
        return ""

    def close(self) -> None:
        """Release what the confinement holds (the Landlock ruleset's descriptor, the
        private temporary directory); the helper ends when its commands have. Idempotent;
        nothing for a ``lasting`` one."""
        if self.lasting:
            return
        if self._spawner is not None:
            self._spawner.close()
        if self._offline is not None and self._offline is not self:
            self._offline.close()
        self._close()
        self._close = lambda: None
        while self._cleanups:
            self._cleanups.pop()()


def available() -> tuple[str, str]:
    """The mechanism ``confinement`` would use here and a line about it (for doctor)."""
    forced = _forced()
    if forced not in ("none", *MECHANISMS):
        forced = ""  # unset, or a typo: chosen automatically (RuntimeSettings.problems says so)
    abi = abi_version()
    bwrap = bwrap_path()
    if forced == "none":
        return "none", "disabled by WAVE_SANDBOX=none"
    if abi >= 1 and forced in ("", "landlock"):
        return "landlock", f"Landlock ABI {abi}"
    if bwrap is not None and forced in ("", "bubblewrap"):
        return "bubblewrap", f"bubblewrap at {bwrap}"
    missing = "no Landlock in this kernel" if abi < 1 else "Landlock not chosen"
    return "none", f"{missing}, and no working bwrap"


def offline_available() -> tuple[str, str]:
    """The mechanism a sandbox without network would use here, and a line about it."""
    mechanism, detail = available()
    if mechanism == "none":
        return "none", detail
    abi = abi_version()
    if mechanism == "landlock" and abi >= NETWORK_ABI:
        return "landlock", f"Landlock ABI {abi} (TCP) and seccomp (every IP socket)"
    bwrap = bwrap_offline_path()
    if bwrap is not None:
        return "bubblewrap", f"bubblewrap at {bwrap} (a network namespace of its own)"
    if mechanism == "landlock":
        return "none", f"Landlock ABI {abi} < {NETWORK_ABI}, and no bwrap with network namespaces"
    return "none", "bwrap cannot make a network namespace here"


def _forced() -> str:
    return os.environ.get("WAVE_SANDBOX", "").strip().lower()


def sandbox_confines() -> bool:
    """Whether ``confinement`` confines here: known before one is made (a prompt that
    announces the sandbox is sent while the worktree it confines to is still made)."""
    return available()[0] != "none"


def confinement(
    writable: Iterable[Path],
    *,
    private_tmp: bool = False,
    advice: str = "",
    network: bool = True,
) -> Confinement:
    """A confinement that lets commands write only beneath ``writable`` (and ``/dev``).

    ``private_tmp`` adds a new temporary directory (``TMPDIR``, ``TMP`` and ``TEMP`` point
    to it), removed by ``close``. ``advice`` becomes ``Confinement.advice``. ``network=False``:
    its commands cannot reach the network either (``Confinement.network`` says whether that
    worked: it stays True where no mechanism can cut it, and the caller decides).
    """
    trees = tuple(Path(os.path.realpath(p)) for p in writable)
    trees += tuple(path for path in ALWAYS_WRITABLE if path.is_dir() and path not in trees)
    tmp: Path | None = None
    if private_tmp:
        tmp = Path(os.path.realpath(tempfile.mkdtemp(prefix="wave-sandbox-")))
        trees += (tmp,)
    box = _confinement(trees, network=network)
    box.advice = advice
    if tmp is not None:
        box.env.update(TMPDIR=str(tmp), TMP=str(tmp), TEMP=str(tmp))
        box._cleanups.append(lambda: shutil.rmtree(tmp, ignore_errors=True))
    return box


# The process's sandboxes that confine nothing but the network, by WAVE_SANDBOX's value.
_OFFLINE: dict[str, Confinement] = {}


def offline_confinement() -> Confinement:
    """A sandbox whose commands may write anywhere but cannot reach the network: one for
    the whole process (it holds no state of a session), so its helper starts once. Its
    ``network`` is True where no mechanism can cut it."""
    key = _forced()
    box = _OFFLINE.get(key)
    if box is None:
        box = _OFFLINE[key] = _confinement(None, network=False)
    return box


# The process's sandboxes that let their commands write nothing, by WAVE_SANDBOX's value.
_READ_ONLY: dict[str, Confinement] = {}


def read_only_confinement() -> Confinement:
    """A sandbox whose commands may write nothing (but ``/dev``): one for the whole process
    (``lasting``), for our own read-only git in worktrees an agent wrote: no ruleset and no
    confined thread is made per command (``confined_thread.py``, issue 30)."""
    key = _forced()
    box = _READ_ONLY.get(key)
    if box is None:
        box = _READ_ONLY[key] = confinement(())
        box.lasting = True
        if box.restrict_thread is not None:
            box.confined_thread = ConfinedThread(box.restrict_thread)
    return box


def without_network(sandbox: Confinement | None) -> Confinement | None:
    """What the commands of plan mode and of a read-only agent run in: ``sandbox`` (the
    agent's, or none) without network; ``sandbox`` itself where nothing can cut it."""
    box = sandbox.offline() if sandbox is not None else offline_confinement()
    return box if box.confined and not box.network else sandbox


def cuts_network(sandbox: Confinement | None) -> bool:
    """Whether commands run in ``sandbox`` cannot reach the network."""
    return sandbox is not None and sandbox.confined and not sandbox.network


def _confinement(trees: tuple[Path, ...] | None, *, network: bool = True) -> Confinement:
    """``trees=None``: writes are not restricted (only the network, when ``network`` is
    False)."""
    mechanism, detail = available()
    shown = trees if trees is not None else ()
    if mechanism == "landlock":
        try:
            ruleset = LandlockRuleset(trees, network=network)
        except LandlockError as error:
            if network:
                log.warning("Landlock unusable (%s); trying bubblewrap", error)
            bwrap = _bwrap(network)
            if bwrap is None:
                return _none(shown, str(error))
            return _bubblewrap(bwrap, trees, network)
        return Confinement(
            "landlock",
            shown,
            network=network,
            restricts_writes=trees is not None,
            preexec=ruleset.restrict_self,
            restrict_thread=ruleset.restrict_thread,
            _close=ruleset.close,
        )
    if mechanism == "bubblewrap":
        bwrap = _bwrap(network)
        if bwrap is None:
            return _none(shown, "bwrap cannot make a network namespace here")
        return _bubblewrap(bwrap, trees, network)
    return _none(shown, detail)


def _bwrap(network: bool) -> str | None:
    return bwrap_path() if network else bwrap_offline_path()


def _bubblewrap(bwrap: str, trees: tuple[Path, ...] | None, network: bool) -> Confinement:
    return Confinement(
        "bubblewrap",
        trees if trees is not None else (),
        network=network,
        restricts_writes=trees is not None,
        _wrap=lambda argv: bwrap_argv(bwrap, trees, argv, network=network),
    )


def _none(trees: tuple[Path, ...], why: str) -> Confinement:
    return Confinement("none", trees, note=UNSANDBOXED_NOTE.format(why=why))


__all__ = [
    "MECHANISMS",
    "OFFLINE_ADVICE",
    "REFUSAL_MARKERS",
    "Confinement",
    "available",
    "confinement",
    "cuts_network",
    "offline_available",
    "offline_confinement",
    "sandbox_confines",
    "without_network",
]
