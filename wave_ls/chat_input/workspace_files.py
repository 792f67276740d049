"""The files of a workspace folder offered by `@` completion, cached.

In a git repository the list is git's own: tracked plus untracked-but-not-ignored files
(`git ls-files`), minus files deleted from disk. Elsewhere the folder is walked, honouring
every `.gitignore` in it (nested ones included) and skipping `.git`. Paths are relative to
the folder, POSIX style, shallow ones first.
"""

from __future__ import annotations

import contextlib
import hashlib
import itertools
import logging
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from wave_ls.chat_input.file_index import FileIndex
from wave_ls.runtime.git_command import GitCommandError, run_git
from wave_ls.runtime.git_dirs import git_dir_of
from wave_ls.runtime.walk import WalkOptions
from wave_ls.runtime.walk import walk_files as runtime_walk_files

log = logging.getLogger(__name__)

DEFAULT_TTL_SECONDS = 5.0
# A refresh comes at most this often relative to how long a listing takes (a 100,000-file
# repository listed in 0.4 s is refreshed every 8 s, not every 5), so refreshing costs at
# most about 5 % of a core.
TTL_PER_LISTING_SECOND = 20.0
# The searchable span (every stage of `FileIndex.search`; the letters-in-order match only
# in the first FUZZY_FILES: it costs about 1 ms per 10,000 names), and the most files listed
# at all (past the span, a file is found when the query names it).
DEFAULT_MAX_FILES = 100_000
FUZZY_FILES = 50_000
DEFAULT_MAX_LISTED = 500_000
# A change the cheap checks see is listed before answering when a listing takes no longer
# than this (small trees stay exact); a bigger tree answers from its old list meanwhile.
SYNC_LISTING_SECONDS = 0.05
_GIT_TIMEOUT_SECONDS = 20.0


class WorkspaceFiles:
    """The files under `root`, listed again only when the cached list may be stale.

    A change the cheap checks can see (`root`'s mtime: a file added or removed at the top;
    git's index mtime: `git add`, checkout, commit) lists again: before answering when a
    listing is quick (under `SYNC_LISTING_SECONDS`), else in a background thread while the
    old list keeps answering. Other changes (a new file deep in the tree) are caught by a
    background refresh once the list is `ttl` seconds old (longer for trees that take long
    to list). A warm `files()` costs two `stat` calls. Without `background`, every listing
    happens before answering. Thread-safe.

    The first `max_files` files (shallow first) are searched by every stage of
    `FileIndex.search`; up to `max_listed` are listed at all (`capped`).
    """

    def __init__(
        self,
        root: Path,
        ttl: float = DEFAULT_TTL_SECONDS,
        max_files: int = DEFAULT_MAX_FILES,
        background: bool = True,
        max_listed: int = DEFAULT_MAX_LISTED,
    ) -> None:
        self.root = root
        self.ttl = ttl
        self.max_files = max_files
        self.max_listed = max(max_listed, max_files)
        self.background = background
        self._lock = threading.Lock()
        self._files = FileIndex(())
        self._stamp: tuple[int | None, int | None] | None = None
        self._listed_at = -1.0
        self._listing_seconds = 0.0
        self._digest = b""
        self._git_index: Path | None = None
        self._git_checked = False
        self._refresher: threading.Thread | None = None
        self.listed = 0
        """How many files the last listing found (a walk stops one past `max_listed`)."""

    @property
    def capped(self) -> bool:
        """Whether the last listing held more than `max_files` files: the ones past it are
        found only when the query names them, those past `max_listed` not at all."""
        return self.listed > self.max_files

    def files(self) -> FileIndex:
        """The current file list (listed now when needed, see the class)."""
        with self._lock:
            if not self._git_checked:
                self._git_index = _git_index_path(self.root)
                self._git_checked = True
            stamp = self._current_stamp()
            changed = self._stamp is None or stamp != self._stamp
            quick = not self.background or self._listing_seconds <= SYNC_LISTING_SECONDS
            if self._listed_at < 0 or (changed and quick):
                self._install(self._list(), stamp, time.monotonic())
            elif changed or time.monotonic() - self._listed_at >= self._ttl():
                if not self.background:
                    self._install(self._list(), stamp, time.monotonic())
                elif self._refresher is None or not self._refresher.is_alive():
                    self._refresher = threading.Thread(
                        target=self._refresh, name="wave-workspace-files", daemon=True
                    )
                    self._refresher.start()
            return self._files

    def invalidate(self) -> None:
        """Forget the cached list; the next `files()` lists again before answering."""
        with self._lock:
            self._stamp = None
            self._listed_at = -1.0

    def wait_for_refresh(self, timeout: float | None = None) -> None:
        """Wait until a background refresh, if one is running, has finished."""
        refresher = self._refresher
        if refresher is not None:
            refresher.join(timeout)

    @property
    def is_git(self) -> bool:
        """Whether `root` is inside a git work tree (known after the first `files()`)."""
        return self._git_index is not None

    def _ttl(self) -> float:
        if self._listing_seconds <= SYNC_LISTING_SECONDS:
            return self.ttl
        return max(self.ttl, self._listing_seconds * TTL_PER_LISTING_SECOND)

    def _refresh(self) -> None:
        started = time.monotonic()
        stamp = self._current_stamp()
        try:
            listing = self._list()
        except Exception:
            log.exception("listing %s for @ completion failed", self.root)
            return
        with self._lock:
            self._install(listing, stamp, started)

    def _install(
        self, listing: _Listing, stamp: tuple[int | None, int | None], started: float
    ) -> None:
        # A listing that started before the current one must not replace it.
        if started < self._listed_at:
            return
        self._stamp, self._listed_at = stamp, started
        self._listing_seconds = listing.seconds
        if listing.digest and listing.digest == self._digest:
            return  # the same files: keep the index
        self._digest, self.listed = listing.digest, listing.count
        self._files = listing.index

    def _list(self) -> _Listing:
        """List the files, and index them unless they are what the last listing found."""
        started = time.monotonic()
        listed, digest = None, b""
        if self._git_index is not None:
            output = git_ls_files(self.root)
            if output is not None:
                digest = hashlib.blake2b(output, digest_size=16).digest()
                if digest == self._digest:
                    return _Listing(self._files, self.listed, digest, time.monotonic() - started)
                listed = parse_git_ls_files(output)
        if listed is None:
            listed = walk_files(self.root, self.max_listed + 1)
        count = len(listed)
        if count > self.max_listed:
            log.warning(
                "%s has over %d files; @ completion lists the first", self.root, self.max_listed
            )
        elif count > self.max_files:
            log.info(
                "%s has %d files; past the first %d, @ completion finds a file when the "
                "query names it",
                self.root,
                count,
                self.max_files,
            )
        listed.sort(key=_shallow_first)
        del listed[self.max_listed :]
        index = FileIndex(listed, search_span=self.max_files, fuzzy_span=FUZZY_FILES)
        return _Listing(index, count, digest, time.monotonic() - started)

    def _current_stamp(self) -> tuple[int | None, int | None]:
        return _mtime(self.root), _mtime(self._git_index) if self._git_index else None


@dataclass(frozen=True)
class _Listing:
    index: FileIndex
    count: int  # files found, before `max_listed`
    digest: bytes  # of git's output ("" for a walk)
    seconds: float


def list_git_files(root: Path) -> list[str] | None:
    """Tracked and untracked-not-ignored files under `root`, or None when git cannot say."""
    output = git_ls_files(root)
    return None if output is None else parse_git_ls_files(output)


def git_ls_files(root: Path) -> bytes | None:
    """The raw output of the `git ls-files` run that lists the files, or None when git
    cannot say. Run as all of wave's git (`runtime/git_command.py`): nothing of the
    repository's config that runs a program (a shipped `core.fsmonitor`), stdin
    `/dev/null`, killed with its process group past its deadline."""
    try:
        done = run_git(
            root,
            *("ls-files", "-t", "-c", "-o", "-d", "--exclude-standard", "-z"),
            timeout=_GIT_TIMEOUT_SECONDS,
            text=False,
        )
    except GitCommandError as error:
        log.info("git ls-files failed in %s: %s", root, error)
        return None
    return done.stdout if done.returncode == 0 else None


def parse_git_ls_files(output: bytes) -> list[str]:
    """The present files in `git_ls_files` output, each once, in git's order."""
    # `-t` prefixes a tag: H tracked, ? untracked, R deleted from disk, S skip-worktree
    # (not checked out), M unmerged (present, listed once per stage). A nested repository
    # shows up as `dir/`.
    try:
        records = output.decode("utf-8").split("\0")
    except UnicodeDecodeError:  # rare: decode name by name, dropping what no client can send
        records = []
        for record in output.split(b"\0"):
            with contextlib.suppress(UnicodeDecodeError):
                records.append(record.decode("utf-8"))
    present = dict.fromkeys(
        record[2:]
        for record in records
        if len(record) > 2 and record[0] not in "RSs" and record[-1] != "/"
    )
    deleted = {record[2:] for record in records if record[:1] == "R"}
    return [path for path in present if path not in deleted] if deleted else list(present)


def walk_files(root: Path, max_files: int = DEFAULT_MAX_FILES) -> list[str]:
    """Files under `root` that no `.gitignore` on their way ignores (hidden ones included,
    version-control folders skipped), at most `max_files`."""
    options = WalkOptions(hidden=True, require_git=False)
    return list(itertools.islice(runtime_walk_files(root, options), max_files))


def _git_index_path(root: Path) -> Path | None:
    """The index file of the git work tree holding `root`, or None outside git."""
    git_dir = git_dir_of(root)
    return git_dir / "index" if git_dir is not None else None


def _mtime(path: Path) -> int | None:
    try:
        return path.stat().st_mtime_ns
    except OSError:
        return None


def _shallow_first(path: str) -> tuple[int, str]:
    return path.count("/"), path
