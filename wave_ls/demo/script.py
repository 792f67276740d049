"""The offline demo: a throwaway project and the fake model's script for it."""

from __future__ import annotations

import copy
import subprocess
from pathlib import Path

from wave_ls.runtime.tool_names import WaveTool

PROJECT_FILES = {
    "calc.py": '"""A tiny calculator."""\n\n\ndef add(a, b):\n    return a - b\n'
    "\n\ndef mul(a, b):\n    return a * b\n",
    "test_calc.py": "from calc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
    "\n\ndef test_mul():\n    assert mul(2, 3) == 6\n",
    "AGENTS.md": "# Project notes\nCheck changes with python3 one-liners.\n",
    ".wave/agents/test-runner.md": "---\nname: test-runner\ndescription: Use PROACTIVELY to run "
    "the tests and report failures.\ntools: Read, Grep, Glob, Bash\n---\nYou run the project's "
    "tests and report which ones fail and why.\n",
}

FIX_MESSAGE = "The add function in calc.py is broken. Please find the bug, fix it and check it."
EXPLORE_MESSAGE = "[@agent:Explore] where are the tests for the calculator?"
EXPLORE_TASK = "Find the test files for calc.py and list the functions they test."
ISOLATED_MESSAGE = "Add a sub function to calc.py, but in an isolated worktree so I can review it."
ISOLATED_TASK = "In calc.py, add a function sub(a, b) that returns a - b, below add."
BACKGROUND_MESSAGE = "Run the tests in the background; tell me when they are done."
BACKGROUND_TASK = "Run the calculator tests and report how many pass."
BACKGROUND_DONE = "Both tests pass (2 passed)."  # the subagent's answer, and its notice's
TESTS = "python3 -c 'import test_calc as t; t.test_add(); t.test_mul(); print(\"2 passed\")'"
CHECK = (
    "python3 -c 'import calc; assert calc.add(2, 3) == 5; print(\"add(2, 3) =\", calc.add(2, 3))'"
)


def make_project(root: Path) -> None:
    """A small git repo with a bug in it."""
    for relative, text in PROJECT_FILES.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    env_args = ["-c", "user.name=wave demo", "-c", "user.email=demo@wave.invalid"]
    for args in (
        ["init", "-q", "-b", "main"],
        ["add", "-A"],
        [*env_args, "commit", "-qm", "start"],
    ):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True)


# The fake model's script (docs/fake-model.md): JSON, route by route.
ToolCall = dict[str, object]
Step = dict[str, object]
Route = dict[str, object]
# The main agent's replies stream in small chunks, so the terminal shows them arrive.
SLOW = {"chunk_size": 6, "chunk_delay": 0.02}


def call(name: str, **arguments: object) -> ToolCall:
    """A tool call the model makes."""
    return {"name": name, "arguments": arguments}


def step(content: str | None = None, *calls: ToolCall, delay: float | None = None) -> Step:
    """One model reply: its text and tool calls, streamed slowly, or all at once after
    ``delay`` seconds (a subagent's)."""
    reply: Step = {} if content is None else {"content": content}
    if calls:
        reply["tool_calls"] = list(calls)
    return {**reply, **(SLOW if delay is None else {"delay": delay})}


def route(match: str, *steps: Step) -> Route:
    """The replies to a conversation whose last user message holds ``match``."""
    return {"match": match, "steps": list(steps)}


ROUTES: list[Route] = [
    # The main agent's (the bug fixed, then one delegation of each kind) and the subagents'
    # (each matches the task it was given). Order counts: a tie goes to the first listed.
    route(
        "add function in calc.py is broken",
        step(
            "Let me look at the calculator first.",
            call("Grep", pattern="def add", output_mode="content", **{"-n": True}),
            call("Read", file_path="calc.py"),
        ),
        step(
            "`add` subtracts instead of adding. Fixing it.",
            call(
                "Edit",
                file_path="calc.py",
                old_string="return a - b",
                new_string="return a + b",
            ),
        ),
        step("Now let me check the fix.", call("Bash", command=CHECK, description="Check add()")),
        step(
            "Fixed: `add` in calc.py returned `a - b`; it now returns `a + b`, and "
            "`add(2, 3)` gives 5."
        ),
    ),
    route(
        "where are the tests for the calculator",
        step(
            "I'll ask the Explore subagent to find them.",
            call(
                WaveTool.AGENT.value,
                description="Find calculator tests",
                prompt=EXPLORE_TASK,
                subagent_type="Explore",
            ),
        ),
        step("The tests are in `test_calc.py`: `test_add` and `test_mul`."),
    ),
    route(
        ISOLATED_MESSAGE,
        step(
            "I'll have a subagent do it in its own worktree.",
            call(
                WaveTool.AGENT.value,
                description="Add sub() in a worktree",
                prompt=ISOLATED_TASK,
                subagent_type="general-purpose",
                isolation="worktree",
            ),
        ),
        step(
            "Done: `sub` was added on a branch of its own, in the worktree shown above; "
            "your working tree is untouched."
        ),
    ),
    route(
        ISOLATED_TASK,
        step(
            None,
            call(
                "Edit",
                file_path="calc.py",
                old_string="def mul(a, b):",
                new_string="def sub(a, b):\n    return a - b\n\n\ndef mul(a, b):",
            ),
            delay=0.2,
        ),
        step("Added sub(a, b) to calc.py.", delay=0.2),
    ),
    route(
        BACKGROUND_MESSAGE,
        step(
            None,
            call(
                WaveTool.AGENT.value,
                description="Run the tests",
                prompt=BACKGROUND_TASK,
                subagent_type="test-runner",
                run_in_background=True,
            ),
        ),
        step("The tests are running in the background; I'll tell you when they finish."),
    ),
    route(
        BACKGROUND_TASK,
        step(None, call("Bash", command=TESTS, description="Run the tests"), delay=0.5),
        step(BACKGROUND_DONE, delay=0.5),
    ),
    route(
        BACKGROUND_DONE,
        step("The background test run finished: both tests pass."),
    ),
    route(
        EXPLORE_TASK,
        step(None, call("Glob", pattern="**/test_*.py"), delay=0.3),
        step(None, call("Read", file_path="test_calc.py"), delay=0.3),
        step("test_calc.py tests calc.add (test_add) and calc.mul (test_mul).", delay=0.3),
    ),
]


def demo_script() -> dict[str, list[Route]]:
    """What the offline model answers, route by route (see docs/fake-model.md)."""
    return {"routes": copy.deepcopy(ROUTES)}
