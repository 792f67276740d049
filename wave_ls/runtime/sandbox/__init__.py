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
"""

from __future__ import annotations

import logging
import os
import shutil
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from wave_ls.runtime.sandbox.bubblewrap import bwrap_argv, bwrap_path
from wave_ls.runtime.sandbox.landlock import LandlockError, LandlockRuleset, abi_version
from wave_ls.runtime.sandbox.spawner import Spawner

log = logging.getLogger(__name__)

MECHANISMS = ("landlock", "bubblewrap")
# Writable in every sandbox: POSIX shared memory and semaphores (Python's multiprocessing,
# so test runners that use worker processes), a tmpfs that holds nothing of a project.
ALWAYS_WRITABLE = (Path("/dev/shm"),)
UNSANDBOXED_NOTE = (
    "Note: commands run WITHOUT a sandbox here ({why}); they can write outside the allowed folders."
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
    are confined); ``advice`` is the line added to a command that failed on a refused write."""

    mechanism: str
    writable: tuple[Path, ...] = ()
    note: str = ""
    preexec: Callable[[], None] | None = None
    # Confines the calling thread instead (Landlock): see ``processes.popen_confined``.
    restrict_thread: Callable[[], None] | None = None
    env: dict[str, str] = field(default_factory=dict)
    advice: str = ""
    _wrap: Callable[[list[str]], list[str]] = field(default=lambda argv: argv, repr=False)
    _close: Callable[[], None] = field(default=lambda: None, repr=False)
    _noted: bool = field(default=False, repr=False)
    _cleanups: list[Callable[[], None]] = field(default_factory=list, repr=False)
    _spawner: Spawner | None = field(default=None, repr=False)

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

    def take_note(self) -> str:
        """``note`` the first time (an unconfined agent is told once, never silently), then
        an empty string."""
        if self._noted or not self.note:
            return ""
        self._noted = True
        return self.note

    def refusal_hint(self, output: str) -> str:
        """``advice`` when ``output`` (of a failed command) shows a refused write, else ""."""
        if not self.confined or not self.advice:
            return ""
        return self.advice if any(marker in output for marker in REFUSAL_MARKERS) else ""

    def close(self) -> None:
        """Release what the confinement holds (the Landlock ruleset's descriptor, the
        private temporary directory); the helper ends when its commands have. Idempotent."""
        if self._spawner is not None:
            self._spawner.close()
        self._close()
        self._close = lambda: None
        while self._cleanups:
            self._cleanups.pop()()


def available() -> tuple[str, str]:
    """The mechanism ``confinement`` would use here and a line about it (for doctor)."""
    forced = os.environ.get("WAVE_SANDBOX", "").strip().lower()
    abi = abi_version()
    bwrap = bwrap_path()
    if forced == "none":
        return "none", "disabled by WAVE_SANDBOX=none"
    if abi >= 1 and forced in ("", "landlock"):
        return "landlock", f"Landlock ABI {abi}"
    if bwrap is not None and forced in ("", "bubblewrap"):
        return "bubblewrap", f"bubblewrap at {bwrap}"
    if forced and forced not in MECHANISMS:
        return "none", f"WAVE_SANDBOX={forced} is not one of landlock, bubblewrap, none"
    missing = "no Landlock in this kernel" if abi < 1 else "Landlock not chosen"
    return "none", f"{missing}, and no working bwrap"


def sandbox_confines() -> bool:
    """Whether ``confinement`` confines here: known before one is made (a prompt that
    announces the sandbox is sent while the worktree it confines to is still made)."""
    return available()[0] != "none"


def confinement(
    writable: Iterable[Path], *, private_tmp: bool = False, advice: str = ""
) -> Confinement:
    """A confinement that lets commands write only beneath ``writable`` (and ``/dev``).

    ``private_tmp`` adds a new temporary directory (``TMPDIR``, ``TMP`` and ``TEMP`` point
    to it), removed by ``close``. ``advice`` becomes ``Confinement.advice``.
    """
    trees = tuple(Path(os.path.realpath(p)) for p in writable)
    trees += tuple(path for path in ALWAYS_WRITABLE if path.is_dir() and path not in trees)
    tmp: Path | None = None
    if private_tmp:
        tmp = Path(os.path.realpath(tempfile.mkdtemp(prefix="wave-sandbox-")))
        trees += (tmp,)
    box = _confinement(trees)
    box.advice = advice
    if tmp is not None:
        box.env.update(TMPDIR=str(tmp), TMP=str(tmp), TEMP=str(tmp))
        box._cleanups.append(lambda: shutil.rmtree(tmp, ignore_errors=True))
    return box


def _confinement(trees: tuple[Path, ...]) -> Confinement:
    mechanism, detail = available()
    if mechanism == "landlock":
        try:
            ruleset = LandlockRuleset(trees)
        except LandlockError as error:
            log.warning("Landlock unusable (%s); trying bubblewrap", error)
            bwrap = bwrap_path()
            if bwrap is None:
                return _none(trees, str(error))
            return _bubblewrap(bwrap, trees)
        return Confinement(
            "landlock",
            trees,
            preexec=ruleset.restrict_self,
            restrict_thread=ruleset.restrict_thread,
            _close=ruleset.close,
        )
    if mechanism == "bubblewrap":
        bwrap = bwrap_path()
        assert bwrap is not None
        return _bubblewrap(bwrap, trees)
    return _none(trees, detail)


def _bubblewrap(bwrap: str, trees: tuple[Path, ...]) -> Confinement:
    return Confinement("bubblewrap", trees, _wrap=lambda argv: bwrap_argv(bwrap, trees, argv))


def _none(trees: tuple[Path, ...], why: str) -> Confinement:
    return Confinement("none", trees, note=UNSANDBOXED_NOTE.format(why=why))


__all__ = [
    "MECHANISMS",
    "REFUSAL_MARKERS",
    "Confinement",
    "available",
    "confinement",
    "sandbox_confines",
]
