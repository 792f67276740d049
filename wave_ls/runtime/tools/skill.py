"""``Skill``: load a skill's instructions from ``.wave/skills/<name>/SKILL.md``."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from wave_ls.runtime.core import Effect, ToolContext, ToolError, ToolResult
from wave_ls.runtime.frontmatter import FrontmatterError, optional_frontmatter
from wave_ls.runtime.tools.args import optional_str, require_str

SKILL_FILE = "SKILL.md"
NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.:-]*$")

DESCRIPTION = """\
Loads a skill: a set of instructions (and files beside them) for a specialised task.

Usage:
- skill is the skill's name, e.g. "pdf" or "release-notes"; args are optional arguments \
for it.
- Skills live in <project>/.wave/skills/<name>/SKILL.md and ~/.wave/skills/<name>/SKILL.md \
(the project's wins).
- When the user's request matches an available skill, load it first and follow its \
instructions; files it mentions are relative to its base directory.
- Do not load a skill that is already loaded in this conversation."""


def skill_dirs(ctx: ToolContext) -> list[Path]:
    """Where skills are looked up, highest precedence first."""
    return [ctx.cwd / ".wave" / "skills", ctx.home / ".wave" / "skills"]


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

    name = "Skill"
    description = DESCRIPTION
    effect: Effect = "read"
    concurrency_safe = True
    parameters = PARAMETERS

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        name = require_str(args, "skill", allow_empty=False).strip().lstrip("/")
        extra = optional_str(args, "args")
        path = self._find(name, ctx)
        body = strip_frontmatter(path.read_text(encoding="utf-8", errors="replace")).strip()
        if extra and "$ARGUMENTS" in body:
            body = body.replace("$ARGUMENTS", extra)
        elif extra:
            body += f"\n\nARGUMENTS: {extra}"
        content = (
            f'Skill "{name}" loaded. Base directory for this skill: {path.parent}\n'
            "Follow these instructions:\n\n" + body
        )
        return ToolResult(content, short_result=f"Loaded skill {name}", details={"path": str(path)})

    def _find(self, name: str, ctx: ToolContext) -> Path:
        if NAME_RE.match(name) and ".." not in name:
            for directory in skill_dirs(ctx):
                candidate = directory / name / SKILL_FILE
                if candidate.is_file():
                    return candidate
        names = available_skills(ctx)
        listing = ", ".join(names) if names else "none (no .wave/skills/<name>/SKILL.md found)"
        raise ToolError(f"Unknown skill {name!r}. Available skills: {listing}")
