"""Worktrees through the ``git`` command line: the fastest checkout and status."""

from __future__ import annotations

import builtins
import contextlib
import logging
import os
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

from wave_ls.runtime import git_command, git_dirs
from wave_ls.runtime.git_command import NO_DIFF_PROGRAMS, GitCommandError
from wave_ls.runtime.sandbox import Confinement, confinement, read_only_confinement
from wave_ls.worktrees import layout
from wave_ls.worktrees.inspection import WorktreeDirs, dirs_for, scratch_git_dir
from wave_ls.worktrees.model import (
    DEFAULT_EXCLUDE,
    Changes,
    FileChange,
    FileStatus,
    PathLike,
    WorktreeDiff,
    WorktreeError,
    WorktreeInfo,
)

log = logging.getLogger(__name__)

SHA = re.compile(r"[0-9a-fA-F]{7,64}")

# Set by git hooks and some shells; any of them would point a command at another repo.
_REPO_ENV = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
)


def git_env() -> dict[str, str]:
    """The server's environment without repository variables, for programs that run git
    themselves (hooks). wave's own git gets ``git_command.git_environment``."""
    env = {k: v for k, v in os.environ.items() if k not in _REPO_ENV}
    env["GIT_TERMINAL_PROMPT"] = "0"
    return env


def run_git(
    cwd: PathLike, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``git <args>`` in ``cwd`` (``runtime/git_command.py``: nothing of the repository
    that runs a program, stdin ``/dev/null``, a deadline); raises ``WorktreeError`` only
    when git cannot start or ran out of time."""
    return run_git_together(cwd, args, env=env)[0]


def inspection_sandbox(*writable: Path) -> Confinement:
    """The confinement of our own git commands inside a worktree an agent has written.

    Its files may make git run programs (a nested repository's ``core.fsmonitor``, filters
    of a submodule's config): run confined, they can write nothing, or only ``writable``.
    Close it after use (nothing to close for the read-only one: it lasts).
    """
    return confinement(writable) if writable else read_only_confinement()


def run_git_together(
    cwd: PathLike,
    *commands: tuple[str, ...],
    env: dict[str, str] | None = None,
    sandbox: Confinement | None = None,
) -> list[subprocess.CompletedProcess[str]]:
    """Run several git commands concurrently; results in the same order.

    ``env`` adds to (or overrides) the cleaned environment of ``git_command``; ``sandbox``
    confines them.
    """
    try:
        return git_command.run_git_commands(Path(cwd), commands, env=env, sandbox=sandbox)
    except GitCommandError as error:
        raise WorktreeError(str(error)) from error


def inspect_worktree(
    worktree: PathLike, *commands: tuple[str, ...], dirs: WorktreeDirs | None = None
) -> list[subprocess.CompletedProcess[str]]:
    """Read-only git commands in a worktree an agent may have written: through a scratch
    git dir made from its registration (``inspection.py``), confined read-only, run
    concurrently. ``WorktreeError`` when its dirs cannot be used or git cannot run."""
    return start_inspection(worktree, *commands, dirs=dirs).wait()


class Inspection:
    """``inspect_worktree``'s commands, started (``start_inspection``): ``wait`` collects
    them (blocking), then deletes their scratch git dir and closes their sandbox."""

    def __init__(
        self,
        procs: list[subprocess.Popen[str]],
        commands: tuple[tuple[str, ...], ...],
        cleanup: contextlib.ExitStack,
    ) -> None:
        self._procs = procs
        self._commands = commands
        self._cleanup = cleanup

    def wait(self) -> list[subprocess.CompletedProcess[str]]:
        try:
            return git_command.finish_git(self._procs, self._commands)
        except GitCommandError as error:
            raise WorktreeError(str(error)) from error
        finally:
            self._cleanup.close()


def start_inspection(
    worktree: PathLike, *commands: tuple[str, ...], dirs: WorktreeDirs | None = None
) -> Inspection:
    """``inspect_worktree``'s commands started in the caller's thread (about 1 ms of it),
    to be collected by ``Inspection.wait`` in another: only the wait then runs beside
    the caller's other work, not the Python that prepares git (issue 30)."""
    found = dirs_for(worktree, dirs)
    if found is None:
        raise WorktreeError(f"{worktree} is not a git worktree")
    cleanup = contextlib.ExitStack()
    try:
        sandbox = inspection_sandbox()
        cleanup.callback(sandbox.close)
        _scratch, env = cleanup.enter_context(scratch_git_dir(found))
        procs = git_command.start_git(Path(worktree), commands, env=env, sandbox=sandbox)
    except OSError as error:
        cleanup.close()
        raise WorktreeError(f"cannot read {worktree}: {error}") from error
    except GitCommandError as error:
        cleanup.close()
        raise WorktreeError(str(error)) from error
    except BaseException:
        cleanup.close()
        raise
    return Inspection(procs, commands, cleanup)


def _checked(cwd: PathLike, *args: str) -> str:
    done = run_git(cwd, *args)
    if done.returncode != 0:
        detail = (done.stderr or done.stdout).strip()
        raise WorktreeError(f"git {args[0]} failed: {detail}")
    return done.stdout


def parse_worktree_list(text: str) -> list[WorktreeInfo]:
    """Parse ``git worktree list --porcelain``: main first, then linked sorted by path."""
    infos: list[WorktreeInfo] = []
    for block in text.strip("\n").split("\n\n"):
        fields: dict[str, str] = {}
        for line in block.splitlines():
            key, _, value = line.partition(" ")
            fields[key] = value
        if "worktree" not in fields:
            continue
        branch = fields.get("branch")
        infos.append(
            WorktreeInfo(
                path=Path(fields["worktree"]),
                branch=branch.removeprefix("refs/heads/") if branch else None,
                head=fields.get("HEAD"),
                is_main=not infos,
                prunable="prunable" in fields,
            )
        )
    return infos[:1] + sorted(infos[1:], key=lambda info: str(info.path))


def _find(worktrees: list[WorktreeInfo], path: Path) -> WorktreeInfo | None:
    return next((w for w in worktrees if layout.same_path(w.path, path)), None)


def count_status_entries(porcelain_z: str) -> int:
    """Entries of ``git status --porcelain -z --no-renames`` (one NUL-ended record each)."""
    return sum(1 for record in porcelain_z.split("\0") if record)


_STATUS: dict[str, FileStatus] = {"A": "added", "D": "deleted", "R": "renamed", "C": "added"}


def parse_diff_summary(name_status_z: str, numstat_z: str) -> list[FileChange]:
    """The files of ``git diff -M --name-status -z`` with ``--numstat -z`` counts."""
    counts: dict[str, tuple[int, int, bool]] = {}
    fields = numstat_z.split("\0")
    i = 0
    while i < len(fields) and fields[i]:
        plus, minus, path = fields[i].split("\t", 2)
        if not path:  # a rename: the old and new paths follow as fields of their own
            path, i = fields[i + 2], i + 2
        binary = plus == "-"
        counts[path] = (0 if binary else int(plus), 0 if binary else int(minus), binary)
        i += 1
    files: list[FileChange] = []
    fields = name_status_z.split("\0")
    i = 0
    while i < len(fields) and fields[i]:
        code = fields[i][0]
        old_path: str | None = None
        if code in "RC":
            old_path, path, i = fields[i + 1], fields[i + 2], i + 3
        else:
            path, i = fields[i + 1], i + 2
        added, deleted, binary = counts.get(path, (0, 0, False))
        files.append(
            FileChange(
                path=_readable(path),
                status=_STATUS.get(code, "modified"),
                additions=added,
                deletions=deleted,
                binary=binary,
                old_path=_readable(old_path) if code == "R" and old_path else None,
            )
        )
    return files


def _readable(text: str) -> str:
    """Text that git gave in bytes we could not decode, with those bytes shown as U+FFFD."""
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


class GitCliBackend:
    """The ``WorktreeBackend`` that runs ``git``; requires git on PATH."""

    name = "git"

    def main_repo(self, path: PathLike) -> Path | None:
        infos = self._worktrees(path, required=False)
        return infos[0].path if infos else None

    def default_branch(self, repo: PathLike) -> str | None:
        prefix = "refs/remotes/origin/"
        out = _checked(self._main(repo), "for-each-ref", "--format=%(refname) %(symref)", prefix)
        refs = dict(line.partition(" ")[::2] for line in out.splitlines())
        head_target = refs.get(prefix + "HEAD", "")
        if head_target.startswith(prefix):
            return head_target.removeprefix(prefix)
        for name in ("main", "master"):
            if prefix + name in refs:
                return name
        return None

    def list(self, repo: PathLike) -> list[WorktreeInfo]:
        return self._worktrees(repo)

    def ensure_excluded(self, repo: PathLike, pattern: str = DEFAULT_EXCLUDE) -> None:
        here = git_dirs.nearest_dir(repo)
        common = run_git(here, "rev-parse", "--git-common-dir")
        if common.returncode != 0:
            raise WorktreeError(f"{repo} is not inside a git repository")
        layout.add_exclude((here / common.stdout.strip()).resolve(), pattern)

    def create(self, repo: PathLike, path: PathLike, branch: str, base_ref: str) -> WorktreeInfo:
        if base_ref.startswith("-") or branch.startswith("-"):
            raise WorktreeError(f"invalid base ref or branch: '{base_ref}', '{branch}'")
        # Run from the caller's directory: "HEAD" means the caller's HEAD, which may be a
        # linked worktree's (git, unlike dulwich, adds worktrees from a linked one fine).
        here = git_dirs.nearest_dir(repo)
        target = Path(os.path.realpath(path))
        if target.exists():
            worktrees = self._worktrees(here)
            live = _find(worktrees[1:], target)
            if live is not None and not live.prunable:
                return WorktreeInfo(
                    target, live.branch, live.head, base_commit=live.head, is_new=False
                )
            if not target.is_dir() or any(target.iterdir()):
                main = worktrees[0].path
                raise WorktreeError(f"{target} already exists and is not a worktree of {main}")
        else:
            self._drop_stale_registration(here, target)
        self._check_registrations(here)
        if self._branch_exists(here, branch):
            raise WorktreeError(
                f"a branch named '{branch}' already exists; delete it or choose another name"
            )
        done = run_git(here, "worktree", "add", "--no-track", "-b", branch, str(target), base_ref)
        if done.returncode != 0:
            made = _find(self._worktrees(here)[1:], target)
            if made is not None and not made.prunable:
                # Only the post-checkout hook failed: the worktree is complete, keep it.
                log.warning("git worktree add %s: %s", target, done.stderr.strip())
                return WorktreeInfo(target, branch, made.head, base_commit=made.head, is_new=True)
            # git creates the branch before checking out; do not leave it behind.
            if self._branch_exists(here, branch):
                run_git(here, "branch", "-D", branch)
            self._explain_failed_create(here, base_ref)
            raise WorktreeError(f"git worktree add failed: {done.stderr.strip()}")
        sha = layout.read_head(target) or _checked(target, "rev-parse", "HEAD").strip()
        return WorktreeInfo(target, branch, sha, base_commit=sha, is_new=True)

    def changes(
        self, worktree_path: PathLike, base_commit: str, *, dirs: WorktreeDirs | None = None
    ) -> Changes:
        return self.start_changes(worktree_path, base_commit, dirs=dirs)()

    def start_changes(
        self, worktree_path: PathLike, base_commit: str, *, dirs: WorktreeDirs | None = None
    ) -> Callable[[], Changes]:
        wt = Path(worktree_path)
        if not wt.is_dir():
            return _known(Changes.unknown(f"{wt} does not exist"))
        if not SHA.fullmatch(base_commit):
            return _known(Changes.unknown(f"'{base_commit}' is not a commit id"))
        found = dirs_for(wt, dirs)
        if found is None:
            return _known(Changes.unknown(f"{wt} is not a git worktree"))
        status_cmd = (
            "--no-optional-locks",
            "status",
            "--porcelain",
            "-z",
            "--untracked-files=all",
            "--no-renames",
        )
        count_cmd = ("rev-list", "--count", f"{base_commit}..HEAD")
        # HEAD still at the base (read from the ref files) means no commits: skip rev-list.
        unmoved = layout.read_head_in(found.git_dir, found.common) == base_commit.lower()
        try:
            commands = (status_cmd, *([] if unmoved else [count_cmd]))
            running = start_inspection(wt, *commands, dirs=found)
        except WorktreeError as error:
            return _known(Changes.unknown(str(error)))

        def result() -> Changes:
            try:
                results = running.wait()
            except WorktreeError as error:
                return Changes.unknown(str(error))
            status = results[0]
            if status.returncode != 0:
                return Changes.unknown(f"git status failed in {wt}: {status.stderr.strip()}")
            if unmoved:
                return Changes(count_status_entries(status.stdout), 0)
            commits = results[1]
            if commits.returncode != 0:
                return Changes.unknown(f"git rev-list failed in {wt}: {commits.stderr.strip()}")
            return Changes(count_status_entries(status.stdout), int(commits.stdout.strip()))

        return result

    def diff(
        self, worktree_path: PathLike, base_commit: str, *, dirs: WorktreeDirs | None = None
    ) -> WorktreeDiff:
        wt = Path(worktree_path)
        if not SHA.fullmatch(base_commit):
            raise WorktreeError(f"'{base_commit}' is not a commit id")
        found = dirs_for(wt, dirs)
        if found is None:
            raise WorktreeError(f"{wt} is not a git worktree")
        try:
            with scratch_git_dir(found, objects=True) as (scratch, env):
                # Everything is staged into the scratch index, new blobs go to the scratch
                # store: the review writes nothing anywhere else.
                sandbox = inspection_sandbox(scratch)
                try:
                    [added] = run_git_together(
                        wt, ("add", "--all", "--", "."), env=env, sandbox=sandbox
                    )
                    if added.returncode != 0:
                        raise WorktreeError(f"git add failed in {wt}: {added.stderr.strip()}")
                    base = ("diff", "--cached", "-M", *NO_DIFF_PROGRAMS, "--no-color")
                    status, numstat, patch = run_git_together(
                        wt,
                        ("-c", "core.quotepath=false", *base, "--name-status", "-z", base_commit),
                        ("-c", "core.quotepath=false", *base, "--numstat", "-z", base_commit),
                        ("-c", "core.quotepath=false", *base, base_commit),
                        env=env,
                        sandbox=sandbox,
                    )
                finally:
                    sandbox.close()
        except OSError as error:
            raise WorktreeError(f"cannot read {wt}: {error}") from error
        for done in (status, numstat, patch):
            if done.returncode != 0:
                raise WorktreeError(f"git diff failed in {wt}: {done.stderr.strip()}")
        files = parse_diff_summary(status.stdout, numstat.stdout)
        return WorktreeDiff.make(base_commit, files, _readable(patch.stdout))

    def remove(
        self, repo: PathLike, path: PathLike, branch: str | None, *, force: bool = False
    ) -> None:
        if branch and branch.startswith("-"):
            raise WorktreeError(f"invalid branch name '{branch}'")
        # Not from inside the worktree being deleted: later commands need an existing cwd.
        cwd = git_dirs.main_repo_of(repo) or git_dirs.nearest_dir(repo)
        target = Path(os.path.realpath(path))
        self._check_registrations(cwd)
        # git refuses by itself: the main worktree, a non-worktree, a locked one, and one with
        # modified or untracked files (without --force); "--force" twice overrides a lock.
        flags = ["--force", "--force"] if force else []
        # Its check for changes runs git in the worktree, which reads the admin dir's
        # config.worktree (the agent's): switch off what that one sets too.
        dirs = dirs_for(target)
        extra = [dirs.git_dir / "config.worktree"] if dirs is not None and dirs.linked else []
        try:
            done = git_command.run_git(
                cwd, "worktree", "remove", *flags, str(target), config_files=extra
            )
        except GitCommandError as error:
            raise WorktreeError(str(error)) from error
        if done.returncode != 0:
            worktrees = self._worktrees(cwd)
            if _find(worktrees[1:], target) is None:
                raise WorktreeError(f"{path} is not a linked worktree of {worktrees[0].path}")
            raise WorktreeError(f"git worktree remove failed: {done.stderr.strip()}")
        if not branch:
            return
        deleted = run_git(cwd, "branch", "-D", branch)
        if deleted.returncode == 0:
            return
        holder = next((w for w in self._worktrees(cwd) if w.branch == branch), None)
        if holder is not None:
            log.warning("branch %s is checked out at %s; kept", branch, holder.path)
            return
        exists = run_git(cwd, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}")
        if exists.returncode == 0:
            raise WorktreeError(f"git branch -D failed: {deleted.stderr.strip()}")

    # ------------------------------------------------------------------ helpers

    def _drop_stale_registration(self, here: Path, target: Path) -> None:
        """Forget a registered worktree at ``target`` whose folder is gone.

        Otherwise ``git worktree add`` refuses the path, after having created the branch.
        """
        common = git_dirs.common_dir_of(here)
        if common is None:
            return
        for entry in layout.linked_worktrees(common):
            if layout.same_path(entry.path, target):
                _checked(here, "worktree", "remove", "--force", str(entry.path))

    def _check_registrations(self, here: Path) -> None:
        """git reads every registered worktree's ``HEAD`` and ``gitdir`` when it adds,
        removes or lists worktrees and deletes branches: one that is not a regular file (a
        FIFO an agent planted) would hang it. Such files of wave's own worktrees are repaired
        (their values are known); any other is an error that says what to remove."""
        common = git_dirs.common_dir_of(here)
        main = git_dirs.main_repo_of(here)
        if common is None or main is None:
            return
        problem = layout.repair_registrations(common, main)
        if problem is not None:
            raise WorktreeError(problem)

    def _branch_exists(self, here: Path, branch: str) -> bool:
        common = git_dirs.common_dir_of(here)
        known = None if common is None else layout.branch_exists(common, branch)
        if known is not None:
            return known
        found = run_git(here, "rev-parse", "--verify", "--quiet", f"refs/heads/{branch}")
        return found.returncode == 0

    def _explain_failed_create(self, here: Path, base_ref: str) -> None:
        """Raise a plain error for the usual causes (checked only after a failure)."""
        self._worktrees(here)  # not a repository
        base = run_git(here, "rev-parse", "--verify", "--quiet", f"{base_ref}^{{commit}}")
        if base.returncode != 0:
            raise WorktreeError(f"unknown base ref '{base_ref}'")

    def _main(self, repo: PathLike) -> Path:
        return self._worktrees(repo)[0].path

    def _worktrees(self, repo: PathLike, *, required: bool = True) -> builtins.list[WorktreeInfo]:
        """``git worktree list`` run from anywhere in the repo: the main one comes first."""
        done = run_git(git_dirs.nearest_dir(repo), "worktree", "list", "--porcelain")
        infos = parse_worktree_list(done.stdout) if done.returncode == 0 else []
        if not infos and required:
            raise WorktreeError(f"{repo} is not inside a git repository")
        return infos


def _known(changes: Changes) -> Callable[[], Changes]:
    return lambda: changes
