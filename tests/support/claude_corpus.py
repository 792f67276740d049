"""The 966 Claude Code agent files of ``shared/corpus/agents/`` read the way wave-ls reads
them: what each file gives (for the compatibility test and its benchmark)."""

from __future__ import annotations

import hashlib
from collections import Counter
from pathlib import Path
from typing import Any

from wave_ls.agents import parse_agent_file

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus" / "agents"
SNAPSHOT = Path(__file__).resolve().parents[1] / "data" / "claude_corpus.json"
# Broken for Claude Code as well (its second, quoted reading fails too): they stay errors.
BROKEN_FOR_CLAUDE_CODE = 20


def corpus_files() -> list[Path]:
    """Every agent file of the corpus, in a stable order."""
    return sorted(CORPUS.rglob("*.md"))


def reading(path: Path) -> dict[str, Any]:
    """What one file gives: the definition's values a user and the model see (the
    description as a digest), and each problem's severity and line; or the error."""
    text = path.read_bytes().decode("utf-8", errors="replace")
    defn, problems = parse_agent_file(path, text, "project")
    found = [[p.severity, p.line] for p in problems]
    if defn is None:
        return {"loads": False, "problems": found}
    return {
        "loads": True,
        "name": defn.name,
        "description": hashlib.sha256(defn.description.encode()).hexdigest()[:16],
        "tools": None if defn.tools is None else list(defn.tools),
        "model": defn.model,
        "problems": found,
    }


def read_corpus() -> dict[str, dict[str, Any]]:
    """``reading`` of every corpus file, by its path inside the corpus."""
    return {str(path.relative_to(CORPUS)): reading(path) for path in corpus_files()}


def by_repository(readings: dict[str, dict[str, Any]]) -> dict[str, Counter[str]]:
    """Per repository folder: files, loaded, errors, warnings, notes."""
    out: dict[str, Counter[str]] = {}
    for name, one in readings.items():
        counts = out.setdefault(name.split("/")[0], Counter())
        counts["files"] += 1
        counts["loaded"] += one["loads"]
        for severity, _line in one["problems"]:
            counts[severity] += 1
    return out


def report(readings: dict[str, dict[str, Any]]) -> str:
    """A table of ``by_repository`` and the load rate."""
    rows = [f"{'repository':<46} {'files':>5} {'load':>5} {'err':>4} {'warn':>5} {'info':>5}"]
    total: Counter[str] = Counter()
    for repo, counts in sorted(by_repository(readings).items()):
        total.update(counts)
        rows.append(
            f"{repo:<46} {counts['files']:>5} {counts['loaded']:>5} {counts['error']:>4} "
            f"{counts['warning']:>5} {counts['info']:>5}"
        )
    rate = total["loaded"] / max(total["files"], 1)
    loadable = total["files"] - BROKEN_FOR_CLAUDE_CODE
    rows.append(
        f"load rate: {total['loaded']} of {total['files']} ({rate:.1%}); Claude Code's "
        f"loader: {loadable} ({loadable / max(total['files'], 1):.1%})"
    )
    return "\n".join(rows)
