"""The files of a workspace folder offered by `@` completion, cached.

In a git repository the list is git's own: tracked plus untracked-but-not-ignored files
(`git ls-files`), minus files deleted from disk. Elsewhere the folder is walked, honouring
every `.gitignore` in it (nested ones included) and skipping `.git`. Paths are relative to
the folder, POSIX style, shallow ones first.
"""

from __future__ import annotations

import itertools
import logging
import subprocess
import threading
import time
from pathlib import Path

from wave_ls.chat_input.file_index import FileIndex
from wave_ls.runtime.git_dirs import git_dir_of
from wave_ls.runtime.walk import WalkOptions
from wave_ls.runtime.walk import walk_files as runtime_walk_files

log = logging.getLogger(__name__)

DEFAULT_TTL_SECONDS = 5.0
DEFAULT_MAX_FILES = 100_000
_GIT_TIMEOUT_SECONDS = 20.0


class WorkspaceFiles:
    """The files under `root`, listed again only when the cached list may be stale.

    A change the cheap checks can see (`root`'s mtime: a file added or removed at the top;
    git's index mtime: `git add`, checkout, commit) lists again at once. Other changes (a
    new file deep in the tree) are caught by a refresh once the list is `ttl` seconds old,
    done in a background thread while the old list keeps answering (unless `background` is
    False). A warm `files()` costs two `stat` calls. Thread-safe.
    """

    def __init__(
        self,
        root: Path,
        ttl: float = DEFAULT_TTL_SECONDS,
        max_files: int = DEFAULT_MAX_FILES,
        background: bool = True,
    ) -> None:
        self.root = root
        self.ttl = ttl
        self.max_files = max_files
        self.background = background
        self._lock = threading.Lock()
        self._files = FileIndex(())
        self._stamp: tuple[int | None, int | None] | None = None
        self._listed_at = -1.0
        self._git_index: Path | None = None
        self._git_checked = False
        self._refresher: threading.Thread | None = None

    def files(self) -> FileIndex:
        """The current file list (listed now when a change is visible, see the class)."""
        with self._lock:
            if not self._git_checked:
                self._git_index = _git_index_path(self.root)
                self._git_checked = True
            stamp = self._current_stamp()
            if self._stamp is None or stamp != self._stamp:
                started = time.monotonic()
                self._install(FileIndex(self._list()), stamp, started)
            elif time.monotonic() - self._listed_at >= self.ttl:
                if not self.background:
                    started = time.monotonic()
                    self._install(FileIndex(self._list()), stamp, started)
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

    def wait_for_refresh(self, timeout: float | None = None) -> None:
        """Wait until a background refresh, if one is running, has finished."""
        refresher = self._refresher
        if refresher is not None:
            refresher.join(timeout)

    @property
    def is_git(self) -> bool:
        """Whether `root` is inside a git work tree (known after the first `files()`)."""
        return self._git_index is not None

    def _refresh(self) -> None:
        started = time.monotonic()
        stamp = self._current_stamp()
        try:
            files = FileIndex(self._list())
        except Exception:
            log.exception("listing %s for @ completion failed", self.root)
            return
        with self._lock:
            self._install(files, stamp, started)

    def _install(
        self, files: FileIndex, stamp: tuple[int | None, int | None], started: float
    ) -> None:
        # A listing that started before the current one must not replace it.
        if started >= self._listed_at:
            self._files, self._stamp, self._listed_at = files, stamp, started

    def _list(self) -> list[str]:
        listed = list_git_files(self.root) if self._git_index is not None else None
        if listed is None:
            listed = walk_files(self.root, self.max_files)
        if len(listed) > self.max_files:
            log.warning(
                "%s has over %d files; @ completion lists the first", self.root, len(listed)
            )
        return sorted(listed, key=_shallow_first)[: self.max_files]

    def _current_stamp(self) -> tuple[int | None, int | None]:
        return _mtime(self.root), _mtime(self._git_index) if self._git_index else None


def list_git_files(root: Path) -> list[str] | None:
    """Tracked and untracked-not-ignored files under `root`, or None when git cannot say."""
    try:
        done = subprocess.run(
            ["git", "ls-files", "-t", "-c", "-o", "-d", "--exclude-standard", "-z"],
            cwd=root,
            capture_output=True,
            timeout=_GIT_TIMEOUT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        log.info("git ls-files failed in %s: %s", root, error)
        return None
    if done.returncode != 0:
        return None
    present: dict[str, None] = {}
    deleted: set[str] = set()
    for record in done.stdout.split(b"\0"):
        # `-t` prefixes a tag: H tracked, ? untracked, R deleted from disk, S skip-worktree
        # (not checked out), M unmerged (present, listed once per stage).
        if len(record) < 3 or record.endswith(b"/"):
            continue  # a nested repository shows up as `dir/`
        try:
            path = record[2:].decode("utf-8")
        except UnicodeDecodeError:
            continue  # a name no client could send back
        tag = record[:1]
        if tag == b"R":
            deleted.add(path)
        elif tag not in (b"S", b"s"):
            present.setdefault(path)
    return [path for path in present if path not in deleted]


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
