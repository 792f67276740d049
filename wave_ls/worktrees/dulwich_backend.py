"""Worktrees in pure Python (dulwich): works with no ``git`` binary installed.

dulwich's own ``worktree_add/remove`` and ``branch_delete`` have pitfalls (see
``docs/worktrees.md``), so this backend writes git's worktree layout itself (``layout``)
and uses dulwich for objects, refs, the index and the checkout:

- admin dirs get a fresh unique name (dulwich reuses ``worktrees/<basename>`` silently);
- every operation first resolves the main repository (dulwich fails on a linked one and
  leaves debris);
- ``remove`` checks for changes first (dulwich deletes a dirty worktree) and deletes the
  branch only when no other worktree has it checked out (dulwich deletes it anyway);
- status reads the main repository's ``info/exclude`` (dulwich reads the linked
  worktree's own admin dir, where git never looks);
- gitdir links are absolute (``relative_paths=True`` makes the repo unreadable to git < 2.48);
- a worktree an agent wrote is opened only while its ``.git`` and ``commondir`` still lead to
  its registration and its admin dir's files are regular (``open_worktree``: a FIFO would
  block dulwich's reads), and the filter drivers its repository's config defines never run
  (``safe_normalizer``: dulwich runs ``filter.<name>.clean``/``smudge``/``process``).
  dulwich runs no other configured program here: no fsmonitor, no hooks outside commit
  (which this backend never makes), no pager or editor.
"""

from __future__ import annotations

import difflib
import io
import logging
import os
import shutil
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any, cast

from dulwich.config import Config
from dulwich.diff_tree import (
    CHANGE_ADD,
    CHANGE_COPY,
    CHANGE_DELETE,
    CHANGE_RENAME,
    RenameDetector,
    TreeChange,
    tree_changes,
)
from dulwich.filters import FilterBlobNormalizer, FilterContext, FilterDriver, FilterRegistry
from dulwich.ignore import default_user_ignore_filter_path
from dulwich.index import (
    Index,
    blob_from_path_and_stat,
    cleanup_mode,
    commit_tree,
    get_unstaged_changes,
)
from dulwich.object_store import MemoryObjectStore, OverlayObjectStore
from dulwich.objects import Commit, ObjectID
from dulwich.objectspec import parse_commit
from dulwich.patch import is_binary, write_object_diff
from dulwich.refs import Ref, check_ref_format
from dulwich.repo import Repo

from wave_ls.runtime import git_command, git_dirs
from wave_ls.runtime.walk import Entry, PatternSet, WalkOptions, walk_entries
from wave_ls.worktrees import layout
from wave_ls.worktrees.inspection import WorktreeDirs, check_dirs, dirs_for
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

SYMREF = b"ref: "
HEADS = b"refs/heads/"


class DulwichBackend:
    """The ``WorktreeBackend`` that never starts a process."""

    name = "dulwich"

    # ------------------------------------------------------------------ lookups

    def main_repo(self, path: PathLike) -> Path | None:
        return git_dirs.main_repo_of(path)

    def default_branch(self, repo: PathLike) -> str | None:
        with _open_main(repo) as r:
            prefix = b"refs/remotes/origin/"
            target = r.refs.read_ref(Ref(prefix + b"HEAD"))
            if target and target.startswith(SYMREF + prefix):
                return target[len(SYMREF + prefix) :].strip().decode("utf-8")
            for name in (b"main", b"master"):
                if Ref(prefix + name) in r.refs:
                    return name.decode("utf-8")
        return None

    def list(self, repo: PathLike) -> list[WorktreeInfo]:
        main = _require_main(repo)
        common = _require_common(main)
        with Repo(str(main)) as r:
            main_info = WorktreeInfo(
                path=main, branch=_branch_of(common / "HEAD"), head=_head_sha(r), is_main=True
            )
            linked = [_linked_info(r, entry) for entry in layout.linked_worktrees(common)]
        return [main_info, *linked]

    def ensure_excluded(self, repo: PathLike, pattern: str = DEFAULT_EXCLUDE) -> None:
        layout.add_exclude(_require_common(_require_main(repo)), pattern)

    # ------------------------------------------------------------------ create

    def create(self, repo: PathLike, path: PathLike, branch: str, base_ref: str) -> WorktreeInfo:
        main = _require_main(repo)
        common = _require_common(main)
        target = Path(os.path.realpath(path))
        live = _live_entry(common, target)
        if live is not None:
            with Repo(str(target)) as wt:
                head = _head_sha(wt)
            branch_now = _branch_of(live.admin_dir / "HEAD")
            return WorktreeInfo(target, branch_now, head, base_commit=head, is_new=False)
        if target.exists() and (not target.is_dir() or any(target.iterdir())):
            raise WorktreeError(f"{target} already exists and is not a worktree of {main}")
        ref = Ref(HEADS + branch.encode("utf-8"))
        if branch.startswith("-") or not check_ref_format(ref):
            raise WorktreeError(f"'{branch}' is not a valid branch name")
        # "HEAD" means the caller's HEAD, which may be a linked worktree's (as in git).
        here = git_dirs.find_dot_git(repo)
        assert here is not None
        with Repo(str(here.parent)) as r_here:
            base = _resolve_commit(r_here, base_ref)
        with Repo(str(main)) as r:
            if ref in r.refs:
                raise WorktreeError(
                    f"a branch named '{branch}' already exists; delete it or choose another name"
                )
            _add_worktree(r, common, target, ref, base, base_ref)
        sha = base.decode("ascii")
        return WorktreeInfo(target, branch, sha, base_commit=sha, is_new=True)

    # ------------------------------------------------------------------ changes

    def start_changes(
        self, worktree_path: PathLike, base_commit: str, *, dirs: WorktreeDirs | None = None
    ) -> Callable[[], Changes]:
        return lambda: self.changes(worktree_path, base_commit, dirs=dirs)

    def changes(
        self, worktree_path: PathLike, base_commit: str, *, dirs: WorktreeDirs | None = None
    ) -> Changes:
        try:
            if not Path(worktree_path).is_dir():
                return Changes.unknown(f"{worktree_path} is not a git worktree")
            with open_worktree(worktree_path, dirs) as (r, common):
                files = len(status_paths(r, common))
                commits = _count_commits(r, base_commit)
            return Changes(changed_files=files, commits=commits)
        # Fail-safe by design (WT-8): any failure means "keep the worktree".
        except Exception as error:
            log.warning("cannot determine changes of %s: %s", worktree_path, error)
            return Changes.unknown(f"cannot determine changes of {worktree_path}: {error}")

    # ------------------------------------------------------------------ diff

    def diff(
        self, worktree_path: PathLike, base_commit: str, *, dirs: WorktreeDirs | None = None
    ) -> WorktreeDiff:
        with open_worktree(worktree_path, dirs) as (r, common):
            try:
                base = r[ObjectID(base_commit.encode("ascii"))]
            except (KeyError, ValueError, UnicodeEncodeError) as error:
                raise WorktreeError(f"unknown base commit '{base_commit}'") from error
            if not isinstance(base, Commit):
                raise WorktreeError(f"{base_commit} is not a commit")
            # New blobs and trees live in memory only: a review writes nothing to the repo.
            scratch = MemoryObjectStore()
            store = OverlayObjectStore([scratch, r.object_store], add_store=scratch)
            tree = commit_tree(store, _snapshot(r, common, scratch))
            changes = tree_changes(store, base.tree, tree, rename_detector=RenameDetector(store))
            files: list[FileChange] = []
            patch = io.BytesIO()
            for change in changes:
                files.append(_file_change(store, change))
                old, new = change.old, change.new
                write_object_diff(
                    patch,
                    store,
                    (old.path, old.mode, old.sha) if old else (None, None, None),
                    (new.path, new.mode, new.sha) if new else (None, None, None),
                )
        return WorktreeDiff.make(base_commit, files, patch.getvalue().decode("utf-8", "replace"))

    # ------------------------------------------------------------------ remove

    def remove(
        self, repo: PathLike, path: PathLike, branch: str | None, *, force: bool = False
    ) -> None:
        self._remove(repo, path, branch, force=force, check_changes=not force)

    def remove_unchanged(self, repo: PathLike, path: PathLike, branch: str | None) -> None:
        """``remove`` of a worktree its caller has just found unchanged: no second status
        (the slow part of dulwich's remove); a locked one is still refused."""
        self._remove(repo, path, branch, force=False, check_changes=False)

    def _remove(
        self,
        repo: PathLike,
        path: PathLike,
        branch: str | None,
        *,
        force: bool,
        check_changes: bool,
    ) -> None:
        main = _require_main(repo)
        common = _require_common(main)
        entry = _registered(common, Path(path))
        if entry is None:
            raise WorktreeError(f"{path} is not a linked worktree of {main}")
        if entry.locked and not force:
            raise WorktreeError(f"{entry.path} is locked; unlock it or remove with force")
        if entry.path.exists() and not force:
            if not entry.exists:
                raise WorktreeError(f"{entry.path} has no .git file; remove with force to delete")
            if check_changes:
                _refuse_if_dirty(entry.path, common)
        if entry.path.exists():
            shutil.rmtree(entry.path)
        shutil.rmtree(entry.admin_dir, ignore_errors=True)
        if branch:
            with Repo(str(main)) as r:
                delete_branch(r, common, branch)


# ---------------------------------------------------------------------- helpers


class _WithoutFilters:
    """A config that hides the ``filter.<name>`` sections of ``refused`` (their ``required``
    included, which dulwich checks beside the driver)."""

    def __init__(self, config: Config, refused: set[str | None]) -> None:
        self._config, self._refused = config, refused

    def _hidden(self, section: tuple[bytes | str, ...]) -> bool:
        if len(section) != 2 or section[0] not in (b"filter", "filter"):
            return False
        name = section[1]
        return (name.decode("utf-8", "replace") if isinstance(name, bytes) else name) in (
            self._refused
        )

    def get(self, section: tuple[bytes | str, ...], name: bytes | str) -> Any:
        if self._hidden(section):
            raise KeyError(name)
        return self._config.get(section, name)

    def get_boolean(
        self, section: tuple[bytes | str, ...], name: bytes | str, default: bool = False
    ) -> bool:
        if self._hidden(section):
            return default
        return self._config.get_boolean(section, name, default)

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self._config, attribute)


class _NoRepositoryPrograms(FilterRegistry):
    """Filter drivers the repository's own config files define (or include) never run:
    a shipped ``.git/config``, or one an agent made, would run them in this process. The
    user's drivers (``~/.gitconfig``: git-lfs) and line-ending conversion still apply."""

    def __init__(self, r: Repo) -> None:
        files = git_command.config_files_of(Path(r.controldir()), Path(r.commondir()))
        self.refused = {
            e.subsection for e in git_command.repository_entries(files) if e.section == "filter"
        }
        super().__init__(r.get_config_stack(), r)

    @property
    def config(self) -> Config | None:
        return self._hiding

    @config.setter
    def config(self, value: Config | None) -> None:  # dulwich refreshes it at every use
        hiding = _WithoutFilters(value, self.refused) if value is not None else None
        self._hiding = cast("Config | None", hiding)

    def _create_from_config(self, name: str) -> FilterDriver | None:
        if name in self.refused:
            log.warning("filter %s of the repository's config not run", name)
            return None
        return super()._create_from_config(name)


def safe_normalizer(r: Repo) -> FilterBlobNormalizer:
    """``r.get_blob_normalizer()`` without the repository's own filter drivers."""
    if not isinstance(getattr(r.filter_context, "filter_registry", None), _NoRepositoryPrograms):
        r.filter_context = FilterContext(_NoRepositoryPrograms(r))
    return r.get_blob_normalizer()


@contextmanager
def open_worktree(
    worktree_path: PathLike, dirs: WorktreeDirs | None
) -> Iterator[tuple[Repo, Path]]:
    """The work tree at ``worktree_path`` opened with dulwich, with its common dir; only
    while its ``.git`` and ``commondir`` still lead to the dirs recorded for it (else
    registered for it), its object stores are real folders, and its admin dir's files are
    regular files (``WorktreeError`` otherwise)."""
    found = dirs_for(worktree_path, dirs)
    if found is None:
        raise WorktreeError(f"{worktree_path} is not a git worktree")
    check_dirs(found)
    dot_git = Path(worktree_path) / ".git"
    if not (dot_git.is_dir() or git_dirs.is_regular_file(dot_git)):
        raise WorktreeError(f"{dot_git} is neither a folder nor a regular file")
    for name in ("HEAD", "index", "commondir", "gitdir", "config.worktree", "config"):
        if layout.not_regular(found.git_dir / name):
            raise WorktreeError(f"{found.git_dir / name} is not a regular file")
    git_dir = git_dirs.git_dir_of(worktree_path)
    if (
        git_dir is None
        or not layout.same_path(git_dir, found.git_dir)
        or not layout.same_path(git_dirs.common_dir(git_dir), found.common)
    ):
        raise WorktreeError(
            f"{worktree_path}: its .git or commondir no longer lead to its registration"
        )
    with Repo(str(worktree_path)) as r:
        yield r, found.common


def _require_main(repo: PathLike) -> Path:
    main = git_dirs.main_repo_of(repo)
    if main is None:
        raise WorktreeError(f"{repo} is not inside a git repository")
    return main


def _require_common(main: Path) -> Path:
    common = git_dirs.common_dir_of(main)
    if common is None:
        raise WorktreeError(f"{main} is not a git repository")
    return common


def _open_main(repo: PathLike) -> Repo:
    return Repo(str(_require_main(repo)))


def _branch_of(head_file: Path) -> str | None:
    raw = git_dirs.read_small_file(head_file)
    if raw is None:
        return None
    head = raw.strip()
    if head.startswith(SYMREF + HEADS):
        return head[len(SYMREF + HEADS) :].decode("utf-8")
    return None


def _head_sha(r: Repo) -> str | None:
    try:
        return r.refs[Ref(b"HEAD")].decode("ascii")
    except KeyError:
        return None


def _linked_info(r: Repo, entry: layout.AdminEntry) -> WorktreeInfo:
    branch = _branch_of(entry.admin_dir / "HEAD")
    head: str | None = None
    raw = (git_dirs.read_small_file(entry.admin_dir / "HEAD") or b"").strip()
    try:
        if raw.startswith(SYMREF):
            head = r.refs[Ref(raw[len(SYMREF) :])].decode("ascii")
        elif raw:
            head = raw.decode("ascii")
    except (OSError, KeyError, UnicodeDecodeError, ValueError):
        head = None
    return WorktreeInfo(entry.path, branch, head, prunable=not entry.exists)


def _registered(common: Path, path: Path) -> layout.AdminEntry | None:
    for entry in layout.linked_worktrees(common):
        if layout.same_path(entry.path, path):
            return entry
    return None


def _live_entry(common: Path, target: Path) -> layout.AdminEntry | None:
    """The worktree registered at ``target`` if its folder exists (to reuse it).

    A registration whose folder is gone is dropped so that the path can be used again.
    """
    entry = _registered(common, target)
    if entry is None or entry.exists:
        return entry
    shutil.rmtree(entry.admin_dir, ignore_errors=True)
    return None


def _resolve_commit(r: Repo, base_ref: str) -> ObjectID:
    try:
        commit = parse_commit(r, base_ref.encode("utf-8"))
    except (KeyError, ValueError) as error:
        raise WorktreeError(f"unknown base ref '{base_ref}': {error}") from error
    return commit.id


def _add_worktree(
    r: Repo, common: Path, target: Path, ref: Ref, base: ObjectID, base_ref: str
) -> None:
    """Register ``target`` as a worktree on a new branch ``ref`` at ``base`` and check out."""
    made_dir = not target.exists()
    target.mkdir(parents=True, exist_ok=True)
    admin = layout.make_admin_dir(common, target)
    made_branch = False
    try:
        # "locked" keeps a concurrent `git worktree prune` off a half-made worktree, as git does.
        (admin / "locked").write_text("initializing\n", encoding="utf-8")
        # Absolute paths only: relative ones need git >= 2.48.
        (admin / "gitdir").write_text(f"{target / '.git'}\n", encoding="utf-8")
        (admin / "commondir").write_text("../..\n", encoding="utf-8")
        (admin / "HEAD").write_bytes(SYMREF + ref + b"\n")
        made_branch = r.refs.add_if_new(
            ref, base, message=f"branch: Created from {base_ref}".encode()
        )
        if not made_branch:
            raise WorktreeError(f"a branch named '{ref[len(HEADS) :].decode()}' already exists")
        (target / ".git").write_text(f"gitdir: {admin}\n", encoding="utf-8")
        with Repo(str(target)) as wt:
            safe_normalizer(wt)  # installs the filters reset_index uses
            wt.get_worktree().reset_index()
        (admin / "locked").unlink()
    except BaseException:
        shutil.rmtree(admin, ignore_errors=True)
        if made_dir:
            shutil.rmtree(target, ignore_errors=True)
        else:
            for child in target.iterdir():
                _remove_any(child)
        if made_branch:
            r.refs.remove_if_equals(ref, base)
            _drop_reflog(common, ref)
        raise


def _remove_any(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        with suppress(OSError):
            path.unlink()


def _refuse_if_dirty(path: Path, common: Path) -> None:
    try:
        with open_worktree(path, None) as (r, found_common):
            dirty = len(status_paths(r, found_common))
    except Exception as error:
        raise WorktreeError(
            f"cannot tell whether {path} has changes ({error}); remove with force to discard"
        ) from error
    if dirty:
        raise WorktreeError(
            f"{path} has {dirty} changed file(s); commit them or remove with force to discard"
        )


def delete_branch(r: Repo, common: Path, branch: str) -> bool:
    """Delete ``refs/heads/<branch>`` unless a worktree has it checked out; True if deleted."""
    ref = Ref(HEADS + branch.encode("utf-8"))
    if ref not in r.refs:
        return False
    heads = [common / "HEAD"] + [e.admin_dir / "HEAD" for e in layout.linked_worktrees(common)]
    for head in heads:
        if _branch_of(head) == branch:
            log.warning("branch %s is checked out at %s; kept", branch, head.parent)
            return False
    r.refs.remove_if_equals(ref, None)
    _drop_reflog(common, ref)
    return True


def _drop_reflog(common: Path, ref: Ref) -> None:
    # git deletes a branch's reflog with the branch; dulwich appends a deletion entry instead.
    with suppress(OSError):
        (common / "logs" / os.fsdecode(ref)).unlink()


def _count_commits(r: Repo, base_commit: str) -> int:
    head = r.refs[Ref(b"HEAD")]
    base = ObjectID(base_commit.encode("ascii"))
    if head == base:
        return 0
    if not isinstance(r[base], Commit):
        raise ValueError(f"{base_commit} is not a commit")
    return sum(1 for _ in r.get_walker(include=[head], exclude=[base]))


# ---------------------------------------------------------------------- diff

_CHANGE_STATUS: dict[str, FileStatus] = {
    CHANGE_ADD: "added",
    CHANGE_DELETE: "deleted",
    CHANGE_RENAME: "renamed",
    CHANGE_COPY: "added",
}


def _snapshot(
    r: Repo, common: Path, scratch: MemoryObjectStore
) -> list[tuple[bytes, ObjectID, int]]:
    """The worktree as ``git add --all`` would stage it: the index, with changed, deleted
    and untracked (not ignored) files applied; new blobs go to ``scratch``."""
    index = r.open_index()
    entries = {path: (sha, mode) for path, sha, mode in index.iterobjects()}
    normalizer = safe_normalizer(r)
    changed = get_unstaged_changes(index, r.path, normalizer.checkin_normalize)
    untracked = (p for p in _untracked(r, index) if p[-1:] != b"/")
    for path in [*changed, *untracked]:
        full = os.path.join(os.fsencode(r.path), path)
        try:
            st = os.lstat(full)
        except FileNotFoundError:
            entries.pop(path, None)
            continue
        blob = normalizer.checkin_normalize(blob_from_path_and_stat(full, st), path)
        scratch.add_object(blob)
        entries[path] = (blob.id, cleanup_mode(st.st_mode))
    return [(path, sha, mode) for path, (sha, mode) in entries.items()]


def _file_change(store: OverlayObjectStore, change: TreeChange) -> FileChange:
    old, new = change.old, change.new
    before = store[old.sha].as_raw_string() if old and old.sha else b""
    after = store[new.sha].as_raw_string() if new and new.sha else b""
    path = (new.path if new and new.path else old.path if old else None) or b""
    renamed = change.type == CHANGE_RENAME and old is not None and old.path is not None
    binary = is_binary(before) or is_binary(after)
    added = deleted = 0
    if not binary:
        a, b = before.splitlines(), after.splitlines()
        for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(
            None, a, b, autojunk=False
        ).get_opcodes():
            if tag != "equal":
                deleted += i2 - i1
                added += j2 - j1
    return FileChange(
        path=os.fsdecode(path).encode("utf-8", "surrogateescape").decode("utf-8", "replace"),
        status=_CHANGE_STATUS.get(change.type, "modified"),
        additions=added,
        deletions=deleted,
        binary=binary,
        old_path=os.fsdecode(old.path) if renamed and old and old.path else None,
    )


# ---------------------------------------------------------------------- status


def status_paths(r: Repo, common: Path) -> set[bytes]:
    """Paths ``git status --porcelain --untracked-files=all --no-renames`` would list."""
    index = r.open_index()
    paths: set[bytes] = set()
    try:
        head = r[r.refs[Ref(b"HEAD")]]
        tree = head.tree if isinstance(head, Commit) else None
    except KeyError:
        tree = None
    for (old, new), _modes, _shas in index.changes_from_tree(r.object_store, tree):
        name = new or old
        if name is not None:
            paths.add(name)
    normalizer = safe_normalizer(r)
    paths.update(get_unstaged_changes(index, r.path, normalizer.checkin_normalize))
    paths.update(_untracked(r, index))
    return paths


def walk_options(r: Repo) -> WalkOptions:
    """How git sees the files of ``r``'s work tree: hidden ones too, the user's global
    excludes file (``core.excludesFile``) after ``.gitignore`` files and ``info/exclude``."""
    source = default_user_ignore_filter_path(r.get_config_stack())
    return WalkOptions(hidden=True, excludes=PatternSet.from_file(Path(source).expanduser()))


def _untracked(r: Repo, index: Index) -> Iterator[bytes]:
    """Untracked, not ignored files; a nested repository counts once, as git shows it
    (``dir/``); a symbolic link to a directory is a file."""
    tracked = set(index.paths())

    def enter(entry: Entry) -> bool:
        return entry.ignored is not True and not entry.repository and entry.rel != ".git"

    for entry in walk_entries(Path(r.path), enter, walk_options(r)):
        encoded = os.fsencode(entry.rel)
        if entry.rel == ".git" or entry.ignored is True or encoded in tracked:
            continue
        if entry.repository:
            yield encoded + b"/"
        elif not entry.is_dir:
            yield encoded
