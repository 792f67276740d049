"""``wave-ls agents``: list the subagents of a workspace and the problems of their files.

Each agent shows where it came from (its file) and, for a model tier, what it becomes
(``sonnet -> inherit: no model set for this tier``). When an endpoint is configured and an
agent names a model, the endpoint's model list is asked for (3 s at most): a ``model`` it
does not offer (neither ``inherit`` nor a tier) is a warning.

Exit code 0 when no problem is an error or a warning (notes of severity ``info`` are
fine), 1 otherwise (use it in CI), 2 for a bad ``--cwd``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wave_ls.agents import AgentCatalog, Problem
    from wave_ls.cli.agent_models import AgentModels

FAILING = ("error", "warning")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--cwd", default=None, help="the project directory (default: the current directory)"
    )
    parser.add_argument(
        "--json",
        action="store_true",
        help="print the wave/agents/list result as JSON: {agents: [...], problems: [...]}",
    )


def run(args: argparse.Namespace) -> int:
    import json

    from wave_ls.agents import AgentRegistry
    from wave_ls.cli.agent_models import agent_models

    cwd = Path(args.cwd) if args.cwd else Path.cwd()
    if not cwd.is_dir():
        print(f"wave-ls agents: not a directory: {cwd}", file=sys.stderr)
        return 2
    catalog = AgentRegistry().load(cwd)
    models = agent_models(catalog, cwd)
    problems = [*catalog.problems, *models.problems]
    if args.json:
        print(json.dumps(catalog_json(catalog, models), indent=2, ensure_ascii=False))
    else:
        _print_table(catalog, models, problems)
    return 1 if any(problem.severity in FAILING for problem in problems) else 0


def catalog_json(catalog: AgentCatalog, models: AgentModels) -> dict[str, object]:
    """``wave/agents/list``'s result, with ``modelNote`` on a tier's agent and the model
    warnings among the problems."""
    out = catalog.to_json()
    for item in out["agents"]:
        note = models.notes.get(item["name"])
        if note is not None:
            item["modelNote"] = note
    out["problems"] += [problem.to_json() for problem in models.problems]
    return out


def _print_table(catalog: AgentCatalog, models: AgentModels, problems: list[Problem]) -> None:
    from rich.console import Console
    from rich.table import Table

    from wave_ls.agents import tool_summary
    from wave_ls.agents.model_tiers import resolve_model

    table = Table(title="Subagents", title_justify="left")
    for column in ("Name", "Source", "Model", "Tools", "Isolation"):
        table.add_column(column, overflow="fold")
    for agent in catalog.agents:
        model = agent.model
        if agent.name in models.notes:  # the short form; the note is printed below
            resolved = resolve_model(agent.model, models.tiers, models.served).model
            model = f"{agent.model} -> {resolved or 'inherit'}"
        table.add_row(agent.name, agent.source, model, tool_summary(agent), agent.isolation or "")
    Console(highlight=False).print(table)
    # Plain lines (no wrapping) so that editors and terminals can jump to the files.
    files = [agent for agent in catalog.agents if agent.path and agent.source != "builtin"]
    if files:
        print("\nFiles:")
        for agent in files:
            note = models.notes.get(agent.name)
            print(f"{agent.name}: {agent.path}" + (f" (model {note})" if note else ""))
    if problems:
        print(f"\n{len(problems)} problem(s): {severity_counts(problems)}")
        for severity, heading in HEADINGS.items():
            found = [problem for problem in problems if problem.severity == severity]
            if found:
                print(heading)
                for problem in found:
                    print(problem)


HEADINGS = {
    "error": "Errors (these files are not loaded):",
    "warning": "Warnings (loaded; check these):",
    "info": "Notes:",
}


def severity_counts(problems: list[Problem]) -> str:
    """``1 error, 2 warnings, 1 note``: the severities present."""
    words = {"error": "error", "warning": "warning", "info": "note"}
    counts = [(sum(p.severity == s for p in problems), word) for s, word in words.items()]
    return ", ".join(f"{n} {word}{'s' if n != 1 else ''}" for n, word in counts if n)
