"""Memory: the project's and the user's standing instructions, given to every agent.

Sources, in the order the model reads them:

1. project memory: ``<cwd>/AGENTS.md``, or ``<cwd>/CLAUDE.md`` when AGENTS.md gives nothing;
2. project rules: ``<cwd>/.wave/rules/**/*.md`` without a ``paths:`` frontmatter key;
3. user memory: ``<home>/.wave/AGENTS.md``;
4. user rules: ``<home>/.wave/rules/**/*.md``, likewise.

They reach the model as one ``<system-reminder>`` text (``memory_reminder``), which the
conversation sends as the user-role message right after the system prompt of every request
(``AgentConfig.context_reminder``, read once per turn: an edit counts from the next turn);
it is never stored in the history. Rules with ``paths:`` apply only to matching files and
are not loaded here. A subagent with ``omitAgentsMd: true`` gets none of it: its reminder
is ``None`` (FM-1, EXP-3).
"""

from __future__ import annotations

import logging
import os
import stat as stat_module
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from wave_ls.runtime.frontmatter import FrontmatterError, optional_frontmatter

log = logging.getLogger(__name__)

MemoryKind = Literal["project", "project_rule", "user", "user_rule"]

_TITLES: dict[MemoryKind, str] = {
    "project": "Project memory",
    "project_rule": "Project rule",
    "user": "User memory",
    "user_rule": "User rule",
}


@dataclass(frozen=True)
class MemorySource:
    """One memory file that contributes text (frontmatter already removed)."""

    kind: MemoryKind
    path: Path
    content: str

    @property
    def title(self) -> str:
        return f"{_TITLES[self.kind]} ({self.path})"


@dataclass(frozen=True)
class MemorySettings:
    """``enabled=False``: no memory at all (what ``omitAgentsMd`` means; the subagent runner
    gives such an agent no reminder without loading anything)."""

    enabled: bool = True


def load_memory(
    cwd: Path, home: Path, settings: MemorySettings | None = None
) -> list[MemorySource]:
    """Every memory source that has text, in reading order. Never raises for a bad file.

    ``cwd`` is the session's working directory (for a subagent, its parent session's, even
    in an isolated worktree: memory comes from the parent session).
    """
    if settings is not None and not settings.enabled:
        return []
    sources: list[MemorySource] = []
    for name in ("AGENTS.md", "CLAUDE.md"):
        text = _read(cwd / name)
        if text:
            sources.append(MemorySource("project", cwd / name, text))
            break
    sources += _rules(cwd / ".wave" / "rules", "project_rule")
    user_file = home / ".wave" / "AGENTS.md"
    if text := _read(user_file):
        sources.append(MemorySource("user", user_file, text))
    sources += _rules(home / ".wave" / "rules", "user_rule")
    # One file reached twice (cwd == home, a symlinked AGENTS.md) is read once.
    unique: dict[str, MemorySource] = {}
    for source in sources:
        unique.setdefault(os.path.realpath(source.path), source)
    return list(unique.values())


def memory_reminder(sources: list[MemorySource]) -> str | None:
    """The ``<system-reminder>`` text the model reads, or None when there is no memory."""
    if not sources:
        return None
    sections = "\n\n".join(f"# {source.title}\n{source.content}" for source in sources)
    return (
        "<system-reminder>\n"
        "As you answer the user's questions, you can use the following context:\n"
        f"{sections}\n\n"
        "IMPORTANT: follow these instructions where they apply to the task. When project and "
        "user instructions conflict, the project's win.\n"
        "</system-reminder>"
    )


def memory_reminder_for(
    cwd: Path, home: Path, settings: MemorySettings | None = None
) -> str | None:
    """``memory_reminder(load_memory(cwd, home, settings))``: the usual one-step call."""
    return memory_reminder(load_memory(cwd, home, settings))


# --------------------------------------------------------------------------- files

# (path, is rule) -> (mtime_ns, size, text or None when the file gives nothing). Memory is
# loaded at every turn of every agent and rules need a YAML parse: a file is read again only
# when it changed.
_cache: dict[tuple[Path, bool], tuple[int, int, str | None]] = {}


def _read(path: Path, rule: bool = False) -> str | None:
    """The file's text (stripped, frontmatter removed for rules); None if it gives nothing."""
    try:
        stat = path.stat()
    except FileNotFoundError:
        return None
    except OSError as error:
        log.warning("memory file %s skipped: %s", path, error)
        return None
    if not stat_module.S_ISREG(stat.st_mode):
        return None
    cached = _cache.get((path, rule))
    if cached is not None and cached[:2] == (stat.st_mtime_ns, stat.st_size):
        return cached[2]
    try:
        raw = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        log.warning("memory file %s skipped: %s", path, error)
        return None
    text: str | None = _rule_body(path, raw) if rule else raw.strip()
    _cache[(path, rule)] = (stat.st_mtime_ns, stat.st_size, text or None)
    return text or None


def _rules(directory: Path, kind: MemoryKind) -> list[MemorySource]:
    """Unconditional rules under ``directory`` (subfolders and symlinks followed)."""
    if not directory.is_dir():
        return []
    found: list[tuple[str, Path]] = []
    seen: set[str] = set()
    for root, dirs, files in os.walk(directory, followlinks=True):
        real = os.path.realpath(root)
        if real in seen:  # a symlink loop, or the same folder linked twice
            dirs.clear()
            continue
        seen.add(real)
        dirs.sort()
        for name in files:
            if name.endswith(".md"):
                path = Path(root) / name
                found.append((path.relative_to(directory).as_posix(), path))
    sources = []
    for _, path in sorted(found):
        text = _read(path, rule=True)
        if text:
            sources.append(MemorySource(kind, path, text))
    return sources


def _rule_body(path: Path, raw: str) -> str | None:
    """The rule's text, or None when it is conditional (``paths:``) or unreadable."""
    try:
        header, body = optional_frontmatter(raw)
    except FrontmatterError:
        log.warning("memory rule %s skipped: its frontmatter has no closing '---'", path)
        return None
    if header is not None and header.strip():
        import strictyaml  # only rules with frontmatter pay for the import

        try:
            data = strictyaml.dirty_load(header, allow_flow_style=True, label=str(path)).data
        except strictyaml.YAMLError as error:
            # A broken header may be a conditional rule: loading it everywhere would be wrong.
            log.warning("memory rule %s skipped: invalid frontmatter: %s", path, error)
            return None
        if isinstance(data, dict) and data.get("paths"):
            return None
    return body


# --------------------------------------------------------------------------- agent memory

AGENT_MEMORY_FILE = "MEMORY.md"
AGENT_MEMORY_LINES = 200  # of MEMORY.md, shown at each start (as Claude Code)
AgentMemoryScope = Literal["user", "project", "local"]


def agent_memory_dir(scope: str, name: str, project: Path, home: Path) -> Path:
    """A subagent's persistent memory folder: ``user`` ``~/.wave/agent-memory/<name>/``,
    ``project`` ``<project>/.wave/agent-memory/<name>/``, ``local``
    ``<project>/.wave/agent-memory-local/<name>/`` (Claude Code's, under ``.wave``)."""
    bases = {
        "user": home / ".wave" / "agent-memory",
        "project": project / ".wave" / "agent-memory",
        "local": project / ".wave" / "agent-memory-local",
    }
    folder = name.replace("/", "-").replace("\\", "-")
    return bases[scope] / (folder if folder.strip(".") else "_")


def prepare_agent_memory(directory: Path, scope: str) -> None:
    """Make the folder (a ``local`` one is kept out of git); failures are only logged."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        ignore = directory.parent / ".gitignore"
        if scope == "local" and not ignore.exists():
            ignore.write_text("# Personal agent memory (memory: local): never committed.\n*\n")
    except OSError as error:
        log.warning("agent memory folder %s not made: %s", directory, error)


def agent_memory_prompt(directory: Path, scope: str) -> str:
    """The system prompt section of an agent with ``memory``: where its folder is, how to
    keep it, and the first ``AGENT_MEMORY_LINES`` lines of its ``MEMORY.md``."""
    index = directory / AGENT_MEMORY_FILE
    try:
        lines = index.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        lines = []
    shown = "\n".join(lines[:AGENT_MEMORY_LINES]).strip()
    if len(lines) > AGENT_MEMORY_LINES:
        shown += f"\n[... MEMORY.md has {len(lines)} lines; only the first 200 are shown]"
    return (
        "\n\n# Persistent agent memory\n\n"
        f"You have a persistent memory folder, {directory} ({scope} scope), that outlives "
        "this run. Consult it before you start, and keep it up to date as you work: record "
        "what will help you next time (patterns, decisions, conventions, pitfalls) and "
        f"remove what is no longer true. {AGENT_MEMORY_FILE} in it is the index, shown "
        f"below at every start: only its first {AGENT_MEMORY_LINES} lines are, so keep it "
        "short and move details into other files of that folder, named in the index. Use "
        "Read, Write and Edit there; changes inside that folder need no approval.\n\n"
        f"## {AGENT_MEMORY_FILE}\n\n"
        + (shown or f"({AGENT_MEMORY_FILE} does not exist yet: create it.)")
    )
