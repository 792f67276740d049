"""What a remembered "allow for this session" covers (``runtime/allowances.py``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from wave_ls.runtime.allowances import RememberingAsker, allowance_for
from wave_ls.runtime.core import Effect, PermissionDecision, PermissionRequest

EFFECTS: dict[str, Effect] = {"Write": "edit", "Edit": "edit", "Bash": "execute"}


def request(tool: str, cwd: Path | None = None, **args: Any) -> PermissionRequest:
    return PermissionRequest(tool, args, f"{tool} call", EFFECTS.get(tool, "other"), cwd=cwd)


@pytest.mark.parametrize(
    ("first", "later", "covered"),
    [
        ("npm test", "npm test -- --watch", True),
        ("npm test", "npm run build", False),
        ("git commit -m one", "git commit --amend", True),
        ("git commit -m one", "git push", False),
        ("make", "make clean", True),
        ("touch a.txt", "touch b.txt", True),
        ("touch a.txt", "rm a.txt", False),
        ("npm test && rm -rf /", "npm test", False),  # compound: exact only
        ("npm test", "npm test && rm -rf /", False),  # a prefix never covers a compound one
        ("npm test", "npm test > out.txt", False),
        ("python script.py", "python -c 'import os'", False),  # interpreters: exact only
        ("python script.py", "python script.py", True),
        ("FOO=1 make", "FOO=2 make", False),
        ("bash -c 'ls'", "bash -c 'rm -rf x'", False),
    ],
)
def test_bash_allowances(first: str, later: str, covered: bool, tmp_path: Path) -> None:
    rule = allowance_for(request("Bash", command=first), tmp_path)
    assert rule is not None
    assert rule.covers(request("Bash", command=later)) is covered


def test_edit_allowances_cover_every_file_tool_inside_the_folder(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    rule = allowance_for(request("Edit", project, file_path="src/a.py"), project)
    assert rule is not None and rule.description == f"file edits in {project}"
    assert rule.covers(request("Write", project / "src", file_path="b.py"))
    assert rule.covers(request("Edit", None, file_path=str(project / "deep/c.py")))
    assert not rule.covers(request("Write", project, file_path="../elsewhere.py"))
    assert not rule.covers(request("Bash", project, command="touch x"))
    # A link inside the folder that points outside it is outside.
    (project / "out").symlink_to(tmp_path)
    assert not rule.covers(request("Write", project, file_path="out/x.py"))
    # A file outside the folder is never remembered.
    assert allowance_for(request("Write", project, file_path="/etc/hosts"), project) is None


def test_other_tools(tmp_path: Path) -> None:
    fetch = allowance_for(request("WebFetch", url="https://Docs.Python.org/3/"), tmp_path)
    assert fetch is not None
    assert fetch.covers(request("WebFetch", url="https://docs.python.org/3/library/"))
    assert not fetch.covers(request("WebFetch", url="https://evil.example/"))
    assert allowance_for(request("ExitPlanMode", plan="x"), tmp_path) is None
    mcp = allowance_for(request("Skill", skill="x"), tmp_path)
    assert mcp is not None and mcp.covers(request("Skill", skill="y"))


class Scripted:
    def __init__(self, *answers: PermissionDecision) -> None:
        self.answers = list(answers)
        self.asked: list[str] = []

    async def ask(self, req: PermissionRequest) -> PermissionDecision:
        self.asked.append(str(req.arguments))
        return self.answers.pop(0)


async def test_the_asker_remembers_only_allowed_and_remembered_answers(tmp_path: Path) -> None:
    inner = Scripted(
        PermissionDecision(False, "no", remember=True),
        PermissionDecision(True),
        PermissionDecision(True, remember=True),
    )
    remembered: list[str] = []
    asker = RememberingAsker(inner, tmp_path, lambda a: remembered.append(a.description))
    ls_cmd = request("Bash", command="make all")
    assert not (await asker.ask(ls_cmd)).allowed  # a denial is never remembered
    assert (await asker.ask(ls_cmd)).allowed  # allowed once, not remembered
    decision = await asker.ask(ls_cmd)
    assert decision.allowed and decision.rule.endswith("Bash commands starting with `make all`")
    again = await asker.ask(request("Bash", command="make all -j4"))
    assert again.allowed and again.rule
    assert len(inner.asked) == 3
    assert remembered == ["Bash commands starting with `make all`"]
