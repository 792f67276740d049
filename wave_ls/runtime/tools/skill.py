"""``Skill``: load a skill's instructions from ``.wave/skills/<name>/SKILL.md``.

Also where a subagent's ``skills`` come from (``preloaded_skills``): the same folders, the
same text, in its system prompt from the start.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from wave_ls.runtime.core import Effect, ToolContext, ToolError, ToolKind, ToolResult
from wave_ls.runtime.frontmatter import FrontmatterError, optional_frontmatter
from wave_ls.runtime.tool_names import WaveTool
from wave_ls.runtime.tools.args import optional_str, require_str

log = logging.getLogger(__name__)

SKILL_FILE = "SKILL.md"
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")

DESCRIPTION = """\
Loads a skill: a set of instructions (and files beside them) for a specialised task.

Usage:
- skill is the skill's name, e.g. "pdf" or "release-notes"; args are optional arguments \
for it.
- Skills live in <project>/.wave/skills/<name>/SKILL.md and ~/.wave/skills/<name>/SKILL.md \
(the project's wins; .claude/skills/ of each is read too, below .wave/skills/).
- When the user's request matches an available skill, load it first and follow its \
instructions; files it mentions are relative to its base directory.
- Do not load a skill that is already loaded in this conversation."""


def skill_dirs(ctx: ToolContext) -> list[Path]:
    """Where skills are looked up, highest precedence first."""
    return skill_dirs_of(ctx.cwd, ctx.home)


def skill_dirs_of(project: Path, home: Path) -> list[Path]:
    """``.wave/skills`` then Claude Code's ``.claude/skills``, the project's before the user's."""
    return [base / kind / "skills" for base in (project, home) for kind in (".wave", ".claude")]


def find_skill(name: str, dirs: Sequence[Path]) -> Path | None:
    """The ``SKILL.md`` of the skill called ``name`` in the first folder that has it."""
    if not NAME_RE.match(name) or ".." in name:
        return None
    for directory in dirs:
        candidate = directory / name / SKILL_FILE
        if candidate.is_file():
            return candidate
    return None


def skill_instructions(name: str, path: Path, extra: str | None = None) -> str:
    """A loaded skill as the model reads it: its base directory and its body."""
    body = strip_frontmatter(path.read_text(encoding="utf-8", errors="replace")).strip()
    if extra and "$ARGUMENTS" in body:
        body = body.replace("$ARGUMENTS", extra)
    elif extra:
        body += f"\n\nARGUMENTS: {extra}"
    return (
        f'Skill "{name}" loaded. Base directory for this skill: {path.parent}\n'
        "Follow these instructions:\n\n" + body
    )


def preloaded_skills(names: Sequence[str], project: Path, home: Path) -> str:
    """A subagent's ``skills``, for its system prompt: each skill's instructions, and a
    note for a name that is no skill (logged; the agent starts all the same)."""
    if not names:
        return ""
    dirs = skill_dirs_of(project, home)
    parts: list[str] = []
    for name in names:
        path = find_skill(name, dirs)
        if path is None:
            log.warning("skill %r named in an agent's skills was not found; skipped", name)
            parts.append(f"(Skill {name!r} was named for this agent but not found: skipped.)")
            continue
        try:
            parts.append(skill_instructions(name, path))
        except OSError as error:
            log.warning("skill %r (%s) not read: %s", name, path, error)
            parts.append(f"(Skill {name!r} could not be read: skipped.)")
    return "\n\n# Preloaded skills\n\n" + "\n\n".join(parts)


def available_skills(ctx: ToolContext) -> list[str]:
    names: set[str] = set()
    for directory in skill_dirs(ctx):
        if directory.is_dir():
            names.update(
                entry.name for entry in directory.iterdir() if (entry / SKILL_FILE).is_file()
            )
    return sorted(names)


def strip_frontmatter(text: str) -> str:
    """The Markdown body after the frontmatter (``runtime/frontmatter.py``); a frontmatter
    that is never closed is taken as text."""
    try:
        return optional_frontmatter(text)[1]
    except FrontmatterError:
        return text


PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "skill": {
            "type": "string",
            "description": 'The skill name, e.g. "pdf" or "release-notes"',
        },
        "args": {"type": "string", "description": "Optional arguments for the skill"},
    },
    "required": ["skill"],
    "additionalProperties": False,
}


class SkillTool:
    """Loads a skill's instructions (see ``DESCRIPTION``)."""

    name = WaveTool.SKILL.value
    description = DESCRIPTION
    effect: Effect = "read"
    kind: ToolKind = "other"
    key_argument: str | None = "skill"
    concurrency_safe = True
    parameters = PARAMETERS

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        name = require_str(args, "skill", allow_empty=False).strip().lstrip("/")
        extra = optional_str(args, "args")
        path = self._find(name, ctx)
        content = skill_instructions(name, path, extra)
        return ToolResult(content, short_result=f"Loaded skill {name}", details={"path": str(path)})

    def _find(self, name: str, ctx: ToolContext) -> Path:
        found = find_skill(name, skill_dirs(ctx))
        if found is not None:
            return found
        names = available_skills(ctx)
        listing = ", ".join(names) if names else "none (no .wave/skills/<name>/SKILL.md found)"
        raise ToolError(f"Unknown skill {name!r}. Available skills: {listing}")
