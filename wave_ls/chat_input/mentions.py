"""Mentions in a chat message: `[@agent:<name>]`, `@agent:<name>` and `[@file:<path>]`.

One regex reads all three spellings in a single left-to-right scan, so an `@agent:` mention
can never be taken for a file mention (SPEC section 3). The reminders built here are the
`<system-reminder>` texts the session injects at the first round of a turn.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from wave_ls.runtime.core import expanded
from wave_ls.runtime.mention_names import MENTION_NAME_PATTERN as NAME_PATTERN
from wave_ls.runtime.mention_names import is_mentionable_name, mention_form

# A name starts with a letter, then letters, digits, `_`, `-`, `:` (plugin agents are
# `<plugin>:<name>`). In the bare CLI spelling the name cannot end in `:` or `-`, so
# "ask @agent:reviewer: now" names `reviewer`. A bare mention must start the text or follow
# whitespace or an opening bracket/quote, so `me@agent:x` (an address) is not a mention.
# A file path may hold spaces and one level of balanced brackets (`app/[id]/page.tsx`).
_BARE_NAME = r"[A-Za-z](?:[A-Za-z0-9_:-]*[A-Za-z0-9_])?"
_PATH = r"(?:[^\[\]\n]|\[[^\[\]\n]*\])+"
MENTION_RE = re.compile(
    rf"\[@agent:(?P<agent>{NAME_PATTERN})\]"
    rf"|(?<![^\s(\[{{<\"'`])@agent:(?P<bare>{_BARE_NAME})"
    rf"|\[@file:(?P<file>{_PATH})\]"
)
__all__ = ["MENTION_RE", "NAME_PATTERN", "is_mentionable_name", "mention_form"]

_DESCRIPTION_CAP = 200


def find_agent_mentions(text: str) -> list[str]:
    """Agent names mentioned in `text`, either spelling, unique, in order of appearance."""
    found: dict[str, None] = {}
    for match in MENTION_RE.finditer(text):
        name = match.group("agent") or match.group("bare")
        if name:
            found.setdefault(name)
    return list(found)


def find_file_mentions(text: str) -> list[str]:
    """Paths of `[@file:<path>]` mentions in `text`, stripped, unique, in order."""
    found: dict[str, None] = {}
    for match in MENTION_RE.finditer(text):
        path = (match.group("file") or "").strip()
        if path:
            found.setdefault(path)
    return list(found)


def mention_reminder(mentioned: list[str], available: Sequence[tuple[str, str]]) -> str | None:
    """The reminder for the agents a message mentions, or None when it mentions none.

    `available` holds (name, description) pairs of the registered subagents. Registered names
    (matched exactly, else case-insensitively or by `mention_form` when that is
    unambiguous) are named in one
    reminder asking the main agent to delegate with `subagent_type=<name>` (MENTION-4,
    MENTION-6); unknown names get a note listing the available ones (MENTION-5). The
    instruction is soft: the main agent still decides how to split the work.
    """
    if not mentioned:
        return None
    descriptions = dict(available)
    by_folded: dict[str, list[str]] = {}
    for name in descriptions:
        by_folded.setdefault(name.casefold(), []).append(name)
        form = mention_form(name).casefold()
        if form != name.casefold():
            by_folded.setdefault(form, []).append(name)

    known: dict[str, None] = {}
    unknown: dict[str, None] = {}
    for name in mentioned:
        if name in descriptions:
            known.setdefault(name)
        elif len(by_folded.get(name.casefold(), [])) == 1:
            known.setdefault(by_folded[name.casefold()][0])
        else:
            unknown.setdefault(name)

    parts = []
    if known:
        parts.append(_delegate_text(list(known), descriptions))
    if unknown:
        parts.append(_unknown_text(list(unknown), list(descriptions)))
    return "<system-reminder>\n" + "\n\n".join(parts) + "\n</system-reminder>"


def _delegate_text(names: list[str], descriptions: dict[str, str]) -> str:
    if len(names) == 1:
        name = names[0]
        return (
            f'The user mentioned the subagent "{name}" ({_one_line(descriptions[name])}) and '
            "wants this task delegated to it. Call the Agent tool with "
            f"`subagent_type={name}`, and put in the prompt everything it needs to know, "
            "since it cannot see this conversation."
        )
    listing = "\n".join(f"- {name}: {_one_line(descriptions[name])}" for name in names)
    return (
        "The user mentioned these subagents and wants this task delegated to them:\n"
        f"{listing}\n"
        "Call the Agent tool with `subagent_type=<name>` for each of them "
        f"({', '.join(f'`subagent_type={name}`' for name in names)}), giving each the part "
        "of the task that fits it and everything it needs to know, since they cannot see "
        "this conversation. You decide how to split the work and whether to run them in "
        "parallel."
    )


def _unknown_text(names: list[str], available: list[str]) -> str:
    written = ", ".join(f"@agent:{name}" for name in names)
    which = "that name is" if len(names) == 1 else "those names are"
    listing = ", ".join(sorted(available, key=str.casefold)) if available else "(none)"
    return (
        f"The user mentioned {written}, but no subagent with {which} available. "
        f"Available subagents: {listing}. Do not call the Agent tool with an unavailable "
        "subagent_type; use one of the available subagents if it fits the task, otherwise "
        "do the work yourself."
    )


def _one_line(text: str) -> str:
    flat = " ".join(text.split())
    if len(flat) <= _DESCRIPTION_CAP:
        return flat
    return flat[: _DESCRIPTION_CAP - 1].rstrip() + "…"


FILE_CAP_BYTES = 100_000
TOTAL_CAP_BYTES = 400_000
_DIR_ENTRIES_CAP = 200


def file_mention_reminder(
    paths: Sequence[str],
    cwd: Path,
    max_bytes: int = FILE_CAP_BYTES,
    max_total_bytes: int = TOTAL_CAP_BYTES,
    supplied: Mapping[str, str] | None = None,
) -> str | None:
    """The reminder showing the files a message mentions with `[@file:<path>]`, or None.

    Relative paths are resolved against `cwd`. Text files are shown with line numbers
    (`cat -n` style), cut at `max_bytes` each and `max_total_bytes` together with a note
    saying so; a directory shows its entries; missing, unreadable and binary files are
    reported in place of their content. Nothing is refused. `supplied` holds texts the
    client sent with the message (an editor's unsaved buffer), by absolute path: they are
    shown instead of the file on disk.
    """
    if not paths:
        return None
    budget = max_total_bytes
    blocks = []
    for written in paths:
        target = Path(os.path.normpath(cwd / expanded(written)))
        text = (supplied or {}).get(str(target))
        data = text.encode("utf-8") if text is not None else None
        block, used = _file_block(written, target, min(max_bytes, budget), data)
        budget = max(0, budget - used)
        blocks.append(block)
    body = "\n\n".join(blocks)
    return (
        "<system-reminder>\nThe user mentioned these files in the message; "
        f"their contents as of now:\n\n{body}\n</system-reminder>"
    )


def _file_block(
    written: str, target: Path, cap: int, supplied: bytes | None = None
) -> tuple[str, int]:
    """One file's part of the reminder and the number of content bytes it used."""
    try:
        if supplied is not None:
            size, data = len(supplied), supplied[: cap + 1] if cap > 0 else b""
        elif target.is_dir():
            return _directory_block(written, target), 0
        else:
            size = target.stat().st_size
            with target.open("rb") as handle:
                data = handle.read(cap + 1) if cap > 0 else b""
    except FileNotFoundError:
        return f"{written}: file not found (looked for {target}).", 0
    except OSError as error:
        return f"{written}: could not be read ({error.strerror or error}).", 0
    if b"\x00" in data[:8192]:
        return f"{written}: binary file ({size:,} bytes); contents not shown.", 0
    if size == 0:
        return f"Contents of {written}: (empty file)", 0
    if cap <= 0:
        return (
            f"{written}: not shown ({size:,} bytes); the size budget for mentioned files is "
            "used up. Read it with the Read tool if needed.",
            0,
        )
    truncated = len(data) > cap or size > len(data)
    if truncated:
        cut = data[:cap]
        # Cut at a line end so the last line shown is whole.
        data = cut[: cut.rfind(b"\n") + 1] or cut
    lines = data.decode("utf-8", errors="replace").splitlines()
    numbered = "\n".join(f"{number:6}\t{line}" for number, line in enumerate(lines, 1))
    block = f"Contents of {written}:\n{numbered}"
    if truncated:
        block += (
            f"\n(Truncated: showing lines 1-{len(lines)}, {len(data):,} of {size:,} bytes. "
            "Read the rest with the Read tool.)"
        )
    return block, len(data)


def _directory_block(written: str, target: Path) -> str:
    entries = sorted(
        (entry.name + "/" if entry.is_dir() else entry.name) for entry in target.iterdir()
    )
    shown = entries[:_DIR_ENTRIES_CAP]
    more = len(entries) - len(shown)
    listing = "\n".join(f"- {entry}" for entry in shown) or "(empty directory)"
    if more:
        listing += f"\n(and {more} more entries)"
    return f"{written} is a directory; its entries:\n{listing}"
