"""Our own git in a worktree an agent wrote: which git dirs, and a scratch git dir.

An agent can rewrite its worktree's ``.git`` file and its admin dir's ``commondir`` (both
lie in trees its sandbox may write) to point our git at a git dir it made, whose config
runs programs and whose object store is a symbolic link into ``$HOME``. So:

- the git dirs of a worktree come from the parent's side (``registered_dirs``): a worktree
  at ``<main>/.wave/worktrees/<name>`` belongs to ``<main>``, whose common dir is read from
  ``<main>/.git`` (which the agent cannot write), and its admin dir is the registration in
  ``<common>/worktrees/`` that names it. ``WorktreeDirs`` made at creation are kept by the
  caller and passed again; only worktrees elsewhere (made by a hook) fall back to their
  ``.git`` (``discovered_dirs``);
- an object store that is, or lies below, a symbolic link is refused (``object_store_problem``);
- git then runs with ``GIT_DIR`` set to a scratch git dir (``scratch_git_dir``): its ``HEAD``
  and ``index`` copied from the admin dir (regular files only, so a FIFO never blocks) and
  its ``commondir`` ours; git never reads the worktree's ``.git`` nor the admin dir's
  ``commondir`` (git's refs code reads that file even when ``GIT_COMMON_DIR`` is set).
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import shutil
import stat
import tempfile
import threading
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path

from wave_ls.runtime import git_dirs
from wave_ls.worktrees import layout
from wave_ls.worktrees.model import PathLike, WorktreeError

_HEAD = re.compile(rb"([0-9a-f]{40}|[0-9a-f]{64})|ref: refs/[^\0\s]+")
MAX_INDEX_BYTES = 1024 * 1024 * 1024


@dataclass(frozen=True)
class WorktreeDirs:
    """Where a work tree's git data lives, as recorded from the parent's side.

    ``git_dir`` is a linked worktree's admin dir (or a repository's own git dir), ``common``
    the shared one (objects, refs, config); ``store`` the objects dir of the isolated agent's
    private store while it runs (``object_store.py``), read as an alternate.
    """

    worktree: Path
    git_dir: Path
    common: Path
    store: Path | None = None

    @property
    def linked(self) -> bool:
        return self.git_dir != self.common

    def with_store(self, store: Path | None) -> WorktreeDirs:
        return replace(self, store=store)


def _real_dir(path: Path) -> bool:
    try:
        return stat.S_ISDIR(os.lstat(path).st_mode)
    except (OSError, ValueError):
        return False


def registered_dirs(worktree: PathLike, main: PathLike | None = None) -> WorktreeDirs | None:
    """The dirs of the linked worktree ``worktree`` of ``main`` (by default the repository
    whose ``.wave/worktrees/`` holds it), from the parent's side; None when it is not one."""
    path = Path(os.path.realpath(worktree))
    if main is None:
        if path.parent.name != layout.WORKTREES_DIR.name or path.parent.parent.name != ".wave":
            return None
        main = path.parent.parent.parent
    main_git = git_dirs.git_dir_of(main)
    if main_git is None:
        return None
    common = git_dirs.common_dir(main_git)
    if not layout.same_path(git_dirs.main_repo_of(main) or main, main):
        return None  # ``main`` is itself a linked worktree: its own ``.git`` may be the agent's
    matches = [
        entry
        for entry in layout.linked_worktrees(common)
        if layout.same_path(entry.path, path) and _real_dir(entry.admin_dir)
    ]
    if len(matches) > 1:  # an admin dir whose ``gitdir`` was rewritten: take git's own name
        matches = [entry for entry in matches if entry.admin_dir.name == path.name]
    if len(matches) != 1:
        return None
    store = layout.store_location(main, path.name) / "objects"
    return WorktreeDirs(path, matches[0].admin_dir, common, store if _real_dir(store) else None)


def discovered_dirs(worktree: PathLike) -> WorktreeDirs | None:
    """The dirs named by the work tree's own ``.git`` (a hook-made worktree elsewhere)."""
    git_dir = git_dirs.git_dir_of(worktree)
    if git_dir is None:
        return None
    path = Path(os.path.realpath(worktree))
    return WorktreeDirs(path, Path(os.path.realpath(git_dir)), git_dirs.common_dir(git_dir))


def dirs_for(worktree: PathLike, dirs: WorktreeDirs | None = None) -> WorktreeDirs | None:
    """``dirs`` when given (recorded), else ``registered_dirs``, else ``discovered_dirs``."""
    return dirs or registered_dirs(worktree) or discovered_dirs(worktree)


def object_store_problem(objects: Path, owner: Path) -> str | None:
    """Why ``objects`` (which belongs in ``owner``) must not be used as an object store: it
    is a symbolic link, not a directory, or a folder on its way resolves elsewhere."""
    if not _real_dir(objects):
        return f"{objects} is not a directory (a symbolic link?)"
    if os.path.realpath(objects) != os.path.join(os.path.realpath(owner), objects.name):
        return f"{objects} resolves outside {owner} (a symbolic link on its way)"
    return None


def check_dirs(dirs: WorktreeDirs) -> None:
    """``WorktreeError`` when one of ``dirs``' object stores is refused."""
    problem = object_store_problem(dirs.common / "objects", dirs.common)
    if problem is None and dirs.store is not None:
        problem = object_store_problem(dirs.store, dirs.store.parent)
    if problem is not None:
        raise WorktreeError(f"refusing the object store of {dirs.worktree}: {problem}")


def read_head_file(git_dir: Path) -> bytes:
    """The ``HEAD`` of ``git_dir`` (a commit id or ``ref: refs/...``); ``WorktreeError`` when
    it is not a regular file of that form (a FIFO, a device, garbage)."""
    data = git_dirs.read_small_file(git_dir / "HEAD", 4096)
    if data is None or not _HEAD.fullmatch(data.strip()):
        raise WorktreeError(f"{git_dir / 'HEAD'} is not a regular file naming a commit or ref")
    return data.strip() + b"\n"


def copy_regular_file(
    source: Path, target: Path, limit: int, *, unless: tuple[int, ...] | None = None
) -> tuple[int, ...] | None:
    """Copy ``source`` to ``target`` when it is a regular file of at most ``limit`` bytes
    (opened without blocking): the source's identity (device, inode, size, times), None
    when it is missing; nothing is copied when that identity is ``unless`` (the target
    already holds it). ``WorktreeError`` for anything else (a FIFO, a device, too big)."""
    try:
        fd = os.open(source, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except FileNotFoundError:
        return None
    except OSError as error:
        raise WorktreeError(f"cannot read {source}: {error}") from error
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode) or info.st_size > limit:
            raise WorktreeError(f"{source} is not a regular file of at most {limit} bytes")
        identity = _identity(info)
        if identity == unless:
            return identity
        with open(target, "wb") as out:
            shutil.copyfileobj(handle, out, 1 << 20)
    # Its time too: git trusts an entry's stat data only when older than the index file
    # ("racy git"); a newer copy would hide a same-size change made in the same second.
    os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns))
    return identity


@dataclass
class _Scratch:
    """A reusable scratch git dir and what it holds: the ``HEAD`` and ``commondir`` written
    there, and the worktree's index its ``index`` was copied from (that file's identity,
    and the copy's own, so a changed one on either side is copied again)."""

    path: Path
    head: bytes = b""
    common: str = ""
    source: tuple[int, ...] = ()
    copy: tuple[int, ...] = ()


def _identity(info: os.stat_result) -> tuple[int, ...]:
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


_KEPT = {"HEAD", "commondir", "index"}


class _ScratchPool:
    """Scratch git dirs for read-only commands, reused: making and deleting a folder costs
    ~3 ms on a journaling disk, more than the status it serves, and one that served the
    same worktree last keeps its files (only what changed is written again). Each is used
    by one command set at a time; all are deleted when the process ends."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._free: dict[Path, list[_Scratch]] = {}
        self._base: Path | None = None

    def take(self, git_dir: Path) -> _Scratch:
        """A free scratch dir, the one that last served ``git_dir`` when there is one."""
        with self._lock:
            if self._base is None or not self._base.is_dir():
                self._base = Path(tempfile.mkdtemp(prefix="wave-git-"))
                self._free.clear()
                atexit.register(shutil.rmtree, self._base, True)
            for key in [git_dir, *self._free]:
                free = self._free.pop(key, [])
                while free:
                    scratch = free.pop()
                    if free:
                        self._free[key] = free
                    if scratch.path.is_dir():
                        return scratch if key == git_dir else _Scratch(scratch.path)
            return _Scratch(Path(tempfile.mkdtemp(dir=self._base)))

    def give_back(self, git_dir: Path, scratch: _Scratch) -> None:
        with self._lock:
            self._free.setdefault(git_dir, []).append(scratch)


_pool = _ScratchPool()


def _tidied(scratch: _Scratch) -> _Scratch:
    """``scratch`` without what an earlier command left beside our files (a lock)."""
    for entry in os.scandir(scratch.path):
        if entry.name in _KEPT and entry.is_file(follow_symlinks=False):
            continue
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            os.unlink(entry.path)
    return scratch


def _refresh(scratch: _Scratch, head: bytes, dirs: WorktreeDirs) -> None:
    """Write into ``scratch`` the ``HEAD``, ``commondir`` and index of ``dirs`` that it does
    not hold yet (all of them into a new one)."""
    path = scratch.path
    if scratch.head != head or not (path / "HEAD").is_file():
        (path / "HEAD").write_bytes(head)
        scratch.head = head
    if scratch.common != str(dirs.common) or not (path / "commondir").is_file():
        (path / "commondir").write_text(f"{dirs.common}\n", encoding="utf-8")
        scratch.common = str(dirs.common)
    index = path / "index"
    try:
        copy = _identity(os.lstat(index))
    except FileNotFoundError:
        copy = ()
    source = copy_regular_file(
        dirs.git_dir / "index",
        index,
        MAX_INDEX_BYTES,
        unless=scratch.source if copy == scratch.copy else None,
    )
    if source is None:  # the worktree has no index (yet)
        index.unlink(missing_ok=True)
        scratch.source = scratch.copy = ()
    else:
        scratch.source, scratch.copy = source, _identity(os.lstat(index))


@contextlib.contextmanager
def scratch_git_dir(
    dirs: WorktreeDirs, *, objects: bool = False
) -> Iterator[tuple[Path, dict[str, str]]]:
    """A temporary git dir for ``dirs``' work tree and the environment that points git at it:
    ``(scratch, env)``. ``HEAD`` and ``index`` are copies (the worktree's own are never
    touched); with ``objects``, new objects go to ``<scratch>/objects`` (the repository's
    store and the private one are read as alternates), so git writes only in ``scratch``.
    Without ``objects`` the folder is a reused one: for commands that write nothing."""
    check_dirs(dirs)
    head = read_head_file(dirs.git_dir)
    pooled = None if objects else _tidied(_pool.take(dirs.git_dir))
    held = pooled or _Scratch(Path(tempfile.mkdtemp(prefix="wave-git-")))
    scratch = held.path
    try:
        _refresh(held, head, dirs)
        env = {
            "GIT_DIR": str(scratch),
            "GIT_COMMON_DIR": str(dirs.common),
            "GIT_WORK_TREE": str(dirs.worktree),
        }
        alternates = [dirs.common / "objects"] if objects else []
        if dirs.store is not None:
            alternates.append(dirs.store)
        if objects:
            (scratch / "objects").mkdir()
            env["GIT_OBJECT_DIRECTORY"] = str(scratch / "objects")
        if alternates:
            env["GIT_ALTERNATE_OBJECT_DIRECTORIES"] = os.pathsep.join(map(str, alternates))
        yield scratch, env
    finally:
        if pooled is not None:
            _pool.give_back(dirs.git_dir, pooled)
        else:
            shutil.rmtree(scratch, ignore_errors=True)
