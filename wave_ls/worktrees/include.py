"""Local files a NEW git worktree gets from the main repository (WT-3).

- ``.wave/settings.local.json`` (personal settings, never committed);
- the gitignored, untracked files matched by the main repository's ``.worktreeinclude``
  (gitignore syntax, matched with ``pathspec``): ``.env``, ``.mcp.json``, local configs.

Only ignored files are copied, so a copy never counts as a change of the worktree (it would
otherwise keep a worktree that changed nothing). A file the checkout already produced is
never overwritten. Symlinks are copied as links. Entries of ``.worktreeinclude`` that point
outside the repository are refused with a warning: ``..`` components, ``~``, drive letters,
and absolute paths that exist outside it (``/etc/hosts``). A leading ``/`` otherwise keeps
its gitignore meaning, anchored at the repository root (``/.env``).
"""

from __future__ import annotations

import logging
import os
import re
import shutil
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from wave_ls.runtime.walk import Entry, walk_entries
from wave_ls.worktrees.git_cli import run_git
from wave_ls.worktrees.model import DEFAULT_EXCLUDE

log = logging.getLogger(__name__)

INCLUDE_FILE = ".worktreeinclude"
LOCAL_SETTINGS = ".wave/settings.local.json"
_DRIVE = re.compile(r"^[A-Za-z]:[\\/]|^\\\\")


@dataclass
class IncludeReport:
    """What was copied (paths relative to the repository) and the warnings on the way."""

    copied: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def copied_local_settings(self) -> bool:
        return LOCAL_SETTINGS in self.copied


def include_patterns(text: str, repo: Path) -> tuple[list[str], list[str]]:
    """The usable lines of a ``.worktreeinclude`` and a warning for each refused one."""
    accepted: list[str] = []
    warnings: list[str] = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        reason = _refusal(line.removeprefix("!"), repo)
        if reason:
            warnings.append(f"{INCLUDE_FILE}:{number}: '{line}' refused: {reason}")
            continue
        accepted.append(_anchored(line, repo))
    return accepted, warnings


def _refusal(entry: str, repo: Path) -> str | None:
    if entry.startswith("~"):
        return "a path in the home directory is outside the repository"
    if _DRIVE.match(entry):
        return "an absolute path is outside the repository"
    if ".." in re.split(r"[\\/]", entry):
        return "'..' escapes the repository"
    if entry.startswith("/") and not _inside(Path(entry), repo):
        parts = Path(entry).parts
        if len(parts) > 1 and Path("/", parts[1]).exists() and not (repo / parts[1]).exists():
            return "an absolute path is outside the repository"
    return None


def _anchored(line: str, repo: Path) -> str:
    """An absolute path into the repository, made the anchored pattern it means."""
    negate = line.startswith("!")
    entry = line.removeprefix("!")
    if entry.startswith("/") and _inside(Path(entry), repo):
        relative = Path(entry).relative_to(repo).as_posix()
        entry = "/" + relative + ("/" if entry.endswith("/") else "")
    return ("!" if negate else "") + entry


def _inside(path: Path, repo: Path) -> bool:
    return path == repo or repo in path.parents


def copy_local_files(main_repo: Path, worktree: Path, *, use_git: bool = True) -> IncludeReport:
    """Copy ``.wave/settings.local.json`` and the ``.worktreeinclude`` files into ``worktree``.

    Call it only for a worktree just created by git, never for a reused one. Never raises.
    """
    report = IncludeReport()
    _copy(main_repo, worktree, LOCAL_SETTINGS, report)
    include = main_repo / INCLUDE_FILE
    if not include.is_file():
        return report
    try:
        text = include.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        report.warnings.append(f"{include}: cannot read ({error}); nothing copied from it")
        return report
    patterns, refused = include_patterns(text, main_repo)
    report.warnings.extend(refused)
    if not patterns:
        return report
    import pathspec  # only a worktree with a .worktreeinclude needs it

    spec = pathspec.GitIgnoreSpec.from_lines(patterns)
    try:
        candidates = list(ignored_files(main_repo, use_git=use_git))
    except Exception as error:  # a listing failure must not fail the worktree
        report.warnings.append(f"cannot list the ignored files of {main_repo}: {error}")
        return report
    for relative in sorted(candidates):
        if relative != LOCAL_SETTINGS and spec.match_file(relative):
            _copy(main_repo, worktree, relative, report)
    return report


def _copy(main_repo: Path, worktree: Path, relative: str, report: IncludeReport) -> None:
    source, target = main_repo / relative, worktree / relative
    is_dir = source.is_dir() and not source.is_symlink()
    if not os.path.lexists(source) or is_dir or os.path.lexists(target):
        return
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            os.symlink(os.readlink(source), target)
        else:
            shutil.copy2(source, target)
    except OSError as error:
        report.warnings.append(f"cannot copy {relative} into the worktree: {error}")
        return
    report.copied.append(relative)


def ignored_files(main_repo: Path, *, use_git: bool = True) -> Iterator[str]:
    """Untracked files that git ignores, relative posix paths, our worktrees left out."""
    if use_git:
        done = run_git(
            main_repo,
            "ls-files",
            "-z",
            "--others",
            "--ignored",
            "--exclude-standard",
            "--",
            ".",
            f":(exclude){DEFAULT_EXCLUDE}",
        )
        if done.returncode != 0:
            raise RuntimeError(done.stderr.strip())
        yield from _outside_worktrees(p for p in done.stdout.split("\0") if p)
        return
    yield from _outside_worktrees(_ignored_files_dulwich(main_repo))


def _outside_worktrees(paths: Iterable[str]) -> Iterator[str]:
    return (p for p in paths if not p.startswith(DEFAULT_EXCLUDE) and not p.endswith("/"))


def _ignored_files_dulwich(main_repo: Path) -> Iterator[str]:
    """The same list without git: the walk with git's ignore rules and dulwich's index.
    Everything below an ignored directory is ignored (git cannot re-include it)."""
    from dulwich.repo import Repo

    from wave_ls.worktrees.dulwich_backend import walk_options

    with Repo(str(main_repo)) as repo:
        tracked = {os.fsdecode(p) for p in repo.open_index().paths()}
        options = walk_options(repo)
    skip = (".git", DEFAULT_EXCLUDE.rstrip("/"))
    ignored_dirs: set[str] = set()

    def enter(entry: Entry) -> bool:
        return not entry.repository and entry.rel not in skip

    for entry in walk_entries(main_repo, enter, options):
        ignored = entry.ignored is True or entry.rel.rpartition("/")[0] in ignored_dirs
        if entry.is_dir:
            if ignored:
                ignored_dirs.add(entry.rel)
        elif ignored and entry.rel not in tracked and entry.rel not in skip:
            yield entry.rel
