"""``wave-ls doctor``: is this machine and this folder ready for wave-ls?

One line per check, ``ok``, ``warn`` (works, with less) or ``FAIL`` (something needed is
missing): the command sandbox, git, ripgrep, the model endpoint (asked for its models
with ``GET /models``: it fails when nothing answers or the model is not served; the key is
never printed, only whether it is set), the settings files and the agent files of the
folder (a file that is not loaded fails; agents loaded with warnings, or with a model the
endpoint does not offer, warn), and the folder's MCP servers (each allowed one started
once and asked for its tools; one that fails warns). Exit code 1 when any check fails, 2
for a bad ``--cwd``, else 0 (warnings included).
"""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wave_ls.runtime.settings import RuntimeSettings

OK, WARN, FAIL = "ok", "warn", "FAIL"


@dataclass
class Check:
    """One line of the report, and the lines that explain it."""

    name: str
    level: str
    summary: str
    details: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            "level": self.level,
            "summary": self.summary,
            "details": self.details,
        }


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--cwd", default=None, help="the project folder (default: the current directory)"
    )
    parser.add_argument("--json", action="store_true", help="print the checks as JSON")


def run(args: argparse.Namespace) -> int:
    import json

    cwd = Path(args.cwd) if args.cwd else Path.cwd()
    if not cwd.is_dir():
        print(f"wave-ls doctor: not a directory: {cwd}", file=sys.stderr)
        return 2
    home = Path.home()
    checks = [
        sandbox_check(cwd, home),
        git_check(),
        ripgrep_check(),
        endpoint_check(),
        settings_check(cwd, home),
        agents_check(cwd, home),
        mcp_check(cwd, home),
    ]
    failed = any(check.level == FAIL for check in checks)
    if args.json:
        report = {"ok": not failed, "checks": [check.to_json() for check in checks]}
        print(json.dumps(report, indent=2, ensure_ascii=False))
    else:
        for check in checks:
            print(f"{check.level:<5} {check.name:<9} {check.summary}")
            for line in check.details:
                print(f"{'':16}{line}")
        print("\nSomething needed is missing (FAIL above)." if failed else "\nReady.")
    return 1 if failed else 0


def sandbox_check(cwd: Path, home: Path) -> Check:
    from wave_ls.runtime.sandbox import available, offline_available
    from wave_ls.runtime.sandbox.bubblewrap import bwrap_path
    from wave_ls.runtime.sandbox.landlock import abi_version
    from wave_ls.runtime.settings import sandbox_env_problems
    from wave_ls.worktrees.sandboxing import load_sandbox_settings

    mechanism, detail = available()
    abi, bwrap = abi_version(), bwrap_path()
    typo = sandbox_env_problems(os.environ)
    detail += f"; {typo[0]}" if typo else ""
    details = [
        f"Landlock: ABI {abi}" if abi >= 1 else "Landlock: not in this kernel (or disabled)",
        f"bubblewrap: {bwrap}" if bwrap else "bubblewrap: not installed or cannot make namespaces",
    ]
    offline, how = offline_available()
    details.append(
        f"without network (plan mode, Explore, Plan): {how}"
        if offline != "none"
        else f"without network: no mechanism here ({how}); plan mode asks for every command "
        "and read-only agents cannot run Bash"
    )
    wanted = load_sandbox_settings(cwd, home).enabled
    details.append(
        "session sandbox: on (sandbox.enabled in the settings)"
        if wanted
        else "session sandbox: off (turn it on with sandbox.enabled in .wave/settings.json)"
    )
    if mechanism != "none":
        problem = probe_sandbox()
        if problem:
            summary = f"{mechanism} ({detail}) does not work here: {problem}"
            return Check("sandbox", FAIL if wanted else WARN, summary, details)
        return Check("sandbox", OK, f"{mechanism} ({detail}), tested", details)
    if wanted:
        summary = f"none ({detail}): this project asks for a sandbox and none works here"
        return Check("sandbox", FAIL, summary, details)
    summary = f"none ({detail}): isolated subagents' commands run unsandboxed (they say so)"
    return Check("sandbox", WARN, summary, details)


def probe_sandbox() -> str | None:
    """Run one confined command for real: None when it could write inside its tree and
    could not write beside it, else what went wrong."""
    import subprocess
    import tempfile

    from wave_ls.runtime.processes import confined
    from wave_ls.runtime.sandbox import confinement

    with tempfile.TemporaryDirectory(prefix="wave-doctor-") as scratch:
        inside, outside = Path(scratch, "inside"), Path(scratch, "outside")
        inside.mkdir()
        outside.mkdir()
        box = confinement([inside])
        try:
            script = f"touch '{inside}/ok'; touch '{outside}/escaped' 2>/dev/null; true"
            argv, options = confined(["sh", "-c", script], box, {})
            done = subprocess.run(
                argv,
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=30,
                check=False,
                **options,
            )
        except (OSError, subprocess.TimeoutExpired) as error:
            return f"the probe could not run ({error})"
        finally:
            box.close()
        if (outside / "escaped").exists():
            return "a confined command could write outside its folder"
        if not (inside / "ok").exists():
            return f"a confined command could not write inside its folder (exit {done.returncode})"
    return None


def git_check() -> Check:
    version = _version(["git", "--version"])
    if version is None:
        return Check(
            "git",
            WARN,
            "not found: worktrees fall back to dulwich (slower on big repositories), "
            "and the agent's git commands fail",
        )
    return Check("git", OK, version)


def ripgrep_check() -> Check:
    from wave_ls.runtime.tools.ripgrep import find_ripgrep

    rg = find_ripgrep()
    version = _version([rg, "--version"]) if rg else None
    if version is None:
        return Check("ripgrep", WARN, "not found: Grep searches in Python (4-8x slower)")
    return Check("ripgrep", OK, f"{version.splitlines()[0]} ({rg})")


def endpoint_check() -> Check:
    from wave_ls.runtime.settings import RuntimeSettings

    settings = RuntimeSettings.from_env()
    details = [
        f"OPENAI_BASE_URL: {settings.base_url or '(not set)'}",
        f"WAVE_MODEL: {settings.model or '(not set)'}",
        f"WAVE_FAST_MODEL: {settings.fast_model or '(not set)'}",
        f"OPENAI_API_KEY: {'set (not shown)' if settings.api_key else '(not set)'}",
        f"timeout {settings.model_timeout:g} s, {settings.model_retries} retries",
        *settings.problems,
    ]
    problem = settings.problem()
    if problem:
        return Check("endpoint", FAIL, problem, details)
    where = settings.base_url or "the OpenAI API"
    level, summary = model_served(settings)
    if level == OK and settings.problems:
        level = WARN
    return Check("endpoint", level, f"{settings.model} at {where}: {summary}", details)


def model_served(settings: RuntimeSettings) -> tuple[str, str]:
    """Ask the endpoint for its models (``GET /models``, 3 s at most): FAIL when nothing
    answers there, or it refuses the key, or it does not serve the model; a warning when it
    has no model list (some servers do not implement it)."""
    import http.client
    import urllib.error

    from wave_ls.runtime.model_list import ModelList, fetch_model_ids

    endpoint = ModelList.endpoint(settings.base_url, settings.api_key)
    assert endpoint is not None  # settings.problem() said one is configured
    try:
        served = fetch_model_ids(*endpoint)
    except urllib.error.HTTPError as error:
        if error.code in (401, 403):
            return FAIL, f"the endpoint refused the API key (HTTP {error.code}): set OPENAI_API_KEY"
        return WARN, f"not checked: GET /models answered HTTP {error.code}"
    except (OSError, http.client.HTTPException) as error:
        reason = getattr(error, "reason", None) or error
        return FAIL, f"nothing answers there ({reason}): check OPENAI_BASE_URL, start the server"
    except ValueError as error:
        return WARN, f"not checked: GET /models answered something else ({error})"
    if settings.model in served:
        return OK, "served"
    offered = ", ".join(served[:10]) + (", ..." if len(served) > 10 else "")
    return FAIL, (
        f"not served by this endpoint (it serves: {offered or 'no models'}); set WAVE_MODEL "
        "to one of them"
    )


def settings_check(cwd: Path, home: Path) -> Check:
    from wave_ls.agents.model_tiers import load_tier_map
    from wave_ls.runtime.project_settings import settings_files
    from wave_ls.worktrees.sandboxing import load_sandbox_settings, project_folder
    from wave_ls.worktrees.settings import load_worktree_settings

    project = project_folder(cwd)
    found = [str(path) for path in settings_files(project, home) if path.is_file()]
    warnings = list(
        dict.fromkeys(
            [
                *load_worktree_settings(project, home).warnings,
                *load_sandbox_settings(cwd, home).warnings,
                *load_tier_map(cwd, home).warnings,
            ]
        )
    )
    summary = ", ".join(found) if found else "no settings files (defaults)"
    if warnings:
        return Check("settings", WARN, f"{len(warnings)} problem(s) in {summary}", warnings)
    return Check("settings", OK, summary)


def agents_check(cwd: Path, home: Path | None = None) -> Check:
    """FAIL when a file is not loaded (an error); warn for warnings (the agents load, with
    less or with a model the endpoint does not offer); notes are counted, not listed."""
    from wave_ls.agents import AgentRegistry
    from wave_ls.cli.agent_models import agent_models
    from wave_ls.cli.agents_cmd import severity_counts

    catalog = AgentRegistry(home).load(cwd)
    models = agent_models(catalog, cwd, home)
    problems = [*catalog.problems, *models.problems]
    names = ", ".join(catalog.names())
    details = [
        f"{problem.severity}: {problem}" for problem in problems if problem.severity != "info"
    ]
    details += [f"model {note}" for note in dict.fromkeys(models.notes.values())]
    if models.served is None and any(agent.model != "inherit" for agent in catalog.agents):
        details.append("models not checked against the endpoint (its model list is unknown)")
    level = OK
    if any(problem.severity == "warning" for problem in problems):
        level = WARN
    if any(problem.severity == "error" for problem in problems):
        level = FAIL
    summary = f"{len(catalog.agents)} subagents: {names}"
    if problems:
        summary += f"; {severity_counts(problems)} in agent files"
    return Check("agents", level, summary, details)


def mcp_check(cwd: Path, home: Path) -> Check:
    """The folder's MCP servers: those that may start are started and asked for their tools
    (then stopped); the others say why they wait. A server that fails warns (the agent
    works without it)."""
    import asyncio

    from wave_ls.mcp.manager import McpManager

    async def probe() -> list[dict[str, object]]:
        manager = McpManager()
        handle = manager.open(cwd, home, "doctor")
        try:
            handle.start()
            await handle.wait_for(None)
            return await manager.list(cwd, home)
        finally:
            await handle.close()

    rows = asyncio.run(probe())
    if not rows:
        return Check("mcp", OK, "no MCP servers")
    details = []
    for row in rows:
        tools = row.get("tools") or []
        line = f"{row['name']} ({row['scope']}, {row['transport']}): {row['status']}"
        if row["status"] == "connected":
            line += f", {len(tools)} tools"  # type: ignore[arg-type]
        if row.get("error"):
            line += f": {row['error']}"
        details.append(line)
    failed = sum(row["status"] == "failed" for row in rows)
    summary = f"{len(rows)} servers" + (f", {failed} failed" if failed else "")
    return Check("mcp", WARN if failed else OK, summary, details)


def _version(argv: list[str]) -> str | None:
    import subprocess

    try:
        done = subprocess.run(
            argv, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else None
