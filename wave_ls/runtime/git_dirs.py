"""Where a git repository keeps its data, read from the files git writes (no process).

The one resolver of git dirs: a ``.git`` directory or ``gitdir:`` file at or above a path,
the admin dir of a linked worktree, its ``commondir`` (objects, refs, config,
``info/exclude``), and the main work tree. The layout is gitrepository-layout(5).
"""

from __future__ import annotations

import os
from pathlib import Path

PathLike = str | os.PathLike[str]


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
    """The git dir a ``.git`` file points to (``gitdir: <path>``)."""
    text = dot_git.read_text(encoding="utf-8").strip()
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
    pointer = git_dir / "commondir"
    if not pointer.is_file():
        return git_dir.resolve()
    return (git_dir / pointer.read_text(encoding="utf-8").strip()).resolve()


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
