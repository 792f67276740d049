"""Worktree names: checking a given one, generating one for a subagent or a session."""

from __future__ import annotations

import re
import secrets

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")

_ADJECTIVES = (
    "amber", "brave", "bright", "calm", "clever", "cosmic", "crisp", "eager", "gentle",
    "golden", "happy", "humble", "jolly", "keen", "lively", "lucky", "merry", "mellow",
    "nimble", "noble", "quiet", "rapid", "shiny", "silent", "steady", "sunny", "swift",
    "tidy", "vivid", "witty",
)  # fmt: skip
_NOUNS = (
    "badger", "breeze", "brook", "canyon", "cedar", "comet", "falcon", "fern", "forest",
    "harbor", "heron", "island", "lagoon", "maple", "meadow", "otter", "pebble", "pine",
    "planet", "river", "robin", "sparrow", "summit", "thicket", "tundra", "valley", "willow",
    "wren", "zephyr", "fox",
)  # fmt: skip


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot name a worktree (folder + branch ``worktree-<name>``), or None."""
    if not NAME.fullmatch(name):
        return (
            f"invalid worktree name {name!r}: use 1-64 letters, digits, '.', '_' or '-', "
            "starting with a letter or digit"
        )
    if ".." in name or name.endswith((".", ".lock")):
        return f"invalid worktree name {name!r}: no '..', and no '.' or '.lock' at the end"
    return None


def agent_name() -> str:
    """A subagent's worktree name: ``agent-<8 hex>``."""
    return "agent-" + secrets.token_hex(4)


def session_name() -> str:
    """A session's worktree name, ``adjective-adjective-noun`` (``gentle-swift-breeze``)."""
    first, second = secrets.choice(_ADJECTIVES), secrets.choice(_ADJECTIVES)
    while second == first:
        second = secrets.choice(_ADJECTIVES)
    return f"{first}-{second}-{secrets.choice(_NOUNS)}"
