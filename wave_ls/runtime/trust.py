"""Workspace trust: what a cloned repository may do before the user trusts its folder.

What counts as "from the repository" is what git tracks (``from_repository``): a file the
folder's repository has in its index arrived with a clone or a pull; untracked files were
written on this machine and are the user's. Until the user trusts the folder, the parts of
repository files that can run code or loosen a rule are held back (each feature leaves them
out where it reads them; ``trust_status`` lists them, with a reason, in one place):

- ``hooks``, ``sandbox``, ``permissions``, ``mcpServers``, ``mcp`` of a tracked
  ``.wave/settings.json`` or ``.wave/settings.local.json`` (``runtime/project_settings.py``);
- ``hooks`` in the frontmatter of a tracked project agent file, and a tracked project agent's
  ``permissionMode`` looser than the session's (the agent runs in the session's mode);
- a tracked ``.mcp.json``'s servers;
- a tracked registry record (``.wave/worktrees/.registry/*.json``): records without
  wave-ls's seal (``runtime/record_seal.py``) are never used, trusted or not.

Text for the model (agent files, memory, rules, model tiers) still loads. The decisions are
the user's, kept in ``~/.wave/trust.json`` (``runtime/trust_store.py``) for the repository
root; a decision covers the folders below it. A folder with nothing held back behaves as if
trust did not exist.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wave_ls.runtime import record_seal, trust_store
from wave_ls.runtime.frontmatter import FrontmatterError, split_frontmatter
from wave_ls.runtime.git_index import (
    find_repository,
    from_repository,
    tracked_under,
)
from wave_ls.runtime.project_settings import held_back_keys, read_layers
from wave_ls.runtime.regular_files import read_if_regular

__all__ = [
    "HeldBack",
    "TrustStatus",
    "from_repository",
    "is_trusted",
    "looser_mode",
    "record_is_sealed",
    "set_trust",
    "trust_status",
]

AGENT_DIRS = (".wave/agents", ".claude/agents")
REGISTRY_DIR = ".wave/worktrees/.registry"
MCP_JSON = ".mcp.json"
MAX_AGENT_BYTES = 1024 * 1024
# How much of an agents folder is read to rule out anything held back without the index.
MAX_SCANNED_AGENT_FILES = 2_000
MAX_SCANNED_DEPTH = 8
MAX_JSON_BYTES = 4 * 1024 * 1024
# Modes that allow more than the default asks for; plan and dontAsk allow less.
LOOSER_MODES = frozenset({"acceptEdits", "bypassPermissions"})
_MODE_ORDER = {"plan": 0, "dontAsk": 0, "default": 1, "acceptEdits": 2, "bypassPermissions": 3}
_TOP_KEY = re.compile(r"""^(?:"([^"]+)"|'([^']+)'|([A-Za-z_][\w-]*))\s*:(.*)$""")

_SETTINGS_REASONS = {
    "hooks": "hooks run commands on this machine",
    "sandbox": "sandbox settings decide what commands may reach",
    "permissions": "permission rules let tools run without asking",
    "mcpServers": "MCP servers are programs started on this machine",
    "mcp": "MCP settings start or allow servers",
}


@dataclass(frozen=True)
class HeldBack:
    """One thing from the repository that waits for the user's trust."""

    kind: str  # hooks | sandbox | permissions | mcpServers | mcp | agentHooks | ...
    path: Path
    detail: str  # one line for the user: what and why

    def to_json(self) -> dict[str, str]:
        return {"kind": self.kind, "path": str(self.path), "detail": self.detail}


@dataclass(frozen=True)
class TrustStatus:
    """A folder's trust: the decision kept for it and what is held back meanwhile."""

    folder: Path
    root: Path
    decision: bool | None
    held_back: tuple[HeldBack, ...]

    @property
    def trusted(self) -> bool:
        return self.decision is True

    @property
    def needs_decision(self) -> bool:
        return self.decision is None and bool(self.held_back)

    def to_json(self) -> dict[str, Any]:
        return {
            "cwd": str(self.folder),
            "root": str(self.root),
            "trusted": self.trusted,
            "decision": self.decision,
            "needsDecision": self.needs_decision,
            "heldBack": [item.to_json() for item in self.held_back],
        }


def trust_root(folder: Path) -> Path:
    """Where the decision for ``folder`` is kept: its repository's root, else itself."""
    resolved = trust_store.resolved(folder)
    repository = find_repository(resolved)
    return repository.root if repository is not None else resolved


def is_trusted(folder: Path, home: Path) -> bool:
    """Whether repository content in ``folder`` may apply: the user trusted it (or a
    folder above it)."""
    return trust_store.decision(folder, home) is True


def trust_status(folder: Path, home: Path) -> TrustStatus:
    """The decision for ``folder`` and, unless trusted, what is held back."""
    resolved = trust_store.resolved(folder)
    decision = trust_store.decision(resolved, home)
    held = () if decision is True else tuple(held_back(resolved, home))
    return TrustStatus(resolved, trust_root(resolved), decision, held)


def set_trust(folder: Path, home: Path, trusted: bool) -> TrustStatus:
    """Keep the user's decision for ``folder``'s repository root; the new status."""
    trust_store.keep(trust_root(folder), home, trusted)
    return trust_status(folder, home)


def held_back(folder: Path, home: Path) -> list[HeldBack]:
    """What the repository delivered to ``folder`` that an untrusted folder leaves out."""
    items: list[HeldBack] = []
    layers, _warnings = read_layers(folder, home)
    for layer in layers:
        for key in held_back_keys(layer):
            reason = _SETTINGS_REASONS[key]
            items.append(
                HeldBack(key, layer.path, f"'{key}' in a committed settings file: {reason}")
            )
    # What git tracks is asked only about files whose content would be held back: most
    # repositories hold none, and reading the index (dulwich's import, a large index) was
    # the biggest part of `wave-ls run`'s start that was ours (issue 30).
    for directory in AGENT_DIRS:
        if not _no_agent_item_on_disk(folder / directory):
            for path in tracked_under(folder, directory):
                if path.suffix == ".md":
                    items.extend(_agent_items(path))
    mcp = folder / MCP_JSON
    if _json_object(mcp).get("mcpServers") and from_repository(mcp):
        items.append(
            HeldBack(
                "mcpJson",
                mcp,
                "the committed .mcp.json's servers are programs started on this machine",
            )
        )
    project = trust_root(folder)
    # A record that is not on disk is used by nothing: no folder, no records to hold back.
    records = tracked_under(project, REGISTRY_DIR) if (project / REGISTRY_DIR).is_dir() else []
    for path in records:
        if path.suffix == ".json" and not record_is_sealed(path, _json_object(path), home):
            items.append(
                HeldBack(
                    "registryRecord",
                    path,
                    "a committed worktree record wave-ls did not write: never used to run "
                    "a WorktreeRemove hook",
                )
            )
    return items


def record_is_sealed(path: Path, data: dict[str, Any], home: Path) -> bool:
    """Whether a registry record (at ``path``, the JSON ``data``) is one wave-ls wrote."""
    return record_seal.is_sealed(data, home, record_purpose(path.stem))


def record_purpose(name: str) -> str:
    """What a worktree record's seal is bound to: its worktree's name."""
    return f"worktree-record:{name}"


def looser_mode(agent_mode: str, session_mode: str) -> bool:
    """Whether an agent's ``permissionMode`` allows more than the session's mode."""
    return _MODE_ORDER.get(agent_mode, 0) > _MODE_ORDER.get(session_mode, 1)


def _agent_items(path: Path) -> list[HeldBack]:
    keys = agent_frontmatter_keys(path)
    items = []
    if "hooks" in keys:
        items.append(HeldBack("agentHooks", path, "'hooks' in a committed agent file run commands"))
    mode = keys.get("permissionMode")
    if mode in LOOSER_MODES:
        items.append(
            HeldBack(
                "permissionMode",
                path,
                f"a committed agent asks for permissionMode '{mode}': it runs in the "
                "session's mode instead",
            )
        )
    return items


def _no_agent_item_on_disk(top: Path) -> bool:
    """Whether no Markdown file under ``top`` (links followed, as a path in the index
    reaches a file) has anything ``_agent_items`` holds back: then no tracked one has.
    False when ``top`` holds more than ``MAX_SCANNED_AGENT_FILES`` files or
    ``MAX_SCANNED_DEPTH`` levels (the index decides)."""
    if not top.is_dir():
        return True
    seen: set[tuple[int, int]] = set()
    files = 0
    for directory, subdirs, names in os.walk(top, followlinks=True):
        here = Path(directory)
        try:
            info = here.stat()
        except OSError:
            subdirs.clear()
            continue
        if (info.st_dev, info.st_ino) in seen:  # a loop of links, or a second way in
            subdirs.clear()
            continue
        seen.add((info.st_dev, info.st_ino))
        files += len(names)
        if files > MAX_SCANNED_AGENT_FILES or len(here.relative_to(top).parts) > MAX_SCANNED_DEPTH:
            return False
        if any(_agent_items(here / name) for name in names if name.endswith(".md")):
            return False
    return True


def agent_frontmatter_keys(path: Path) -> dict[str, str]:
    """The top-level keys of an agent file's frontmatter, each with the text after its
    colon (comments and quotes off). A line scan, linear in the file: agent frontmatter is a
    block mapping, so a top-level key starts its line."""
    data = read_if_regular(path, MAX_AGENT_BYTES)
    if data is None:
        return {}
    try:
        front = split_frontmatter(data.decode("utf-8", "replace"))
    except FrontmatterError:
        return {}
    keys: dict[str, str] = {}
    for line in front.yaml_text.splitlines():
        match = _TOP_KEY.match(line)
        if match is None:
            continue
        name = match.group(1) or match.group(2) or match.group(3)
        value = match.group(4).split(" #", 1)[0].strip().strip("\"'")
        keys.setdefault(name, value)
    return keys


def _json_object(path: Path) -> dict[str, Any]:
    data = read_if_regular(path, MAX_JSON_BYTES)
    if data is None:
        return {}
    try:
        parsed = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        return {}
    return parsed if isinstance(parsed, dict) else {}
