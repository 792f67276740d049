"""``wave-ls agents``: list the subagents of a workspace and the problems of their files.

Exit code 0 when every file is fine, 1 when any problem was found, 2 for a bad ``--cwd``.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wave_ls.agents import AgentCatalog


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

    cwd = Path(args.cwd) if args.cwd else Path.cwd()
    if not cwd.is_dir():
        print(f"wave-ls agents: not a directory: {cwd}", file=sys.stderr)
        return 2
    catalog = AgentRegistry().load(cwd)
    if args.json:
        print(json.dumps(catalog.to_json(), indent=2, ensure_ascii=False))
    else:
        _print_table(catalog)
    return 1 if catalog.problems else 0


def _print_table(catalog: AgentCatalog) -> None:
    from rich.console import Console
    from rich.table import Table

    from wave_ls.agents import tool_summary

    table = Table(title="Subagents", title_justify="left")
    for column in ("Name", "Source", "Model", "Tools", "Isolation"):
        table.add_column(column, overflow="fold")
    for agent in catalog.agents:
        table.add_row(
            agent.name, agent.source, agent.model, tool_summary(agent), agent.isolation or ""
        )
    Console(highlight=False).print(table)
    if catalog.problems:
        # Plain lines (no wrapping) so that editors and terminals can jump to path:line.
        print(f"\n{len(catalog.problems)} problem(s):")
        for problem in catalog.problems:
            print(problem)
