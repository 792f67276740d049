"""Parsed agent files kept on disk between processes.

Reading the frontmatter through strictyaml's public API costs about 3 ms a file (its schema
validation copies the document), so a fresh process would spend seconds on a thousand
agent files. ``<home>/.wave/cache/agent-files.json`` keeps each file's outcome (its
definition and problems), keyed by the file's path, size and mtime and by how it was read
(source, plugin); a file changed within the last seconds is never taken from it (a second
change could hide inside the timestamp's granularity). The cache also records a digest of
the parser's own source: a new version of wave-ls parses everything again. It is only a
cache: a missing, broken or stale file costs only time.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import os
import tempfile
from dataclasses import asdict, fields
from pathlib import Path
from types import MappingProxyType
from typing import Any

from wave_ls.agents.definition import AgentDefinition, Problem, Span
from wave_ls.agents.discovery import ParsedFile

log = logging.getLogger(__name__)

CACHE_FILE = Path(".wave") / "cache" / "agent-files.json"
MAX_ENTRIES = 20_000
# Relative to wave_ls/agents/.
_PARSER_MODULES = (
    "parse.py",
    "frontmatter.py",
    "definition.py",
    "toolset.py",
    "../runtime/frontmatter.py",
    "../runtime/mention_names.py",
)

# path, content digest (hex), source, plugin: a file is recalled only for the same bytes, so
# a rewrite that keeps size and mtime (a restored backup, a coarse clock) is parsed again.
Key = tuple[str, str, str, str]
FORMAT = 2  # of the keys; part of the version, so an older cache is dropped whole
# One entry per file as it is read (path, source, plugin), holding its latest outcome: each
# save of an agent file replaces its entry. Keyed by content as well, every save added one,
# and a cache grown to MAX_ENTRIES took ~0.5 s to load at every start.
_File = tuple[str, str, str]


def parser_digest() -> str:
    """A digest of the modules whose code decides what a file parses to."""
    digest = hashlib.blake2b(digest_size=8)
    here = Path(__file__).parent
    for name in _PARSER_MODULES:
        with contextlib.suppress(OSError):
            digest.update((here / name).read_bytes())
    return digest.hexdigest()


class ParseCache:
    """The on-disk cache of one home folder (load once, ``save`` after changes)."""

    def __init__(self, home: Path) -> None:
        self.path = home / CACHE_FILE
        self.version = f"{FORMAT}-{parser_digest()}"
        self._entries: dict[_File, tuple[str, dict[str, Any]]] | None = None
        self._dirty = False

    def get(self, key: Key) -> ParsedFile | None:
        """The outcome kept for this file with these bytes (``key``'s digest), or None."""
        path, digest, source, plugin = key
        known = self._load().get((path, source, plugin))
        if known is None or known[0] != digest:
            return None
        entry = known[1]
        try:
            return _parsed_from_json(entry, Path(key[0]))
        except (KeyError, TypeError, ValueError):
            return None

    def put(self, key: Key, parsed: ParsedFile) -> None:
        """Keep ``parsed`` as the outcome of this file, in place of any earlier one."""
        path, digest, source, plugin = key
        entries = self._load()
        entries.pop((path, source, plugin), None)  # newest last: the oldest go first when full
        entries[(path, source, plugin)] = (digest, _parsed_to_json(parsed))
        while len(entries) > MAX_ENTRIES:
            entries.pop(next(iter(entries)))
        self._dirty = True

    def save(self) -> bool:
        """Write the cache if anything changed (atomically; a failure is only logged);
        whether there was anything to write."""
        if not self._dirty or self._entries is None:
            return False
        self._dirty = False
        data = {
            "version": self.version,
            "entries": [
                [[path, digest, source, plugin], entry]
                for (path, source, plugin), (digest, entry) in self._entries.items()
            ],
        }
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            fd, temp = tempfile.mkstemp(dir=self.path.parent, prefix=".agent-files-")
            try:
                # dumps, not dump: only dumps uses the C encoder (5,000 entries: 0.9 s -> 0.06 s).
                text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    handle.write(text)
                os.replace(temp, self.path)
            except BaseException:
                with contextlib.suppress(OSError):
                    os.unlink(temp)
                raise
        except OSError as error:
            log.debug("cannot save the agent parse cache %s: %s", self.path, error)
        return True

    def _load(self) -> dict[_File, tuple[str, dict[str, Any]]]:
        if self._entries is None:
            self._entries = {}
            try:
                data = json.loads(self.path.read_bytes())
                if data.get("version") == self.version:
                    self._entries = {
                        (path, source, plugin): (digest, entry)
                        for (path, digest, source, plugin), entry in data["entries"]
                    }  # a file listed twice (written before one entry per file): the last
                    self._dirty = len(self._entries) < len(data["entries"])
            except FileNotFoundError:
                pass
            except (OSError, ValueError, TypeError, KeyError, AttributeError) as error:
                log.debug("ignoring the agent parse cache %s: %s", self.path, error)
        return self._entries


def _parsed_to_json(parsed: ParsedFile) -> dict[str, Any]:
    definition = parsed.definition
    out: dict[str, Any] = {
        "problems": [asdict(problem) for problem in parsed.problems],
        "nameLine": parsed.name_line,
    }
    if definition is not None:
        values = {field.name: getattr(definition, field.name) for field in fields(definition)}
        values["path"] = None if definition.path is None else str(definition.path)
        values["extra"] = dict(definition.extra)
        values["hooks"] = dict(definition.hooks)
        out["definition"] = values
    return out


def _parsed_from_json(entry: dict[str, Any], path: Path) -> ParsedFile:
    problems = tuple(
        Problem(**{**p, "span": Span(**p["span"]) if p.get("span") else None})
        for p in entry["problems"]
    )
    values = entry.get("definition")
    definition = None
    if values is not None:
        definition = AgentDefinition(
            **{
                **values,
                "tools": None if values["tools"] is None else tuple(values["tools"]),
                "disallowed_tools": None
                if values["disallowed_tools"] is None
                else tuple(values["disallowed_tools"]),
                "path": None if values["path"] is None else Path(values["path"]),
                "extra": MappingProxyType(dict(values["extra"])),
                "skills": tuple(values.get("skills", ())),
                "mcp_tools": tuple(values.get("mcp_tools", ())),
            }
        )
    return ParsedFile(path, definition, problems, entry.get("nameLine"))
