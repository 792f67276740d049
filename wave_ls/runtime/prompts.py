"""The main agent's system prompt."""

from __future__ import annotations

import datetime
import platform
from pathlib import Path

MAIN_SYSTEM_PROMPT = """\
You are wave, a coding agent working inside the user's editor. You help with software
engineering tasks: reading and changing code, running commands, answering questions about
the project.

# How to work
- Use the tools to look before you answer; never guess file contents.
- Prefer editing existing files to creating new ones. Keep changes minimal and focused.
- Run the project's tests or commands when that proves a change works.
- Delegate to a subagent with the Agent tool when a task matches one (see its description).
- Be concise: the answer is shown in a chat panel.

# Environment
Working directory: {cwd}
Platform: {platform}
Today's date: {date}
"""


def main_system_prompt(cwd: Path) -> str:
    return MAIN_SYSTEM_PROMPT.format(
        cwd=cwd, platform=platform.system().lower(), date=datetime.date.today().isoformat()
    )


def subagent_environment(cwd: Path) -> str:
    """The environment note appended to a subagent's own system prompt."""
    return (
        f"\n\n# Environment\nWorking directory: {cwd}\n"
        f"Platform: {platform.system().lower()}\n"
        f"Today's date: {datetime.date.today().isoformat()}\n"
    )
