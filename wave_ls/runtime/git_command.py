"""wave-ls's own ``git``: the one way it runs git, with nothing of a repository that runs a
program switched on.

A repository's files can make git run programs: ``core.fsmonitor`` (at every status or
listing), hooks, filter drivers, ``core.sshCommand``, credential helpers, ``diff.external``,
a ``remote.<name>.uploadpack``... A repository shipped with its ``.git`` (an archive), or an
agent that wrote a git dir, must not run anything through our git. So every git command
wave-ls starts:

- gets ``safe_git_args``: ``-c`` overrides that switch off what runs programs. Always:
  fsmonitor, hooks, the ``ext::`` transport, signature display, automatic gc. When the
  repository's own config files set them (its ``config``, ``config.worktree`` and what they
  include): each filter driver, ``core.sshCommand``, credential helpers, ``core.askPass``,
  ``gpg.*program``, ``core.gitProxy``; fetches pass ``--upload-pack=git-upload-pack``. The user's
  own settings (``~/.gitconfig``: git-lfs, an SSH command, a credential helper) keep working.
  ``diff.external`` and diff drivers cannot be overridden by ``-c``: diffing commands pass
  ``--no-ext-diff --no-textconv`` (``NO_DIFF_PROGRAMS``).
- runs with ``git_environment``: no ``GIT_DIR``-like variables inherited, no prompts, no
  editor, no pager, no external diff;
- gets stdin from ``/dev/null`` (or its own pipe): the server's stdin is the editor's LSP
  pipe, which a planted program would otherwise read;
- leads a process group of its own (watched by the reaper) and has a deadline
  (``DEFAULT_TIMEOUT``): past it the whole group is killed and ``GitTimeout`` raised.

Blocking: async callers run these in a thread.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import signal
import subprocess
import threading
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wave_ls.runtime import git_dirs

if TYPE_CHECKING:
    from wave_ls.runtime.sandbox import Confinement

log = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 30.0
# A config file bigger than this is not read for overrides (and git would be slow on it).
MAX_CONFIG_BYTES = 1024 * 1024
MAX_INCLUDE_DEPTH = 10  # git's own limit

# Switched off for every command, whoever set them.
ALWAYS_OFF: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("protocol.ext.allow", "never"),
    ("log.showSignature", "false"),
    ("core.alternateRefsCommand", "true"),
    ("gc.auto", "0"),
    ("maintenance.auto", "false"),
)
# What a fetch runs on the other side (a local remote: here): never the config's.
UPLOAD_PACK = "--upload-pack=git-upload-pack"
# Diffing commands: diff.external and diff drivers (command, textconv) cannot be reset by -c.
NO_DIFF_PROGRAMS = ("--no-ext-diff", "--no-textconv")

# Set by git hooks and some shells; any of them would point our commands at another repo,
# or run a program (an external diff).
_DROPPED_ENV = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
    "GIT_EXTERNAL_DIFF",
    "GIT_QUARANTINE_PATH",
)
_QUIET_ENV = {
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_EDITOR": "true",
    "GIT_SEQUENCE_EDITOR": "true",
    "GIT_PAGER": "cat",
    "PAGER": "cat",
}


class GitCommandError(Exception):
    """git could not be started, or did not end in time (``GitTimeout``)."""


class GitTimeout(GitCommandError):
    """A git command ran past its deadline; its process group was killed."""


def git_environment(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The server's environment without repository variables, with prompts, editors, pagers
    and external diffs off, plus ``extra``."""
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED_ENV}
    env.update(_QUIET_ENV)
    env.update(extra or {})
    return env


# ---------------------------------------------------------------------- config overrides


@dataclass(frozen=True)
class _Entry:
    section: str  # lower case
    subsection: str | None  # as written
    key: str  # lower case
    value: str


_SECTION = re.compile(r'\s*\[\s*([A-Za-z0-9.-]+)\s*(?:"((?:[^"\\]|\\.)*)")?\s*\]')
_KEY = re.compile(r"\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$")


def parse_config(text: str) -> list[_Entry]:
    """The entries of a git config file (enough for our overrides: sections, subsections,
    keys, unquoted values; continuation lines and odd quoting read loosely)."""
    entries: list[_Entry] = []
    section, subsection = "", None
    for raw in text.splitlines():
        line = raw
        while True:
            header = _SECTION.match(line)
            if header is None:
                break
            name, sub = header.group(1), header.group(2)
            if sub is None and "." in name:  # the old [section.subsection] form
                name, _, sub = name.partition(".")
            section, subsection = name.lower(), sub.replace('\\"', '"') if sub else sub
            line = line[header.end() :]
        if not section:
            continue
        found = _KEY.match(line.split("#", 1)[0].split(";", 1)[0]) if line.strip() else None
        if found is None:
            continue
        value = (found.group(2) or "").strip()
        if len(value) >= 2 and value[0] == value[-1] == '"':
            value = value[1:-1]
        entries.append(_Entry(section, subsection, found.group(1).lower(), value))
    return entries


def _read_config(path: Path) -> str | None:
    data = git_dirs.read_small_file(path, MAX_CONFIG_BYTES)
    return None if data is None else data.decode("utf-8", "replace")


def _include_target(value: str, including: Path) -> Path | None:
    if not value:
        return None
    if value.startswith("~/"):
        return Path.home() / value[2:]
    target = Path(value)
    return target if target.is_absolute() else including.parent / target


def repository_entries(files: Iterable[Path]) -> list[_Entry]:
    """The entries of a repository's own config files and of every file they include
    (``include.path`` and every ``includeIf``, whatever its condition: more is safer)."""
    entries: list[_Entry] = []
    seen: set[str] = set()

    def read(path: Path, depth: int) -> None:
        key = os.path.realpath(path)
        if depth > MAX_INCLUDE_DEPTH or key in seen:
            return
        seen.add(key)
        text = _read_config(path)
        if text is None:
            return
        for entry in parse_config(text):
            entries.append(entry)
            if entry.section in ("include", "includeif") and entry.key == "path":
                target = _include_target(entry.value, path)
                if target is not None:
                    read(target, depth + 1)

    for path in files:
        read(path, 0)
    return entries


# ``-c name=value`` ends the name at the first "=": a subsection holding one cannot be
# overridden, so a command in such a repository is refused (``UnsafeConfig``).
_SUBSECTION_SAFE = re.compile(r"[^=\0\n]*")


class UnsafeConfig(GitCommandError):
    """The repository's config sets something wave-ls cannot switch off for its git."""


def overrides_for(entries: Iterable[_Entry]) -> list[tuple[str, str]]:
    """The ``-c`` overrides that switch off what ``entries`` (a repository's own config)
    would make git run."""
    out: dict[str, str] = {}
    for e in entries:
        sub = e.subsection
        if e.section == "filter" and sub is not None and not _SUBSECTION_SAFE.fullmatch(sub):
            raise UnsafeConfig(f"the repository's config names a {e.section} {sub!r}")
        if e.section == "filter" and sub is not None:
            for key in ("clean", "smudge", "process"):
                out[f"filter.{sub}.{key}"] = ""
            out[f"filter.{sub}.required"] = "false"
        elif e.section == "core" and sub is None:
            if e.key == "sshcommand":
                out["core.sshCommand"] = "ssh"
            elif e.key == "askpass":
                out["core.askPass"] = ""
            elif e.key == "gitproxy":  # the first match wins: it cannot be overridden
                out["protocol.git.allow"] = "never"
        elif e.section == "credential" and e.key == "helper":
            out["credential.helper"] = ""  # an empty value empties the list
        elif e.section == "gpg" and e.key in ("program", "defaultkeycommand"):
            key = "program" if e.key == "program" else "defaultKeyCommand"
            out["gpg." + (f"{sub}." if sub else "") + key] = "false"
    return list(out.items())


_cache_lock = threading.Lock()
_cache: dict[tuple[str, ...], tuple[tuple[Any, ...], list[tuple[str, str]]]] = {}


def _stamp(paths: Sequence[Path]) -> tuple[Any, ...]:
    stamps: list[Any] = []
    for path in paths:
        try:
            info = os.stat(path)
            stamps.append((info.st_ino, info.st_size, info.st_mtime_ns))
        except (OSError, ValueError):
            stamps.append(None)
    return tuple(stamps)


def repository_overrides(config_files: Sequence[Path]) -> list[tuple[str, str]]:
    """``overrides_for`` the repository config files given, cached by their stat (an
    included file that changes alone is read again when the including file changes)."""
    key = tuple(str(path) for path in config_files)
    stamp = _stamp(config_files)
    with _cache_lock:
        cached = _cache.get(key)
        if cached is not None and cached[0] == stamp:
            return cached[1]
    found = overrides_for(repository_entries(config_files))
    with _cache_lock:
        if len(_cache) > 256:
            _cache.clear()
        _cache[key] = (stamp, found)
    return found


def config_files_of(git_dir: Path | None, common: Path | None) -> list[Path]:
    """The repository's own config files git reads for a command in ``git_dir`` (a linked
    worktree's admin dir, or a repository's git dir) with ``common``: ``config`` and the
    ``config.worktree`` files (read whether or not ``extensions.worktreeConfig`` is on)."""
    files: list[Path] = []
    if common is not None:
        files += [common / "config", common / "config.worktree"]
    if git_dir is not None and (common is None or git_dir != common):
        files.append(git_dir / "config.worktree")
    return files


def safe_git_args(config_files: Sequence[Path] = ()) -> list[str]:
    """The options before every git subcommand: ``--no-pager``, the ``ALWAYS_OFF``
    overrides, and those for the repository config files ``config_files``."""
    args = ["--no-pager"]
    for name, value in (*ALWAYS_OFF, *repository_overrides(config_files)):
        args += ["-c", f"{name}={value}"]
    return args


def config_files_for(cwd: Path, env: dict[str, str] | None = None) -> list[Path]:
    """The repository config files a git command run in ``cwd`` (with ``env``'s
    ``GIT_DIR``/``GIT_COMMON_DIR`` when given) reads."""
    env = env or {}
    if "GIT_DIR" in env:
        named = Path(env["GIT_DIR"])
        common = Path(env["GIT_COMMON_DIR"]) if "GIT_COMMON_DIR" in env else None
        return config_files_of(named, common or git_dirs.common_dir(named))
    found = git_dirs.git_dir_of(cwd)
    if found is None:
        return []
    return config_files_of(found, git_dirs.common_dir(found))


def git_argv(
    cwd: Path,
    args: Sequence[str],
    env: dict[str, str] | None = None,
    config_files: Sequence[Path] = (),
) -> list[str]:
    """``git <safe options> <args>`` for a command run in ``cwd`` with ``env``; the
    repository config files it reads are found, ``config_files`` are added (those of a git
    the command itself starts in another work tree)."""
    args = list(args)
    if args[:1] in (["fetch"], ["pull"], ["ls-remote"]):
        # remote.<name>.uploadpack is multi-valued and git takes the first: -c cannot
        # override a repository's; the option does.
        args.insert(1, UPLOAD_PACK)
    return ["git", *safe_git_args([*config_files_for(cwd, env), *config_files]), *args]


# ---------------------------------------------------------------------- running


def start_git(
    cwd: Path,
    commands: Sequence[Sequence[str]],
    *,
    env: dict[str, str] | None = None,
    sandbox: Confinement | None = None,
    text: bool = True,
    stdin: int | None = None,
    stdout: int | None = subprocess.PIPE,
    config_files: Sequence[Path] = (),
) -> list[subprocess.Popen[Any]]:
    """Start each of ``commands`` (git's arguments) in ``cwd``, each leading its own process
    group, watched by the reaper. ``stdin`` is ``/dev/null`` unless given (a pipe)."""
    from wave_ls.runtime.processes import popen_confined, reaper

    environment = git_environment(env)
    options: dict[str, Any] = {
        "cwd": cwd,
        "env": environment,
        "stdin": subprocess.DEVNULL if stdin is None else stdin,
        "stdout": stdout,
        "stderr": subprocess.PIPE,
        "process_group": 0,  # its own group, to kill; setsid would cost a fork (no vfork)
    }
    if text:
        options.update(text=True, encoding="utf-8", errors="surrogateescape")
    starts = [(git_argv(Path(cwd), args, env, config_files), options) for args in commands]
    try:
        if sandbox is not None:
            procs = popen_confined(starts, sandbox)
        else:
            procs = [subprocess.Popen(argv, **opts) for argv, opts in starts]
    except OSError as error:
        raise GitCommandError(f"cannot run git in {cwd}: {error}") from error
    for proc in procs:
        reaper.watch(proc.pid)
    return procs


def finish_git(
    procs: Sequence[subprocess.Popen[Any]],
    commands: Sequence[Sequence[str]],
    timeout: float = DEFAULT_TIMEOUT,
    inputs: Sequence[Any] | None = None,
) -> list[subprocess.CompletedProcess[Any]]:
    """Collect ``procs`` (as ``subprocess.run`` would) within one deadline; past it every
    group is killed and ``GitTimeout`` raised."""
    deadline = time.monotonic() + timeout
    results: list[subprocess.CompletedProcess[Any]] = []
    for index, (proc, args) in enumerate(zip(procs, commands, strict=True)):
        data = inputs[index] if inputs is not None else None
        try:
            out, err = proc.communicate(data, timeout=max(deadline - time.monotonic(), 0.01))
        except subprocess.TimeoutExpired:
            for running in procs[index:]:  # only those not reaped: a reaped pid may be reused
                kill_git(running)
            late = " ".join(args[:2])
            raise GitTimeout(f"git {late} did not finish within {timeout:g} s (stopped)") from None
        results.append(subprocess.CompletedProcess(["git", *args], proc.returncode, out, err))
    return results


def kill_git(proc: subprocess.Popen[Any]) -> None:
    """SIGKILL the command's process group and reap it; pipes held open by a descendant
    that left the group are closed rather than waited for."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    try:
        proc.communicate(timeout=1)
    except (subprocess.TimeoutExpired, ValueError, OSError):
        for stream in (proc.stdin, proc.stdout, proc.stderr):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(1)


def run_git_commands(
    cwd: Path,
    commands: Sequence[Sequence[str]],
    *,
    env: dict[str, str] | None = None,
    sandbox: Confinement | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    text: bool = True,
    config_files: Sequence[Path] = (),
) -> list[subprocess.CompletedProcess[Any]]:
    """Run ``commands`` concurrently in ``cwd``; results in the same order. Raises
    ``GitCommandError`` only when git cannot start, ``GitTimeout`` past ``timeout``."""
    procs = start_git(cwd, commands, env=env, sandbox=sandbox, text=text, config_files=config_files)
    return finish_git(procs, commands, timeout)


def run_git(
    cwd: Path,
    *args: str,
    env: dict[str, str] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    text: bool = True,
    config_files: Sequence[Path] = (),
) -> subprocess.CompletedProcess[Any]:
    """``git <args>`` in ``cwd`` (see ``run_git_commands``)."""
    return run_git_commands(
        cwd, [args], env=env, timeout=timeout, text=text, config_files=config_files
    )[0]
