"""An isolated agent's own object store: it never writes the parent's.

A sandboxed agent that could write ``<common>/objects`` could delete the parent's objects or
replace one (git does not check a loose object's hash when it reads it: the parent's
``git checkout`` would write the agent's version of a committed file). So while it runs, its
worktree reads and writes objects through a store of its own:

- ``<main>/.wave/worktrees/.objects/<name>/`` is a common dir of its own (taken from a pool
  of free ones when there is one: renaming is cheap, making and deleting folders is not):
  ``objects/`` (its store, the only part its sandbox may write, with ``info/alternates``
  naming the parent's store, read-only) and symbolic links to everything else of the real
  common dir (refs, config, packed-refs...: read-only in the sandbox, as before). The
  worktree's admin dir's ``commondir`` names it for the run (``open_private_store``); git's
  own layout, so every git command of the agent (and nothing else: unlike
  ``GIT_OBJECT_DIRECTORY``, repositories its tests make in ``$TMPDIR`` keep their own
  stores) uses it.
- At the end, before the branch is moved, its objects enter the parent's store through git,
  which computes every object's name from its content: ``git pack-objects`` of the loose
  objects piped into ``git unpack-objects --strict`` (``index-pack --stdin --strict`` for
  many, and for packs it made), run on the real common dir (``import_objects``). A forged
  loose object is stored under its true name, or refused; the parent's objects are never
  overwritten. Then ``commondir`` is restored and the store freed (``close_private_store``).
  When the objects cannot be brought in, the store and the ``commondir`` stay: the worktree
  keeps working, and the note says so.

The store's folder lies in the parent's tree, which the sandbox cannot write, so the agent
cannot swap it for a link; links it makes inside are never followed by us (we only read the
store with git, and delete it without following links).
"""

from __future__ import annotations

import logging
import os
import re
import shutil
import stat
import subprocess
import threading
from dataclasses import dataclass
from pathlib import Path

from wave_ls.runtime import git_command, git_dirs
from wave_ls.runtime.git_command import GitCommandError
from wave_ls.worktrees import layout
from wave_ls.worktrees.inspection import WorktreeDirs, object_store_problem

log = logging.getLogger(__name__)

# The common dir entries git shares between worktrees (path.c's common_list) and those
# tools keep there (lfs, modules): linked into the private common dir, present or not.
SHARED_ENTRIES = (
    "branches",
    "common",
    "config",
    "description",
    "hooks",
    "info",
    "lfs",
    "logs",
    "lost-found",
    "modules",
    "packed-refs",
    "refs",
    "remotes",
    "rr-cache",
    "shallow",
    "svn",
    "worktrees",
)
# git's own choice (transfer.unpackLimit): fewer objects are stored loose, more as a pack.
UNPACK_LIMIT = 100
IMPORT_TIMEOUT = 120.0
_LOOSE_DIR = re.compile(r"[0-9a-f]{2}")
_LOOSE_FILE = re.compile(r"[0-9a-f]{38}|[0-9a-f]{62}")


@dataclass(frozen=True)
class PrivateStore:
    """The private common dir ``root`` of the worktree whose admin dir is ``admin_dir``;
    ``commondir`` is what that admin dir's ``commondir`` held before (git's own value)."""

    root: Path
    admin_dir: Path
    common: Path
    commondir: bytes

    @property
    def objects(self) -> Path:
        return self.root / "objects"


def open_private_store(dirs: WorktreeDirs, main: Path, name: str) -> PrivateStore:
    """Make (or reuse, after a run that never ended) the private common dir of the linked
    worktree ``dirs`` called ``name`` and point its ``commondir`` at it. Blocking, ~0.5 ms.
    ``OSError`` when it cannot be made (nothing is changed then)."""
    root = layout.store_location(main, name)
    original = git_dirs.read_small_file(dirs.git_dir / "commondir")
    if original is None:
        raise OSError(f"{dirs.git_dir / 'commondir'} is not a regular file")
    pointed = Path(os.path.realpath(dirs.git_dir / original.decode("utf-8", "replace").strip()))
    if pointed != Path(os.path.realpath(dirs.common)):
        original = b"../..\n"  # a run that never ended left it at the store: git's own value
    if not os.path.lexists(root):
        _claim_free_store(root)
    root.mkdir(parents=True, exist_ok=True)
    (root / "objects" / "info").mkdir(parents=True, exist_ok=True)
    problem = object_store_problem(root / "objects", root)
    if problem is not None:
        raise OSError(problem)
    alternates = root / "objects" / "info" / "alternates"
    wanted = f"{dirs.common / 'objects'}\n"
    if git_dirs.read_small_file(alternates) != wanted.encode():  # a free store has it
        layout.write_atomically(alternates, wanted)
    for entry in SHARED_ENTRIES:
        link = root / entry
        if not os.path.lexists(link):
            os.symlink(dirs.common / entry, link)
    store = PrivateStore(root, dirs.git_dir, dirs.common, original)
    layout.write_atomically(dirs.git_dir / "commondir", f"{root}\n", release_later=True)
    log.debug("worktree %s: private object store %s", dirs.worktree, root)
    return store


# Deleting a folder costs ~4 ms on this kind of disk (renaming one, microseconds): a store
# left as it was made goes back to a pool of free ones beside the others, for the next run.
_FREE_PREFIX = ".free-"


def _claim_free_store(root: Path) -> bool:
    """Rename a free store of this repository to ``root`` (another process may take the
    same one first: the rename then fails and the next is tried)."""
    try:
        free = [e.path for e in os.scandir(root.parent) if e.name.startswith(_FREE_PREFIX)]
    except OSError:
        return False
    for path in free:
        try:
            os.rename(path, root)
        except OSError:
            continue
        return True
    return False


def _as_made(store: PrivateStore) -> bool:
    """Whether the store holds exactly what ``open_private_store`` put there (so it can
    serve another run): nothing of the agent's, not even a file in ``objects/info``."""
    try:
        top = {e.name: e for e in os.scandir(store.root)}
        objects = {e.name for e in os.scandir(store.objects)}
        info = {e.name for e in os.scandir(store.objects / "info")}
    except OSError:
        return False
    if set(top) != {*SHARED_ENTRIES, "objects"} or objects != {"info"} or info != {"alternates"}:
        return False
    for entry in SHARED_ENTRIES:
        if not top[entry].is_symlink() or os.readlink(top[entry].path) != str(store.common / entry):
            return False
    expected = f"{store.common / 'objects'}\n".encode()
    return git_dirs.read_small_file(store.objects / "info" / "alternates") == expected


def _loose_objects(objects: Path) -> list[str]:
    names: list[str] = []
    try:
        folders = [e for e in os.scandir(objects) if _LOOSE_DIR.fullmatch(e.name)]
    except OSError:
        return names
    for folder in folders:
        if not folder.is_dir(follow_symlinks=False):
            continue  # a link the agent made: not followed
        try:
            names += [
                folder.name + entry.name
                for entry in os.scandir(folder.path)
                if _LOOSE_FILE.fullmatch(entry.name) and entry.is_file(follow_symlinks=False)
            ]
        except OSError:
            continue
    return names


def _packs(objects: Path) -> list[Path]:
    pack_dir = objects / "pack"
    if not pack_dir.is_dir() or pack_dir.is_symlink():
        return []
    return sorted(
        Path(e.path)
        for e in os.scandir(pack_dir)
        if e.name.endswith(".pack") and e.is_file(follow_symlinks=False)
    )


def has_objects(store: PrivateStore) -> bool:
    """Whether the agent wrote any object (the usual run that changed nothing did not)."""
    return bool(_loose_objects(store.objects) or _packs(store.objects))


def import_objects(store: PrivateStore) -> str | None:
    """Bring the store's objects into the parent's, through git (hashes computed, nothing
    overwritten). None when done (or nothing to do), else why not."""
    problem = object_store_problem(store.objects, store.root)
    if problem is not None:
        return f"the agent's object store was refused ({problem})"
    loose, packs = _loose_objects(store.objects), _packs(store.objects)
    if not loose and not packs:
        return None
    parent = {"GIT_DIR": str(store.common)}
    try:
        if loose:
            done = _pipe_loose(store, loose, parent)
            if done is not None:
                return done
        for pack in packs:
            fd = os.open(pack, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | os.O_CLOEXEC)
            try:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    return f"{pack.name} is not a regular file"
                procs = git_command.start_git(
                    store.common,
                    [("index-pack", "--stdin", "--strict")],
                    env=parent,
                    text=False,
                    stdin=fd,
                )
            finally:
                os.close(fd)
            [indexed] = git_command.finish_git(procs, [("index-pack",)], IMPORT_TIMEOUT)
            if indexed.returncode != 0:
                return f"git index-pack refused {pack.name}: {_text(indexed.stderr)}"
    except (GitCommandError, OSError) as error:
        return f"its objects could not be brought into the repository ({error})"
    log.debug("imported %d loose objects and %d packs from %s", len(loose), len(packs), store.root)
    return None


def _pipe_loose(store: PrivateStore, names: list[str], parent: dict[str, str]) -> str | None:
    """``git pack-objects --stdout`` (reading the store alone) into ``unpack-objects`` or
    ``index-pack --stdin`` (writing the parent's store)."""
    private = {**parent, "GIT_OBJECT_DIRECTORY": str(store.objects)}
    [pack] = git_command.start_git(
        store.common,
        [("pack-objects", "--stdout", "-q")],
        env=private,
        text=False,
        stdin=subprocess.PIPE,
    )
    into = (
        ("unpack-objects", "-q", "--strict")
        if len(names) < UNPACK_LIMIT
        else ("index-pack", "--stdin", "--strict")
    )
    assert pack.stdout is not None
    try:
        [unpack] = git_command.start_git(
            store.common, [into], env=parent, text=False, stdin=pack.stdout.fileno()
        )
    except BaseException:
        git_command.kill_git(pack)
        raise
    pack.stdout.close()
    pack.stdout = None  # the pack goes to unpack's stdin, not to us
    packed, unpacked = git_command.finish_git(
        [pack, unpack],
        [("pack-objects",), into],
        IMPORT_TIMEOUT,
        inputs=["\n".join(names).encode() + b"\n", None],
    )
    if packed.returncode != 0:
        return f"git pack-objects failed on the agent's objects: {_text(packed.stderr)}"
    if unpacked.returncode != 0:
        return f"git {into[0]} refused the agent's objects: {_text(unpacked.stderr)}"
    return None


def _text(data: bytes | str | None) -> str:
    if isinstance(data, bytes):
        data = data.decode("utf-8", "replace")
    return (data or "").strip()[:500]


def close_private_store(store: PrivateStore) -> None:
    """Point the admin dir's ``commondir`` back at the real common dir (git's own value)
    and put the private one back in the pool when it is as made, else delete it in the
    background (deleting folders costs ~4 ms each here, and nothing waits for it). Never
    raises (logged)."""
    try:
        layout.write_atomically(
            store.admin_dir / "commondir",
            store.commondir.decode("utf-8", "surrogateescape"),
            release_later=True,
        )
    except OSError as error:
        log.warning("cannot restore %s: %s", store.admin_dir / "commondir", error)
        return
    free = _as_made(store)
    # Renamed first: a new store of the same name (a reused worktree) is never deleted.
    name = f"{_FREE_PREFIX}{os.urandom(6).hex()}" if free else f".{os.urandom(6).hex()}.deleted"
    tomb = store.root.with_name(name)
    try:
        os.rename(store.root, tomb)
    except OSError as error:
        log.warning("cannot delete %s: %s", store.root, error)
        return
    if not free:
        threading.Thread(
            target=_delete, args=(tomb,), name="wave-store-delete", daemon=True
        ).start()


def _delete(root: Path) -> None:
    shutil.rmtree(root, ignore_errors=True)
