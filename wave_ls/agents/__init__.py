"""Subagent definitions: where they are found, how they are parsed, which tools they get.

- ``parse``: one Markdown file with YAML frontmatter -> ``AgentDefinition`` + ``Problem``s.
- ``discovery``: built-in < user < project (by name), plus ``<plugin>:<name>`` agents.
- ``registry``: ``AgentRegistry.load(cwd)``, cached per file, re-read on every call.
- ``toolset``: ``resolve_tools`` and ``tool_summary`` (SPEC section 7).

See docs/agents.md for the file format and the rules.
"""

from wave_ls.agents.definition import AgentCatalog, AgentDefinition, Problem, Source
from wave_ls.agents.parse import NAME_PATTERN, parse_agent_file
from wave_ls.agents.registry import AgentRegistry
from wave_ls.agents.toolset import (
    ALL_TOOL_NAMES,
    NEVER_FOR_SUBAGENTS,
    resolve_tools,
    tool_summary,
)

__all__ = [
    "ALL_TOOL_NAMES",
    "NAME_PATTERN",
    "NEVER_FOR_SUBAGENTS",
    "AgentCatalog",
    "AgentDefinition",
    "AgentRegistry",
    "Problem",
    "Source",
    "parse_agent_file",
    "resolve_tools",
    "tool_summary",
]
