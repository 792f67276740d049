"""Git's on-disk layout of worktrees, read and written with plain file I/O.

Both backends share these: git's format (``.git`` files, ``commondir``, the admin dirs
under ``<common dir>/worktrees/``, ``info/exclude``) is stable and documented in
gitrepository-layout(5), and reading it needs no process.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from wave_ls.runtime.git_dirs import common_dir, git_dir_of
from wave_ls.worktrees.model import PathLike

WORKTREES_DIR = Path(".wave") / "worktrees"


def worktree_location(main_repo: PathLike, name: str) -> tuple[Path, str]:
    """Where the worktree called ``name`` lives and its branch (WT-2)."""
    return Path(main_repo) / WORKTREES_DIR / name, f"worktree-{name}"


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
        try:
            gitdir = admin.joinpath("gitdir").read_text(encoding="utf-8").strip()
        except OSError:
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
    data = exclude.read_bytes() if exclude.is_file() else b""
    wanted = pattern.strip().encode("utf-8")
    if any(line.strip() == wanted for line in data.splitlines()):
        return False
    exclude.parent.mkdir(parents=True, exist_ok=True)
    prefix = b"" if not data or data.endswith(b"\n") else b"\n"
    with exclude.open("ab") as handle:
        handle.write(prefix + wanted + b"\n")
    return True


_SHA = re.compile(rb"[0-9a-f]{40}|[0-9a-f]{64}")


def read_head(worktree: PathLike) -> str | None:
    """The commit id of the worktree's HEAD, read from the ref files; None when unsure.

    Follows ``HEAD`` to a branch, then the loose ref or ``packed-refs``. Anything unusual
    (reftable, a symref chain, an unborn branch) gives None and callers ask git instead.
    """
    git_dir = git_dir_of(worktree)
    if git_dir is None:
        return None
    try:
        head = (git_dir / "HEAD").read_bytes().strip()
        if _SHA.fullmatch(head):
            return head.decode("ascii")
        if not head.startswith(b"ref: refs/heads/"):
            return None
        ref = head[len(b"ref: ") :]
        common = common_dir(git_dir)
        loose = common / os.fsdecode(ref)
        if loose.is_file():
            value = loose.read_bytes().strip()
            return value.decode("ascii") if _SHA.fullmatch(value) else None
        packed = common / "packed-refs"
        if packed.is_file():
            for line in packed.read_bytes().splitlines():
                sha, _, name = line.partition(b" ")
                if name == ref and _SHA.fullmatch(sha):
                    return sha.decode("ascii")
    except OSError:
        return None
    return None


def branch_exists(common: Path, branch: str) -> bool | None:
    """Whether ``refs/heads/<branch>`` exists, from the ref files; None when unsure."""
    return ref_exists(common, f"refs/heads/{branch}")


def ref_exists(common: Path, ref: str) -> bool | None:
    """Whether the full ref ``ref`` (``refs/...``) exists, from the ref files; None when
    unsure."""
    if not (common / "refs" / "heads").is_dir():
        return None  # reftable keeps a plain file here
    try:
        if (common / ref).is_file():
            return True
        packed = common / "packed-refs"
        if packed.is_file():
            wanted = b" " + ref.encode("utf-8")
            return any(line.endswith(wanted) for line in packed.read_bytes().splitlines())
    except OSError:
        return None
    return False
