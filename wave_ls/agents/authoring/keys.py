"""What each frontmatter key means, for completion and hover (Markdown)."""

from __future__ import annotations

from dataclasses import dataclass

from wave_ls.agents.definition import EFFORTS, HOOK_EVENTS, MEMORY_SCOPES, PERMISSION_MODES
from wave_ls.agents.model_tiers import TIERS


@dataclass(frozen=True)
class KeyDoc:
    """One frontmatter key: a one-line summary, the whole story, and its values (each
    with a short detail, in ``value_details``)."""

    summary: str
    markdown: str
    values: tuple[str, ...] = ()
    required: bool = False
    value_details: tuple[str, ...] = ()

    def detail(self, value: str) -> str:
        """The short detail of one of ``values`` (empty when there is none)."""
        if value in self.values and len(self.value_details) == len(self.values):
            return self.value_details[self.values.index(value)]
        return ""


_TOOL_LIST_SPELLINGS = (
    "Three spellings: `Read, Grep` · `[Read, Grep]` · a block list (`- Read` lines)."
)

# Claude Code's agent colours (its `/agents` menu offers these).
COLORS: tuple[str, ...] = ("red", "blue", "green", "yellow", "purple", "orange", "pink", "cyan")
# A few sensible `maxTurns` values to start from (any whole number above 0 works).
TURN_COUNTS: tuple[str, ...] = ("10", "25", "50")

_MODE_DETAILS = {
    "default": "ask before edits and commands, as the session does",
    "acceptEdits": "file edits without asking; commands still ask",
    "plan": "read-only: plan, change nothing",
    "bypassPermissions": "never ask (use with care)",
    "dontAsk": "never ask: what would need a prompt is denied",
}
_MEMORY_DETAILS = {
    "user": "one folder in your home directory, for every project",
    "project": "in the project, shared with it (version control)",
    "local": "in the project, kept out of version control",
}
_EFFORT_DETAILS = {
    "low": "quick answers, little reasoning",
    "medium": "the usual balance",
    "high": "think longest (slower, costlier)",
}
_HOOK_DETAILS = {
    "PreToolUse": "before each tool call (may block it)",
    "PostToolUse": "after each tool call",
    "Stop": "when the subagent finishes",
}
_HOOK_EXAMPLE = (
    "```yaml\nhooks:\n  PreToolUse:\n    - matcher: Bash\n      hooks:\n"
    "        - type: command\n          command: ./scripts/check-command.sh\n```"
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
        "delegate related tasks without being asked.\n\nA value containing `: ` should be "
        "quoted, or written as a block scalar (`description: >-` and indented lines); "
        "unquoted on one line it is read as the whole line, as Claude Code reads it, with a "
        "warning.",
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
        "`inherit`, a tier (`haiku`, `sonnet`, `opus`) or a model id",
        "**model**: the model this subagent answers with. `inherit` (the default, also when "
        "absent or empty) is the session's current model. `haiku`, `sonnet` and `opus` are "
        'Claude Code\'s model *tiers*: `{"models": {"sonnet": "<id>"}}` in the settings '
        "(`.wave/settings.local.json` over `.wave/settings.json` over "
        "`~/.wave/settings.json`) or `WAVE_MODEL_SONNET` (the environment wins) map a tier "
        "to one of the endpoint's models; an unmapped tier runs on the session's model. A "
        "`claude-*` id the endpoint does not list counts as the tier its name contains "
        "(`claude-sonnet-4-5` is `sonnet`). Anything else is a model id the endpoint "
        "(`OPENAI_BASE_URL`) must offer: an unknown one fails the delegation with a clear "
        "error; nothing else breaks.",
        values=("inherit", *TIERS),
    ),
    "isolation": KeyDoc(
        "`worktree`: run in its own git worktree",
        "**isolation**: `worktree` runs every delegation to this subagent in its own git "
        "worktree (`.wave/worktrees/<name>`, branch `worktree-<name>`): removed when nothing "
        "changed, kept (and reported) when something did. Other values are ignored.",
        values=("worktree",),
        value_details=("run in its own git worktree",),
    ),
    "omitAgentsMd": KeyDoc(
        "`true`: don't load AGENTS.md memory",
        "**omitAgentsMd**: `true` (unquoted) starts this subagent without the project and "
        "user memory (`AGENTS.md` / `CLAUDE.md`), as the read-only built-ins do. Anything "
        "else counts as false; a value other than `true`/`false` gets a warning. Alias: "
        "`omitClaudeMd`.",
        values=("true", "false"),
        value_details=("don't load AGENTS.md memory", "load memory (the default)"),
    ),
    "omitClaudeMd": KeyDoc(
        "Alias of `omitAgentsMd`",
        "**omitClaudeMd**: Claude Code's spelling of `omitAgentsMd`: `true` (unquoted) "
        "starts this subagent without `AGENTS.md` / `CLAUDE.md` memory.",
        values=("true", "false"),
        value_details=("don't load AGENTS.md memory", "load memory (the default)"),
    ),
    "permissionMode": KeyDoc(
        "How the subagent asks for permission",
        "**permissionMode**: the subagent's permission mode, as in Claude Code: `default` "
        "(ask as the session does), `acceptEdits` (file edits without asking), `plan` "
        "(read-only), `bypassPermissions` (never ask), `dontAsk` (never ask: what would "
        "need a prompt is denied). A session in `bypassPermissions` keeps it for its "
        "subagents, and a session in `plan` mode is never loosened. Another value is "
        "ignored, with a warning.",
        values=PERMISSION_MODES,
        value_details=tuple(_MODE_DETAILS[mode] for mode in PERMISSION_MODES),
    ),
    "maxTurns": KeyDoc(
        "The most model requests of one run",
        "**maxTurns**: a whole number above 0. The subagent makes at most that many model "
        "requests and then ends with what it has (its last text is the answer); the "
        "delegation's record and the editor say it hit its turn limit. Absent: no limit "
        "beyond the session's own. Another value is ignored, with a warning.",
        values=TURN_COUNTS,
        value_details=tuple(f"at most {count} model requests" for count in TURN_COUNTS),
    ),
    "background": KeyDoc(
        "`true`: always run in the background",
        "**background**: `true` (unquoted) always runs this subagent in the background, as "
        "`run_in_background: true` would: the main agent goes on at once and is told when "
        "it ends. Anything else counts as false.",
        values=("true", "false"),
        value_details=("always in the background", "as the main agent asks (the default)"),
    ),
    "color": KeyDoc(
        "The colour of its chip and live block",
        "**color**: the colour the VS Code and Neovim clients give this subagent's `@` chip, "
        "its completion item and its live delegation block (mapped to the theme's colour of "
        f"that name). Claude Code's colours: {', '.join(f'`{c}`' for c in COLORS)}.",
        values=COLORS,
        value_details=tuple(f"the theme's {color}" for color in COLORS),
    ),
    "effort": KeyDoc(
        "Reasoning effort: `low`, `medium`, `high`",
        "**effort**: sent as the request's reasoning effort (`reasoning_effort`) where the "
        "endpoint accepts it; an endpoint that refuses it gets the requests without it "
        "(logged once). Another value is ignored, with a warning.",
        values=EFFORTS,
        value_details=tuple(_EFFORT_DETAILS[effort] for effort in EFFORTS),
    ),
    "skills": KeyDoc(
        "Skills loaded at its start",
        "**skills**: skill names (`.wave/skills/<name>/SKILL.md` of the project or of "
        "`~/.wave/`) whose content is in the subagent's context from its start, so it "
        "need not load them with the `Skill` tool.\n\nThe same three spellings as `tools`: "
        "`a, b` · `[a, b]` · a block list.",
    ),
    "memory": KeyDoc(
        "A persistent memory folder: `user`, `project`, `local`",
        "**memory**: gives this agent a memory folder of its own that persists across "
        "runs, as Claude Code documents: read at its start (its `MEMORY.md` is in its "
        "context) and writable by it. `user`: one folder in your home directory, for every "
        "project; `project`: in the project, shared with it; `local`: in the project, kept "
        "out of version control.",
        values=MEMORY_SCOPES,
        value_details=tuple(_MEMORY_DETAILS[scope] for scope in MEMORY_SCOPES),
    ),
    "hooks": KeyDoc(
        "Hooks that run only for this subagent",
        "**hooks**: commands run at this subagent's events, shaped like the settings files' "
        f"`hooks`: {', '.join(f'`{e}`' for e in HOOK_EVENTS)}, each a list of "
        "`{matcher?, hooks: [{type: command, command, timeout?}]}` (`matcher`: the tool "
        "names it applies to). A command runs with the event as JSON on its standard "
        "input, with the same input and output contract as the `WorktreeCreate` hooks "
        f"wave-ls runs (docs/agents.md).\n\n{_HOOK_EXAMPLE}",
        values=HOOK_EVENTS,
        value_details=tuple(_HOOK_DETAILS[event] for event in HOOK_EVENTS),
    ),
}

# Claude Code's subagent keys that wave-ls keeps as written (``AgentDefinition.extra``):
# no warning for them, so files shared with Claude Code stay clean.
FOREIGN_KEYS: frozenset[str] = frozenset({"mcpServers", "initialPrompt"})
_FOREIGN_NOTES = {
    "mcpServers": (
        "the MCP servers this subagent gets: names of configured servers, or inline "
        "`{name: definition}` entries started for it and stopped when it ends (docs/mcp.md)."
    ),
    "initialPrompt": "wave-ls does not use it.",
}

# The keys a new file starts with, in order (completion offers them first).
TEMPLATE_KEYS = ("name", "description", "tools", "model")


def key_markdown(key: str) -> str:
    """Hover text for any key: its documentation, or what happens to an unknown one."""
    doc = KEY_DOCS.get(key)
    if doc is not None:
        return doc.markdown
    if key in FOREIGN_KEYS:
        return (
            f"**{key}**: a Claude Code key. wave-ls keeps its value with the definition; "
            f"{_FOREIGN_NOTES[key]}"
        )
    return (
        f"**{key}**: not a key wave-ls knows. It is kept with the definition and ignored. "
        f"Known keys: {', '.join(f'`{k}`' for k in KEY_DOCS)}."
    )
