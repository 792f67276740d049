"""Where a git repository keeps its data, read from the files git writes (no process).

The one resolver of git dirs: a ``.git`` directory or ``gitdir:`` file at or above a path,
the admin dir of a linked worktree, its ``commondir`` (objects, refs, config,
``info/exclude``), and the main work tree. The layout is gitrepository-layout(5).

An agent can write the files of its worktree (``.git``) and of its admin dir (``HEAD``,
``commondir``): every such file is read with ``read_small_file``, which opens regular files
only and never blocks (a FIFO planted as ``.git`` would hang a plain ``open``).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from wave_ls.runtime.regular_files import read_if_regular

PathLike = str | os.PathLike[str]

# A ``.git`` file, ``commondir``, ``gitdir``, ``HEAD`` or a ref file is one short line.
SMALL_FILE = 64 * 1024


def read_small_file(path: PathLike, limit: int = SMALL_FILE) -> bytes | None:
    """The bytes of ``path`` when it is a regular file (symlinks followed) of at most
    ``limit`` bytes, else None (missing, a FIFO, a device, a directory, too big,
    unreadable): ``regular_files.read_if_regular``."""
    return read_if_regular(path, limit)


def read_small_text(path: PathLike, limit: int = SMALL_FILE) -> str | None:
    """``read_small_file`` decoded (UTF-8, undecodable bytes kept as surrogates)."""
    data = read_small_file(path, limit)
    return None if data is None else data.decode("utf-8", "surrogateescape")


def is_regular_file(path: PathLike) -> bool:
    """Whether ``path`` itself (not a symlink's target) is a regular file: never opens it."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except (OSError, ValueError):
        return False


def nearest_dir(path: PathLike) -> Path:
    """``path`` made absolute, or its closest existing ancestor directory."""
    current = Path(os.path.abspath(path))
    while not current.is_dir() and current != current.parent:
        current = current.parent
    return current


def find_dot_git(start: PathLike) -> Path | None:
    """The first ``.git`` entry (directory or file) at or above ``start``."""
    current = nearest_dir(start)
    while True:
        candidate = current / ".git"
        if candidate.exists():
            return candidate
        if current == current.parent:
            return None
        current = current.parent


def read_gitfile(dot_git: Path) -> Path:
    """The git dir a ``.git`` file points to (``gitdir: <path>``); ``ValueError`` when it is
    not a regular file of that form."""
    raw = read_small_text(dot_git)
    if raw is None:
        raise ValueError(f"{dot_git}: not a readable regular file")
    text = raw.strip()
    if not text.startswith("gitdir:"):
        raise ValueError(f"{dot_git}: not a gitdir file")
    target = Path(text[len("gitdir:") :].strip())
    return (dot_git.parent / target).resolve()


def is_git_dir(path: Path) -> bool:
    return (path / "HEAD").is_file() and (
        (path / "objects").is_dir() or (path / "commondir").is_file()
    )


def common_dir(git_dir: Path) -> Path:
    """The shared git dir (objects, refs, config) of ``git_dir``; itself unless linked."""
    pointer = read_small_text(git_dir / "commondir")
    if pointer is None or not pointer.strip():
        return git_dir.resolve()
    return (git_dir / pointer.strip()).resolve()


def git_dir_of(path: PathLike) -> Path | None:
    """The git dir of the work tree containing ``path`` (admin dir for linked ones)."""
    dot_git = find_dot_git(path)
    if dot_git is None:
        return None
    try:
        git_dir = dot_git.resolve() if dot_git.is_dir() else read_gitfile(dot_git)
    except (OSError, ValueError):
        return None
    return git_dir if is_git_dir(git_dir) else None


def main_repo_of(path: PathLike) -> Path | None:
    """The main work tree for anything inside it or inside one of its linked worktrees.

    Same answer as the first entry of ``git worktree list``: the common dir without its
    ``/.git`` suffix (a bare repository is its own common dir).
    """
    git_dir = git_dir_of(path)
    if git_dir is None:
        return None
    common = common_dir(git_dir)
    if common == git_dir:
        dot_git = find_dot_git(path)
        assert dot_git is not None
        return dot_git.parent.resolve()
    return common.parent if common.name == ".git" else common


def common_dir_of(path: PathLike) -> Path | None:
    git_dir = git_dir_of(path)
    return None if git_dir is None else common_dir(git_dir)
