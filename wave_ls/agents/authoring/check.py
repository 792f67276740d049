"""Every problem of an agent file's text, for editor diagnostics (pure).

The loader's own problems come first (``read_agent_text`` with ``keep_going``: the same
parser and messages as ``wave-ls agents`` and ``wave/agents/list``), then what the loader
accepts silently but an author wants to know: unknown keys, an ``isolation`` or ``model``
that will be ignored or fail, a name another file of the directory also uses, and a name
that overrides (or is overridden by) another scope's agent.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from wave_ls.agents.authoring.keys import FOREIGN_KEYS
from wave_ls.agents.definition import AgentDefinition, Problem, Span
from wave_ls.agents.discovery import AgentDir, ParsedFile, dedupe_directory
from wave_ls.agents.frontmatter import Entry, Frontmatter
from wave_ls.agents.model_tiers import TIERS, TierMap, resolve_model, tier_env, tier_of
from wave_ls.agents.parse import (
    KNOWN_KEYS,
    MAX_HINTS,
    ParsedAgent,
    closest_name,
    read_agent_text,
)

INHERIT = "inherit"
WORKTREE = "worktree"
SHOWN_MODELS = 8  # model ids listed in a message, at most


class Codes:
    """``Problem.code`` of the editor's own findings (the loader's are ``ProblemCode``)."""

    UNKNOWN_KEY = "unknown-key"
    ISOLATION = "isolation-ignored"
    UNKNOWN_MODEL = "unknown-model"
    MODEL_TIER = "model-tier"
    DUPLICATE_NAME = "duplicate-name"
    OVERRIDES = "overrides"


Layers = Sequence[tuple[AgentDir, Sequence[ParsedFile]]]


@dataclass(frozen=True)
class CheckResult:
    """The problems of one text, and what was parsed (for the other editor features)."""

    problems: tuple[Problem, ...]
    parsed: ParsedAgent


def check_agent_text(
    text: str,
    path: Path,
    agent_dir: AgentDir,
    layers: Layers = (),
    models: Collection[str] | None = None,
    tiers: Callable[[], TierMap] | None = None,
) -> CheckResult:
    """The problems of ``text`` as the file ``path`` in ``agent_dir``.

    ``layers`` are the directories of its catalog with their files on disk, lowest
    precedence first (``AgentRegistry.directories``); ``models`` the endpoint's model ids
    when known; ``tiers`` the session's tier mapping (read only for a tier: the note then
    says what it becomes). Problems carry 1-based lines and, where it is known, the exact
    ``span``.
    """
    parsed = read_agent_text(path, text, agent_dir.source, agent_dir.plugin, keep_going=True)
    problems = list(parsed.problems)
    if parsed.front is not None:
        lint = _Lint(str(path), parsed.front, parsed.entries)
        lint.keys()
        lint.isolation()
        lint.model(models, tiers)
        problems += lint.found
    if parsed.definition is not None and layers:
        problems += _neighbours(path, agent_dir, parsed, layers)
    return CheckResult(tuple(problems), parsed)


@dataclass
class _Lint:
    path: str
    front: Frontmatter
    entries: Mapping[str, Entry]
    found: list[Problem] = field(default_factory=list)

    def add(self, problem: Problem) -> None:
        self.found.append(problem)

    def keys(self) -> None:
        choices = tuple(sorted(KNOWN_KEYS | FOREIGN_KEYS))
        hints = MAX_HINTS  # a guess for the first unknown keys only: a file may hold thousands
        for key, entry in self.entries.items():
            if key in KNOWN_KEYS or key in FOREIGN_KEYS:
                continue
            close = closest_name(key, choices) if hints > 0 else None
            hints -= 1
            hint = f" (did you mean '{close}'?)" if close else ""
            span = entry.key_span
            self.add(
                Problem(
                    self.path,
                    entry.line,
                    f"unknown key '{key}' is kept but ignored{hint}",
                    "warning",
                    span,
                    Codes.UNKNOWN_KEY,
                    close,
                )
            )

    def isolation(self) -> None:
        entry = self.entries.get("isolation")
        value = (entry.node.text or "").strip() if entry else ""
        if entry is None or not value or value == WORKTREE:
            return
        close = WORKTREE if _closest(value, [WORKTREE]) else None
        self.add(
            Problem(
                self.path,
                entry.line,
                f"isolation: '{value}' is ignored; the only value is '{WORKTREE}'"
                + (f" (did you mean '{WORKTREE}'?)" if close else ""),
                "warning",
                _value_span(self.front, entry),
                Codes.ISOLATION,
                close,
            )
        )

    def model(self, models: Collection[str] | None, tiers: Callable[[], TierMap] | None) -> None:
        entry = self.entries.get("model")
        value = (entry.node.text or "").strip() if entry else ""
        if entry is None or not value or value == INHERIT:
            return
        if tier_of(value, models) is not None:
            self.add(
                Problem(
                    self.path,
                    entry.line,
                    _tier_note(value, models, tiers() if tiers else None),
                    "info",
                    _value_span(self.front, entry),
                    Codes.MODEL_TIER,
                )
            )
            return
        if models is None or value in models:
            return
        known = sorted(models)
        close = _closest(value, [INHERIT, *TIERS, *known])
        listed = ", ".join(known[:SHOWN_MODELS]) + (", ..." if len(known) > SHOWN_MODELS else "")
        self.add(
            Problem(
                self.path,
                entry.line,
                f"model: '{value}' is not a model the endpoint offers"
                + (f" (did you mean '{close}'?)" if close else "")
                + f"; use '{INHERIT}', a tier ({', '.join(TIERS)}) or one of: "
                + (listed or "(none)"),
                "warning",
                _value_span(self.front, entry),
                Codes.UNKNOWN_MODEL,
                close,
            )
        )


def _tier_note(value: str, models: Collection[str] | None, tiers: TierMap | None) -> str:
    """What a tier becomes (``model: sonnet -> gpt-4o (settings: models.sonnet)``), and
    where to map it when it is not."""
    tier = tier_of(value, models) or value
    where = f"models.{tier} in .wave/settings.json or {tier_env(tier)}"
    choice = resolve_model(value, tiers, models) if tiers is not None else None
    if choice is None or choice.note is None:
        return f"model: Claude Code's tier '{tier}': runs on {where} when set, else inherit"
    if choice.model is None:
        return f"model: {choice.note} (set {where})"
    return f"model: {choice.note}"


def _neighbours(
    path: Path, agent_dir: AgentDir, parsed: ParsedAgent, layers: Layers
) -> list[Problem]:
    """Duplicates within the agents directory (with its subdirectories: one name per
    tree, as the loader has it), and overrides across scopes, judged against the other
    files as they are on disk (this file as its open text)."""
    defn = parsed.definition
    assert defn is not None
    name_entry = parsed.entries.get("name")
    line = name_entry.line if name_entry else None
    span = _value_span(parsed.front, name_entry) if parsed.front and name_entry else None
    out: list[Problem] = []
    mine = ParsedFile(path, defn, (), line)
    own = _tree_of(agent_dir)
    for top, all_files in _trees(layers):
        # Only files of the same name matter (dedupe_directory compares names only).
        files = [f for f in all_files if _named(f, defn.name)]
        if _tree_of(top) == own:
            out += _same_tree(path, agent_dir, mine, files, span)
            continue
        if not files:
            continue
        other = files[0].definition  # the first by path wins in its tree
        assert other is not None
        described = f"{_scope(top)} '{other.name}'{_at(other)}"
        if _precedes(layers, top, agent_dir):
            message = f"overrides the {described}"
        else:
            message = f"the {described} overrides this one"
        out.append(_info(path, line, span, message))
    return out


def _same_tree(
    path: Path,
    agent_dir: AgentDir,
    mine: ParsedFile,
    files: Sequence[ParsedFile],
    span: Span | None,
) -> list[Problem]:
    """The duplicate report of this file among the files of its own tree, in the loader's
    order (a directory's files by name, before its subdirectories')."""

    def order(parsed: ParsedFile) -> tuple[tuple[str, ...], str]:
        folder = agent_dir.directory if parsed is mine else parsed.path.parent
        return folder.parts, parsed.path.name

    others = [f for f in files if order(f) != order(mine)]  # this file is the text
    ordered = sorted([*others, mine], key=order)
    _, problems = dedupe_directory(ordered)
    out = [
        replace(problem, span=span, code=Codes.DUPLICATE_NAME)
        for problem in problems
        if problem.path == str(path)  # the loader's duplicate report, as it words it
    ]
    later = [f for f in ordered if order(f) > order(mine)]
    if later and not out:
        if later[0].path.parent == agent_dir.directory:
            where = f"{later[0].path.name} in the same directory"
            first = "this file comes first by name"
        else:
            where = f"{later[0].path} in the same agents directory"
            first = "this file comes first by path"
        name = mine.definition.name if mine.definition else ""
        message = f"{where} also defines '{name}' and is ignored ({first})"
        out.append(_info(path, mine.name_line, span, message, Codes.DUPLICATE_NAME))
    return out


def _tree_of(agent_dir: AgentDir) -> tuple[object, ...]:
    return agent_dir.source, agent_dir.plugin, agent_dir.tree or agent_dir.directory


def _trees(layers: Layers) -> list[tuple[AgentDir, list[ParsedFile]]]:
    """The layers merged by tree (an agents directory with its subdirectories), each with
    its files in the loader's order, lowest precedence first."""
    merged: dict[tuple[object, ...], tuple[AgentDir, list[ParsedFile]]] = {}
    for layer_dir, files in layers:
        merged.setdefault(_tree_of(layer_dir), (layer_dir, []))[1].extend(files)
    return list(merged.values())


def _precedes(layers: Layers, other: AgentDir, agent_dir: AgentDir) -> bool:
    """Whether the tree of ``other`` comes before (is overridden by) that of ``agent_dir``;
    true when ``agent_dir`` is not among the layers."""
    order = [_tree_of(d) for d, _ in layers]
    own = _tree_of(agent_dir)
    return own not in order or order.index(_tree_of(other)) < order.index(own)


def _info(
    path: Path, line: int | None, span: Span | None, message: str, code: str = Codes.OVERRIDES
) -> Problem:
    return Problem(str(path), line, message, "info", span, code)


def _named(parsed: ParsedFile, name: str) -> bool:
    return parsed.definition is not None and parsed.definition.name == name


def _scope(agent_dir: AgentDir) -> str:
    if agent_dir.source == "builtin":
        return "built-in agent"
    if agent_dir.source == "plugin":
        return f"plugin '{agent_dir.plugin}' agent"
    return f"{agent_dir.source}-level agent"


def _at(defn: AgentDefinition) -> str:
    return f" ({defn.path})" if defn.path is not None and defn.source != "builtin" else ""


def _value_span(front: Frontmatter | None, entry: Entry) -> Span | None:
    if front is None:
        return None
    span = entry.node.span
    if span.line != span.end_line:  # a block scalar: point at its first line only
        return None
    return span


def _closest(word: str, choices: Sequence[str]) -> str | None:
    return closest_name(word, tuple(choices))
