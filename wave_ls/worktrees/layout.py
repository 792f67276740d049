"""Git's on-disk layout of worktrees, read and written with plain file I/O.

Both backends share these: git's format (``.git`` files, ``commondir``, the admin dirs
under ``<common dir>/worktrees/``, ``info/exclude``) is stable and documented in
gitrepository-layout(5), and reading it needs no process. An agent can write its worktree's
``.git`` and its admin dir, so their files are read with ``git_dirs.read_small_file``:
regular files only, never blocking on a FIFO.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import queue
import re
import stat
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from wave_ls.runtime.git_dirs import common_dir, git_dir_of, read_small_file, read_small_text
from wave_ls.worktrees.model import PathLike

log = logging.getLogger(__name__)

WORKTREES_DIR = Path(".wave") / "worktrees"
# The private object stores of isolated agents while they run (``object_store.py``).
STORES_DIR = WORKTREES_DIR / ".objects"


def worktree_location(main_repo: PathLike, name: str) -> tuple[Path, str]:
    """Where the worktree called ``name`` lives and its branch (WT-2)."""
    return Path(main_repo) / WORKTREES_DIR / name, f"worktree-{name}"


def store_location(main_repo: PathLike, name: str) -> Path:
    """Where the private object store of the isolated agent working in ``name`` lives."""
    return Path(main_repo) / STORES_DIR / name


@dataclass(frozen=True)
class AdminEntry:
    """One linked worktree as registered in ``<common dir>/worktrees/<id>``."""

    admin_dir: Path
    path: Path

    @property
    def exists(self) -> bool:
        return (self.path / ".git").exists()

    @property
    def locked(self) -> bool:
        return (self.admin_dir / "locked").exists()


def linked_worktrees(common: Path) -> list[AdminEntry]:
    """Every registered linked worktree, sorted by path (stale ones included)."""
    root = common / "worktrees"
    entries: list[AdminEntry] = []
    if not root.is_dir():
        return entries
    for admin in root.iterdir():
        text = read_small_text(admin / "gitdir")
        gitdir = text.strip() if text is not None else ""
        if not gitdir or "\0" in gitdir:
            continue
        target = Path(gitdir)
        if not target.is_absolute():
            target = (admin / target).resolve()
        entries.append(AdminEntry(admin_dir=admin, path=target.parent))
    return sorted(entries, key=lambda e: str(e.path))


def same_path(a: PathLike, b: PathLike) -> bool:
    return os.path.realpath(a) == os.path.realpath(b)


def admin_name(path: PathLike) -> str:
    """git's admin dir name for a worktree folder: its last component, made ref-safe."""
    name = re.sub(r"[^A-Za-z0-9._-]", "-", Path(path).name).strip(".") or "worktree"
    return name


def make_admin_dir(common: Path, path: PathLike) -> Path:
    """Create a NEW admin dir for ``path`` (``x``, ``x1``, ``x2``... like git).

    dulwich reuses an existing ``worktrees/<basename>`` silently, so a second worktree with
    the same folder name would take over the first one's admin dir; ``mkdir`` without
    ``exist_ok`` makes the choice atomic.
    """
    root = common / "worktrees"
    root.mkdir(exist_ok=True)
    base = admin_name(path)
    counter = 0
    while True:
        candidate = root / (base if counter == 0 else f"{base}{counter}")
        try:
            candidate.mkdir()
        except FileExistsError:
            counter += 1
            continue
        return candidate


def add_exclude(common: Path, pattern: str) -> bool:
    """Append ``pattern`` to ``<common>/info/exclude`` unless a line already says it."""
    exclude = common / "info" / "exclude"
    data = (read_small_file(exclude, 16 * 1024 * 1024) or b"") if exclude.is_file() else b""
    wanted = pattern.strip().encode("utf-8")
    if any(line.strip() == wanted for line in data.splitlines()):
        return False
    exclude.parent.mkdir(parents=True, exist_ok=True)
    prefix = b"" if not data or data.endswith(b"\n") else b"\n"
    with exclude.open("ab") as handle:
        handle.write(prefix + wanted + b"\n")
    return True


_SHA = re.compile(rb"[0-9a-f]{40}|[0-9a-f]{64}")


MAX_PACKED_REFS = 256 * 1024 * 1024


def read_head(worktree: PathLike) -> str | None:
    """The commit id of the worktree's HEAD, read from the ref files; None when unsure.

    Follows ``HEAD`` to a branch, then the loose ref or ``packed-refs``. Anything unusual
    (reftable, a symref chain, an unborn branch) gives None and callers ask git instead.
    """
    git_dir = git_dir_of(worktree)
    if git_dir is None:
        return None
    return read_head_in(git_dir, common_dir(git_dir))


def read_head_in(git_dir: Path, common: Path) -> str | None:
    """``read_head`` for a worktree whose git dir and common dir are known (recorded, not
    read from files its agent could change)."""
    head = read_small_file(git_dir / "HEAD")
    if head is None:
        return None
    head = head.strip()
    if _SHA.fullmatch(head):
        return head.decode("ascii")
    if not head.startswith(b"ref: refs/heads/") or b"\0" in head:
        return None
    ref = head[len(b"ref: ") :]
    loose = read_small_file(common / os.fsdecode(ref))
    if loose is not None:
        value = loose.strip()
        return value.decode("ascii") if _SHA.fullmatch(value) else None
    packed = read_small_file(common / "packed-refs", MAX_PACKED_REFS)
    for line in (packed or b"").splitlines():
        sha, _, name = line.partition(b" ")
        if name == ref and _SHA.fullmatch(sha):
            return sha.decode("ascii")
    return None


def branch_exists(common: Path, branch: str) -> bool | None:
    """Whether ``refs/heads/<branch>`` exists, from the ref files; None when unsure."""
    return ref_exists(common, f"refs/heads/{branch}")


def ref_exists(common: Path, ref: str) -> bool | None:
    """Whether the full ref ``ref`` (``refs/...``) exists, from the ref files; None when
    unsure."""
    if not (common / "refs" / "heads").is_dir():
        return None  # reftable keeps a plain file here
    if (common / ref).is_file():
        return True
    packed = common / "packed-refs"
    if not packed.exists():
        return False
    data = read_small_file(packed, MAX_PACKED_REFS)
    if data is None:
        return None
    wanted = b" " + ref.encode("utf-8")
    return any(line.endswith(wanted) for line in data.splitlines())


def origin_default_branch(common: Path) -> tuple[bool, str | None]:
    """``(known, branch)``: origin's default branch from the ref files (the symref
    ``refs/remotes/origin/HEAD``, else ``main`` or ``master`` under ``refs/remotes/origin``,
    as dulwich's lookup); ``known`` False when the files cannot say (reftable, odd refs)."""
    prefix = "refs/remotes/origin/"
    head = read_small_file(common / prefix / "HEAD")
    if head is not None:
        target = head.strip()
        if not target.startswith(b"ref: " + prefix.encode()) or b"\0" in target:
            return False, None
        return True, target[len(b"ref: " + prefix.encode()) :].decode("utf-8", "replace")
    for name in ("main", "master"):
        found = ref_exists(common, prefix + name)
        if found is None:
            return False, None
        if found:
            return True, name
    return True, None


def not_regular(path: Path) -> bool:
    """``path`` exists and is not a regular file (symlinks followed): reading it could
    block (a FIFO) or never end (a device)."""
    try:
        return not stat.S_ISREG(os.stat(path).st_mode)
    except FileNotFoundError:
        return False
    except (OSError, ValueError):
        return True


def repair_registrations(common: Path, main: Path) -> str | None:
    """Make every registration in ``<common>/worktrees`` readable without blocking: a
    ``HEAD``, ``gitdir`` or ``commondir`` that is not a regular file is rewritten when the
    registration is a wave worktree's (``<main>/.wave/worktrees/<name>``: its values are
    known); for any other, a message saying what to remove (None when all are fine)."""
    root = common / "worktrees"
    try:
        admins = [entry for entry in os.scandir(root) if entry.is_dir(follow_symlinks=False)]
    except OSError:
        return None
    for admin in admins:
        path = Path(admin.path)
        bad = [name for name in ("HEAD", "gitdir", "commondir") if not_regular(path / name)]
        if not bad:
            continue
        worktree = Path(main) / WORKTREES_DIR / admin.name
        if not worktree.is_dir():
            return (
                f"the worktree registration {path} has {', '.join(bad)} that is not a regular "
                f"file, which would hang git; remove it (rm -rf {path}) and try again"
            )
        values = {
            "HEAD": f"ref: refs/heads/worktree-{admin.name}\n",
            "gitdir": f"{worktree / '.git'}\n",
            "commondir": "../..\n",
        }
        for name in bad:
            try:
                write_atomically(path / name, values[name])
            except OSError as error:
                return f"cannot repair {path / name} (not a regular file): {error}"
        log.warning("worktree registration %s: %s was not a regular file; rewritten", path, bad)
    return None


def write_atomically(path: Path, text: str, *, release_later: bool = False) -> None:
    """Replace ``path`` (whatever it is, but a directory) with a regular file holding
    ``text``: written beside it, then renamed over it. ``release_later``: the replaced file
    is freed by a background thread (on a disk that discards freed blocks, freeing one costs
    ~5 ms, which the end of a run should not wait for)."""
    fd, temporary = tempfile.mkstemp(prefix=".wave-", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        kept = _keep_for_later(path) if release_later else None
        os.replace(temporary, path)
    except BaseException:
        if os.path.exists(temporary):
            os.unlink(temporary)
        raise
    if kept is not None:
        _releaser.release(kept)


def _keep_for_later(path: Path) -> Path | None:
    """A second name for the regular file ``path`` (so replacing it frees nothing yet)."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        kept = path.with_name(f".wave-old-{os.urandom(6).hex()}")
        os.link(path, kept)
    except OSError:
        return None
    return kept


class _Releaser:
    """Deletes files in one background thread, in order; what is left at exit is deleted
    then."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._queue: queue.SimpleQueue[Path] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None

    def release(self, path: Path) -> None:
        self._queue.put(path)
        with self._lock:
            if self._thread is None:
                atexit.register(self.drain)
                self._thread = threading.Thread(target=self._run, name="wave-release", daemon=True)
                self._thread.start()

    def _run(self) -> None:
        while True:
            path = self._queue.get()
            with contextlib.suppress(OSError):
                os.unlink(path)

    def drain(self) -> None:
        while True:
            try:
                path = self._queue.get_nowait()
            except queue.Empty:
                return
            with contextlib.suppress(OSError):
                os.unlink(path)


_releaser = _Releaser()
