"""pyproject.toml's lower bounds are what .ci/lowest-deps tests (issue 28 point 4): its
constraints file pins each dependency at exactly its lower bound, and the lint and type
tools of the README's test command are pinned."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.requirements import Requirement
from packaging.version import Version

ROOT = Path(__file__).resolve().parent.parent


def requirements() -> list[Requirement]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    listed = [*project["dependencies"], *project["optional-dependencies"]["test"]]
    return [Requirement(text) for text in listed]


def lowest(requirement: Requirement) -> Version:
    bounds = [s for s in requirement.specifier if s.operator in (">=", "==")]
    assert len(bounds) == 1, f"{requirement}: one lower bound (>= or ==), so it can be tested"
    return Version(bounds[0].version)


def constraints() -> dict[str, Version]:
    pins = {}
    for line in (ROOT / ".ci" / "lowest-constraints.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = line.split("==")
            pins[canonical(name)] = Version(version)
    return pins


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def test_the_constraints_pin_every_dependency_at_its_lower_bound() -> None:
    expected = {canonical(r.name): lowest(r) for r in requirements()}
    assert constraints() == expected


def test_the_lint_and_type_tools_are_pinned() -> None:
    pinned = {canonical(r.name): str(r.specifier) for r in requirements()}
    assert pinned["ruff"].startswith("==") and pinned["mypy"].startswith("==")


def test_the_lowest_versions_run_in_ci() -> None:
    script = (ROOT / ".ci" / "lowest-deps").read_text()
    assert "-c .ci/lowest-constraints.txt" in script
    assert "bash .ci/lowest-deps" in (ROOT / ".ci" / "run").read_text()
