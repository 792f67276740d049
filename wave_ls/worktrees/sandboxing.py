"""The sandbox policies: which trees an agent's commands may write (``docs/sandbox.md``).

- ``session_sandbox``: the opt-in sandbox of a session (``sandbox`` in the settings
  files): the project folder (with its git dirs), the temporary directory and
  ``allowWrite``.

- ``isolated_writable``: the trees an isolated agent's commands may write: its worktree,
  the worktree's own admin dir (``<common>/worktrees/<id>``: index, HEAD, logs) and its
  private object store (``object_store.py``; the shared one only where that could not be
  made). Never the parent's working tree, ``<common>/index``, ``<common>/HEAD``,
  ``<common>/refs``, the config or the parent's objects.
- ``pin_links``/``restore_links``: the worktree's ``.git`` file and its admin dir's
  ``gitdir`` as git wrote them, put back at the end (an agent that redirected them to a git
  dir of its own would otherwise lead the user's later git there).
- ``detach_head``/``reattach_head``: ``refs/heads`` holds the parent's branches, so it stays
  read-only, and a commit could not move ``worktree-<name>`` (its lock file lives there).
  While the agent runs, its worktree's HEAD is detached at the branch's commit (commits then
  move only the admin dir's HEAD); at the end, our code (outside the sandbox) moves the
  branch to the worktree's HEAD and attaches HEAD to it again.

Both read and write git's files directly (``layout``) and the refs through dulwich, so they
work the same on worktrees made by either backend and never run git inside a worktree the
agent could have rigged.
"""

from __future__ import annotations

import logging
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from wave_ls.runtime import git_dirs
from wave_ls.runtime.sandbox import Confinement, confinement
from wave_ls.runtime.sandbox.settings import SandboxSettings, read_sandbox_settings
from wave_ls.worktrees import layout
from wave_ls.worktrees.inspection import WorktreeDirs

log = logging.getLogger(__name__)

_SHA = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")
_BRANCH_REF = "ref: refs/heads/"


@dataclass(frozen=True)
class WorktreeGitDirs:
    """Where a work tree's git data lives: its own git dir and the shared (common) one."""

    git_dir: Path
    common: Path

    @property
    def linked(self) -> bool:
        return self.git_dir != self.common


def work_tree_dirs(path: Path) -> WorktreeGitDirs | None:
    """The git dirs of the work tree at ``path``, None when it is not in git."""
    git_dir = git_dirs.git_dir_of(path)
    if git_dir is None:
        return None
    return WorktreeGitDirs(Path(os.path.realpath(git_dir)), git_dirs.common_dir(git_dir))


def isolated_writable(
    path: Path, recorded: WorktreeDirs | None = None, store: Path | None = None
) -> list[Path]:
    """The trees an isolated agent working in the worktree ``path`` (whose ``recorded``
    dirs, when given, are used) may write besides its private temporary directory: see the
    module docstring. ``store``: the objects dir of its private store."""
    trees = [Path(os.path.realpath(path))]
    dirs = WorktreeGitDirs(recorded.git_dir, recorded.common) if recorded else work_tree_dirs(path)
    if dirs is None:
        return trees
    if dirs.linked:
        trees += [dirs.git_dir, store or dirs.common / "objects"]
    elif not layout.same_path(dirs.git_dir, path) and trees[0] not in dirs.git_dir.parents:
        trees.append(dirs.git_dir)  # a repository of its own whose git dir lies elsewhere
    return trees


@dataclass(frozen=True)
class DetachedHead:
    """A worktree whose HEAD we detached at ``commit``, the tip of ``branch``."""

    worktree: Path
    admin_dir: Path
    common: Path
    branch: str
    commit: str


def detach_head(path: Path, recorded: WorktreeDirs | None = None) -> DetachedHead | None:
    """Detach the HEAD of the linked worktree at ``path`` (with its ``recorded`` dirs when
    given) at its branch's commit.

    None (nothing done) when ``path`` is not a linked worktree, or its HEAD is already
    detached, or its branch has no commit yet.
    """
    dirs = WorktreeGitDirs(recorded.git_dir, recorded.common) if recorded else work_tree_dirs(path)
    if dirs is None or not dirs.linked:
        return None
    head_file = dirs.git_dir / "HEAD"
    raw = git_dirs.read_small_text(head_file)
    if raw is None:
        return None
    head = raw.strip()
    commit = layout.read_head_in(dirs.git_dir, dirs.common)
    if not head.startswith(_BRANCH_REF) or commit is None:
        return None
    _write_atomically(head_file, commit + "\n")
    branch = head[len(_BRANCH_REF) :]
    log.info("worktree %s: HEAD detached at %s (%s) for the sandbox", path, commit, branch)
    return DetachedHead(Path(path), dirs.git_dir, dirs.common, branch, commit)


def reattach_head(detached: DetachedHead) -> str | None:
    """Move ``branch`` to the worktree's HEAD and attach HEAD to it again.

    Returns a note for the user when that could not be done as planned (the worktree then
    stays as it is: nothing is lost, the note says where the work is). The paths come from
    ``detached`` (recorded before the agent ran), never from files the agent could change.
    """
    head_file = detached.admin_dir / "HEAD"
    ref = f"refs/heads/{detached.branch}"
    raw = git_dirs.read_small_text(head_file)
    if raw is None:
        if not os.path.lexists(head_file) or layout.not_regular(head_file):
            # A FIFO (or nothing) there hangs (or breaks) every git that lists worktrees.
            layout.write_atomically(head_file, f"{_BRANCH_REF}{detached.branch}\n")
            return (
                f"the worktree's HEAD was not a regular file, so it was reset to "
                f"{detached.branch} ({detached.commit[:12]}); {ref} was not updated"
            )
        return f"could not read the worktree's HEAD; {ref} was not updated"
    head = raw.strip()
    if head == _BRANCH_REF + detached.branch:
        return None  # attached again already (by the agent's own git checkout)
    if not _SHA.fullmatch(head):
        return (
            f"the worktree's HEAD is now {head!r}, so {detached.branch} was left at "
            f"{detached.commit[:12]}"
        )
    if head != detached.commit:
        problem = _move_branch(detached, ref, head)
        if problem is not None:
            return problem
    _write_atomically(head_file, f"{_BRANCH_REF}{detached.branch}\n")
    log.info("worktree %s: %s at %s, HEAD attached again", detached.worktree, ref, head)
    return None


def _move_branch(detached: DetachedHead, ref: str, new: str) -> str | None:
    # dulwich: only when a run made commits.
    from dulwich.objects import ObjectID
    from dulwich.refs import Ref
    from dulwich.repo import Repo

    where = f"its commits are at {new[:12]} (detached HEAD in {detached.worktree})"
    try:
        with Repo(str(detached.common)) as repo:
            try:
                kind = repo.object_store[ObjectID(new.encode("ascii"))].type_name
            except KeyError:
                kind = None
            if kind != b"commit":
                return f"the worktree's HEAD {new[:12]} is not a commit; {ref} was not updated"
            moved = repo.refs.set_if_equals(
                Ref(ref.encode()),
                ObjectID(detached.commit.encode("ascii")),
                ObjectID(new.encode("ascii")),
                message=b"wave: commits made in the sandboxed worktree",
            )
    except Exception as error:  # a broken repository: keep everything, say so
        return f"could not update {ref} ({error}); {where}"
    if not moved:
        return f"{ref} was moved by someone else during the run, so it was not updated; {where}"
    return None


def _write_atomically(path: Path, text: str) -> None:
    layout.write_atomically(path, text, release_later=True)


@dataclass(frozen=True)
class PinnedLinks:
    """The worktree's ``.git`` file and its admin dir's ``gitdir`` as git wrote them."""

    dot_git: Path
    dot_git_text: bytes
    gitdir: Path
    gitdir_text: bytes


def pin_links(dirs: WorktreeDirs) -> PinnedLinks | None:
    """Record the links of the linked worktree ``dirs`` (before an agent runs in it)."""
    dot_git = dirs.worktree / ".git"
    dot_git_text = git_dirs.read_small_file(dot_git)
    gitdir_text = git_dirs.read_small_file(dirs.git_dir / "gitdir")
    if not dirs.linked or dot_git_text is None or gitdir_text is None:
        return None
    return PinnedLinks(dot_git, dot_git_text, dirs.git_dir / "gitdir", gitdir_text)


def restore_links(pinned: PinnedLinks) -> list[str]:
    """Put the pinned links back where an agent changed them; notes for the user."""
    notes: list[str] = []
    for path, text in ((pinned.dot_git, pinned.dot_git_text), (pinned.gitdir, pinned.gitdir_text)):
        if git_dirs.read_small_file(path) == text:
            continue
        if os.path.isdir(path) and not os.path.islink(path):
            notes.append(f"{path} was replaced by a folder; it was left as it is")
            continue
        try:
            _write_atomically(path, text.decode("utf-8", "surrogateescape"))
        except OSError as error:
            notes.append(f"{path} was changed during the run and could not be restored ({error})")
            continue
        log.warning("%s was changed during the run; restored", path)
        notes.append(f"{path} was changed during the run; git's own link was put back")
    return notes


SANDBOX_PROMPT = """

# Sandbox
Your commands (Bash, background Bash and everything they start) run in a sandbox: they can \
read everything, but write only inside your worktree {worktree} and the temporary \
directory $TMPDIR. Writing anywhere else fails with "Permission denied" or "Read-only file \
system"; do not try to work around it.
Git works as usual inside the worktree: add, commit, log, diff, status, reset, rebase. Its \
HEAD is detached on purpose (at the tip of {branch}): just commit, and {branch} is moved to \
your commits when you finish. Do not check out or create branches, tags or stashes, and do \
not change the git config: those are refused."""


def sandbox_prompt(worktree: Path, branch: str) -> str:
    """The system-prompt section that tells an isolated agent about its sandbox."""
    return SANDBOX_PROMPT.format(worktree=worktree, branch=branch or "its branch")


def project_folder(cwd: Path) -> Path:
    """The folder a session's settings and sandbox belong to: the main repository of
    ``cwd`` (also from inside one of its worktrees), else ``cwd``."""
    return git_dirs.main_repo_of(cwd) or Path(os.path.realpath(cwd))


def load_sandbox_settings(cwd: Path, home: Path) -> SandboxSettings:
    """The ``sandbox`` settings for a session in ``cwd`` (read from its project folder)."""
    return read_sandbox_settings(project_folder(cwd), home)


def session_writable(cwd: Path, settings: SandboxSettings) -> list[Path]:
    """What a sandboxed session's commands may write: the project folder, its git dirs
    when they lie elsewhere, the temporary directory, and ``allowWrite``."""
    project = project_folder(cwd)
    trees = [project]
    dirs = work_tree_dirs(project)
    if dirs is not None:
        trees += [d for d in (dirs.git_dir, dirs.common) if project not in d.parents]
    for temp in (Path(tempfile.gettempdir()), Path("/tmp")):
        trees.append(Path(os.path.realpath(temp)))
    trees += settings.allow_write
    return list(dict.fromkeys(trees))


def session_sandbox(cwd: Path, home: Path) -> Confinement | None:
    """The sandbox of a session's commands when its settings turn it on, else None."""
    settings = load_sandbox_settings(cwd, home)
    if not settings.enabled:
        return None
    project = project_folder(cwd)
    return confinement(
        session_writable(cwd, settings),
        advice=(
            f"Note: this command ran in the session's sandbox, which allows writes only inside "
            f"{project}, the temporary directory and the paths in sandbox.allowWrite of "
            ".wave/settings.json; the failure above is probably a write it refused elsewhere "
            "(if that path is needed, ask the user to add it to sandbox.allowWrite)."
        ),
    )
