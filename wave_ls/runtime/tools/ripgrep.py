"""Grep's search through ``rg`` (ripgrep), parsed into the same ``FileHits`` as the fallback."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig

from wave_ls.runtime.core import ToolError
from wave_ls.runtime.tools.grep_engine import FileHits, GrepQuery, sort_key

# Settings that would make rg see other files than the pure-Python search are switched off.
BASE_ARGS = ["--no-config", "--no-ignore-dot", "--no-ignore-global", "--color", "never"]
LINE_RE = re.compile(rb"(\d+)([:-])")


def find_ripgrep() -> str | None:
    """The ``rg`` executable: the one the ``ripgrep`` package (a dependency) installed
    beside our Python, else one on PATH, else None (Grep then searches in Python)."""
    for scripts in dict.fromkeys((sysconfig.get_path("scripts"), os.path.dirname(sys.executable))):
        candidate = os.path.join(scripts, "rg")
        if os.access(candidate, os.X_OK) and os.path.isfile(candidate):
            return candidate
    return shutil.which("rg")


def ripgrep_args(query: GrepQuery, target: str) -> list[str]:
    args = list(BASE_ARGS)
    if query.mode == "files_with_matches":
        args += ["--files-with-matches", "--null"]
    elif query.mode == "count":
        args += ["--count", "--with-filename", "--null"]
    else:
        args += ["--line-number", "--with-filename", "--no-heading", "--null"]
        if query.after:
            args += ["--after-context", str(query.after)]
        if query.before:
            args += ["--before-context", str(query.before)]
    if query.ignore_case:
        args.append("--ignore-case")
    if query.multiline:
        args.append("--multiline")
    for glob in query.globs:
        args += ["--glob", glob]
    if query.file_type:
        args += ["--type", query.file_type]
    return [*args, "--regexp", query.pattern, "--", target]


def _path(raw: bytes) -> str:
    return os.fsdecode(raw).removeprefix("./")


def parse_output(mode: str, out: bytes) -> list[FileHits]:
    """Parse rg's ``--null`` output for one of the three modes."""
    if mode == "files_with_matches":
        return [FileHits(_path(raw), 1) for raw in out.split(b"\0") if raw.strip(b"\n")]
    by_path: dict[str, FileHits] = {}
    for line in out.split(b"\n"):
        if b"\0" not in line:
            continue  # "--" between context groups, or the trailing empty line
        raw_path, rest = line.split(b"\0", 1)
        path = _path(raw_path)
        if mode == "count":
            by_path[path] = FileHits(path, int(rest))
            continue
        found = LINE_RE.match(rest)
        if found is None:
            continue
        hits = by_path.setdefault(path, FileHits(path))
        is_match = found.group(2) == b":"
        text = rest[found.end() :].decode("utf-8", errors="replace").rstrip("\r")
        hits.lines[int(found.group(1))] = (is_match, text)
        hits.count += is_match
    return list(by_path.values())


async def search_ripgrep(query: GrepQuery, rg: str = "rg") -> list[FileHits]:
    """Run rg on ``query`` (globs relative to the root, as in the fallback)."""
    if query.root.is_file():
        cwd, target = query.root.parent, query.root.name
    else:
        cwd, target = query.root, "."
    process = await asyncio.create_subprocess_exec(
        rg,
        *ripgrep_args(query, target),
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        out, err = await process.communicate()
    except BaseException:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        raise
    if process.returncode == 2 and not out:
        message = err.decode("utf-8", errors="replace").strip()
        raise ToolError(f"Grep failed: {message}" if message else "Grep failed (rg exit 2)")
    results = parse_output(query.mode, out)
    results.sort(key=sort_key)
    return results
