"""Which agent names an `@agent:` mention can hold, and how any other name is mentioned.

Shared by the chat input (mentions, completion) and the agent loader (its warning for a
name Claude Code allows but a mention cannot hold).
"""

from __future__ import annotations

import re

# A name starts with a letter, then letters, digits, `_`, `-`, `:` (plugin agents are
# `<plugin>:<name>`); SPEC section 3.
MENTION_NAME_PATTERN = r"[A-Za-z][A-Za-z0-9_:-]*"
_MENTION_NAME_RE = re.compile(MENTION_NAME_PATTERN)
_NOT_IN_NAMES = re.compile(r"[^A-Za-z0-9_:-]+")


def is_mentionable_name(name: str) -> bool:
    """True when `name` can be written as `[@agent:<name>]` and read back by a mention."""
    return _MENTION_NAME_RE.fullmatch(name) is not None


def mention_form(name: str) -> str:
    """How an agent is mentioned: its name, or for a name a mention cannot hold (Claude
    Code allows `.` and spaces: `Python Expert`, `powershell-5.1-expert`) the name with
    each run of other characters written `-` (`Python-Expert`, `powershell-5-1-expert`),
    and `agent-` before one that does not start with a letter. Mentions of that form
    resolve to the agent when no other agent has the same form."""
    if is_mentionable_name(name):
        return name
    form = _NOT_IN_NAMES.sub("-", name).strip("-") or "agent"
    return form if form[0].isalpha() else f"agent-{form}"
