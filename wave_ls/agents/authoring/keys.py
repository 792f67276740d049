"""What each frontmatter key means, for completion and hover (Markdown)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KeyDoc:
    """One frontmatter key: a one-line summary, the whole story, and its values."""

    summary: str
    markdown: str
    values: tuple[str, ...] = ()
    required: bool = False


_TOOL_LIST_SPELLINGS = (
    "Three spellings: `Read, Grep` · `[Read, Grep]` · a block list (`- Read` lines)."
)

KEY_DOCS: dict[str, KeyDoc] = {
    "name": KeyDoc(
        "The subagent's name (required)",
        "**name** (required): the subagent's name, used as `subagent_type` and in "
        "`@agent:<name>` mentions.\n\nA letter, then letters, digits, `_` or `-` "
        "(`^[A-Za-z][A-Za-z0-9_-]*$`). A project agent overrides a user agent of the same "
        "name, and either overrides a built-in (`Explore`, `Plan`, `general-purpose`). In a "
        "plugin write the bare name: `<plugin>:` is added.",
        required=True,
    ),
    "description": KeyDoc(
        "When to use this subagent (required)",
        "**description** (required): when the main agent should delegate to this subagent. "
        "The model reads it in the `Agent` tool's description, and the chat input shows it "
        'in `@` completion. "Use PROACTIVELY" or "MUST BE USED" makes the main agent '
        "delegate related tasks without being asked.\n\nA value containing `: ` must be "
        "quoted, or written as a block scalar (`description: >-` and indented lines).",
        required=True,
    ),
    "tools": KeyDoc(
        "The tools it may use (whitelist)",
        "**tools**: the only tools this subagent gets. Absent, empty or `*`: every tool; "
        "`[]`: none. `Agent` and the task-list tools are never given to a subagent; unknown "
        f"names are ignored (with a warning).\n\n{_TOOL_LIST_SPELLINGS}",
    ),
    "disallowedTools": KeyDoc(
        "Tools it may not use (blacklist)",
        "**disallowedTools**: tools taken away from this subagent, after `tools` is applied. "
        f"Unknown names are ignored (with a warning).\n\n{_TOOL_LIST_SPELLINGS}",
    ),
    "model": KeyDoc(
        "`inherit` or a model id",
        "**model**: the model this subagent answers with. `inherit` (the default, also when "
        "absent or empty) is the session's current model; anything else is a model id the "
        "endpoint (`OPENAI_BASE_URL`) must offer. An unknown model fails the delegation with "
        "a clear error; nothing else breaks.",
        values=("inherit",),
    ),
    "isolation": KeyDoc(
        "`worktree`: run in its own git worktree",
        "**isolation**: `worktree` runs every delegation to this subagent in its own git "
        "worktree (`.wave/worktrees/<name>`, branch `worktree-<name>`): removed when nothing "
        "changed, kept (and reported) when something did. Other values are ignored.",
        values=("worktree",),
    ),
    "omitAgentsMd": KeyDoc(
        "`true`: don't load AGENTS.md memory",
        "**omitAgentsMd**: `true` (unquoted) starts this subagent without the project and "
        "user memory (`AGENTS.md` / `CLAUDE.md`), as the read-only built-ins do. Anything "
        "else counts as false; a value other than `true`/`false` gets a warning. Alias: "
        "`omitClaudeMd`.",
        values=("true", "false"),
    ),
    "omitClaudeMd": KeyDoc(
        "Alias of `omitAgentsMd`",
        "**omitClaudeMd**: Claude Code's spelling of `omitAgentsMd`: `true` (unquoted) "
        "starts this subagent without `AGENTS.md` / `CLAUDE.md` memory.",
        values=("true", "false"),
    ),
}

# Claude Code's subagent keys that wave-ls keeps (``AgentDefinition.extra``) but does not
# use: no warning for them, so files shared with Claude Code stay clean.
FOREIGN_KEYS: frozenset[str] = frozenset(
    {
        "color",
        "permissionMode",
        "maxTurns",
        "skills",
        "mcpServers",
        "hooks",
        "memory",
        "background",
        "effort",
        "initialPrompt",
    }
)

# The keys a new file starts with, in order (completion offers them first).
TEMPLATE_KEYS = ("name", "description", "tools", "model")


def key_markdown(key: str) -> str:
    """Hover text for any key: its documentation, or what happens to an unknown one."""
    doc = KEY_DOCS.get(key)
    if doc is not None:
        return doc.markdown
    if key in FOREIGN_KEYS:
        return (
            f"**{key}**: a Claude Code key. wave-ls keeps its value with the definition and "
            "does not use it."
        )
    return (
        f"**{key}**: not a key wave-ls knows. It is kept with the definition and ignored. "
        f"Known keys: {', '.join(f'`{k}`' for k in KEY_DOCS)}."
    )
