"""``Wave: New Subagent``: the file a new subagent starts from, and where it goes."""

from __future__ import annotations

import os
from pathlib import Path

from wave_ls.agents.parse import NAME_PATTERN, NAME_RULE


class TemplateError(ValueError):
    """The new subagent cannot be written; the message says why."""


def new_subagent_text(name: str, description: str | None = None) -> str:
    """A valid agent file that loads as is and shows what to fill in."""
    about = description or f"Use {name} when ... (the main agent reads this to choose it)"
    return (
        "---\n"
        f"name: {name}\n"
        f"description: {_plain_or_quoted(about)}\n"
        "tools: Read, Grep, Glob\n"
        "model: inherit\n"
        "---\n"
        f"You are {name}. Say what this subagent does, how it works and what it returns.\n"
    )


def new_subagent_path(folder: Path, name: str) -> Path:
    """``<folder>/.wave/agents/<name>.md``; ``folder`` may also be an agents directory
    itself (``.../.wave/agents`` or a plugin's ``agents``)."""
    if not NAME_PATTERN.match(name):
        raise TemplateError(f"'{name}' is not a valid subagent name; use {NAME_RULE}")
    directory = folder if folder.name == "agents" else folder / ".wave" / "agents"
    return directory / f"{name}.md"


def write_new_subagent(folder: Path, name: str, description: str | None = None) -> Path:
    """Write the template; never overwrites an existing file (``TemplateError``)."""
    path = new_subagent_path(folder, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        raise TemplateError(f"{path} already exists") from None
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(new_subagent_text(name, description))
    return path


def _plain_or_quoted(text: str) -> str:
    one_line = " ".join(text.split())
    if ": " in one_line or " #" in one_line or one_line[:1] in "!&*{}[]|>'\"%@`#,?-":
        return '"' + one_line.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return one_line
