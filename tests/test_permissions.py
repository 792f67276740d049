"""The permission policy and the read-only Bash check (plan mode, Explore/Plan subagents)."""

from __future__ import annotations

import pytest

from wave_ls.runtime.bash_safety import is_read_only_command
from wave_ls.runtime.core import PERMISSION_MODES, Effect, PermissionMode
from wave_ls.runtime.permissions import (
    PLAN_MODE_EDIT_DENIED,
    decide,
    permission_summary,
)

# --------------------------------------------------------------------------- bash_safety

READ_ONLY = [
    "ls -la",
    "ls [ab]*",
    "pwd",
    "cat README.md | head -n 20",
    "grep -rn 'def main' src | wc -l",
    "grep -rn foo src/*.py",
    "rg -n 'class \\w+' --type py",
    "find . -name '*.py' -not -path './.venv/*'",
    "find . -type f -exec grep -l TODO {} \\;",
    "sed -n '1,20p' src/app.py",
    "sed -n -e 1p -e '$p' f",
    "sed 's/a/b/g; /x/,/y/d' f",
    "awk '{print $1}' file",
    "awk -F: '$3 > 100' /etc/passwd",
    "git status",
    "git log --oneline -5",
    "git diff HEAD~1 -- src",
    "git show HEAD:src/a.py | head",
    "git -C sub --no-pager log -p",
    "git branch -a",
    "git branch --contains HEAD",
    "git tag -l 'v*'",
    "git remote -v",
    "git config --get user.name",
    "git stash list",
    "git rev-parse --show-toplevel",
    "git ls-files | wc -l",
    "git blame -L 1,10 src/app.py",
    "ls 2>/dev/null",
    "ls > /dev/null 2>&1",
    "ls &>/dev/null",
    "cat < input.txt",
    "echo 'a > b; rm x'",  # quoted: only text
    'echo "$(git rev-parse HEAD)"',
    "echo $HOME",
    "cd src && ls",
    "test -f x && echo yes || echo no",
    "[ -d src ]",
    "for f in a b; do wc -l $f; done",
    "LANG=C sort file",
    "sort -t, -k2 data.csv",
    "uniq -c counts.txt",
    "xargs grep foo",
    "env",
    "command -v git",
    "date +%s",
    "diff <(ls a) <(ls b)",
    "bash -c 'ls && pwd'",
    "curl --version",
    "jq .name package.json",
    "pip list",
    "npm ls",
    "/usr/bin/ls",
    "ls &",
    "ls \\\n  -la",
]

REFUSED = [
    # (command, what the reason must name)
    ("rm -rf build", "rm"),
    ("mkdir out", "mkdir"),
    ("touch f", "touch"),
    ("mv a b", "mv"),
    ("cp a b", "cp"),
    ("ln -s a b", "ln"),
    ("chmod +x f", "chmod"),
    ("dd if=a of=b", "dd"),
    ("truncate -s 0 f", "truncate"),
    ("ls && rm -rf x", "rm"),
    ("ls; rm x", "rm"),
    ("ls || rm x", "rm"),
    ("ls\nrm x", "rm"),
    ("ls & rm x", "rm"),
    ("(rm x)", "rm"),
    ("{ rm x; }", "rm"),
    ("echo $(rm x)", "rm"),
    ("echo `rm x`", "rm"),
    ('echo "$(rm x)"', "rm"),
    ("cat <(rm x)", "rm"),
    ("if true; then rm x; fi", "rm"),
    ("echo hi > f", "> f"),
    ("echo hi >> f", ">> f"),
    ("ls 2> err.txt", "2> err.txt"),
    ("ls &> out", "&> out"),
    ("ls >| out", ">| out"),
    ("cat a | tee b", "tee"),
    ("sed -i s/a/b/ f", "sed -i"),
    ("sed -ne p -i f", "sed -i"),
    ("sed --in-place s/a/b/ f", "in-place"),
    ("sed 's/a/b/w out' f", "s///w"),
    ("sed -n '1w out' f", "`w`"),
    ("find . -delete", "-delete"),
    ("find . -exec rm {} +", "rm"),
    ("find . -fprint out", "-fprint"),
    ("ls | xargs rm", "rm"),
    ("ls | xargs sed -i s/a/b/", "sed"),
    ("awk '{print > \"f\"}' x", "awk"),
    ("awk 'BEGIN{system(\"rm x\")}'", "system"),
    ("sort -o out f", "sort -o"),
    ("uniq a b", "uniq"),
    ("git commit -m x", "git commit"),
    ("git push", "git push"),
    ("git add .", "git add"),
    ("git checkout main", "git checkout"),
    ("git reset --hard", "git reset"),
    ("git stash", "git stash"),
    ("git clean -fd", "git clean"),
    ("git branch -D x", "git branch -D"),
    ("git branch newb", "git branch newb"),
    ("git tag v1", "git tag v1"),
    ("git config user.name x", "git config"),
    ("git -c core.pager=sh log", "git -c"),
    ("git diff --output=x", "--output"),
    ("pip install requests", "pip install"),
    ("npm install", "npm install"),
    ("apt-get install -y jq", "apt-get"),
    ("python -c 'print(1)'", "python"),
    ("node -e 1", "node"),
    ("bash -c 'rm x'", "rm"),
    ("ls | sh", "shell script"),
    ("curl -o out https://x", "curl"),
    ("curl -sSLO https://x", "curl"),
    ("curl -sSL https://example.com", "network"),  # issue 25: it could send what it read
    ("wget https://x", "wget"),
    ("vim f", "vim"),
    ("sudo ls", "sudo"),
    ("./build.sh", "./build.sh"),
    ("$CMD", "$CMD"),
    ("PATH=/tmp ls", "PATH"),
    ("for PATH in /tmp; do ls; done", "PATH"),
    ("find . $X", "$X"),  # could expand to -delete
    ("sed -n 1p *", "*"),  # a file named "-i" would become an option
    ('sort "-$X" f', "-$X"),
    ('sed "s/a/$X/" f', "expands"),
    ("cat <<EOF\nhi\nEOF", "here-document"),
    ("echo 'unterminated", "unterminated"),
    ("frobnicate --all", "frobnicate"),  # unknown: refused by default
    ("", "empty"),
]


@pytest.mark.parametrize("command", READ_ONLY)
def test_read_only_commands_are_accepted(command: str) -> None:
    assert is_read_only_command(command) == (True, "")


@pytest.mark.parametrize(("command", "named"), REFUSED)
def test_commands_with_side_effects_are_refused_with_a_reason(command: str, named: str) -> None:
    # PLAN-RO-3
    ok, reason = is_read_only_command(command)
    assert not ok
    assert named in reason


# --------------------------------------------------------------------------- decide

EDIT: dict[str, object] = {"file_path": "src/app.py", "old_string": "a", "new_string": "b"}

# (tool, args, effect) -> expected action per mode:
# default, acceptEdits, plan, bypassPermissions
TABLE: list[tuple[str, dict[str, object], Effect, tuple[str, str, str, str]]] = [
    ("Read", {"file_path": "a.py"}, "read", ("allow", "allow", "allow", "allow")),
    ("Grep", {"pattern": "x"}, "read", ("allow", "allow", "allow", "allow")),
    ("WebFetch", {"url": "https://x"}, "read", ("allow", "allow", "allow", "allow")),
    ("Edit", EDIT, "edit", ("ask", "allow", "deny", "allow")),
    ("Write", {"file_path": "n.py", "content": ""}, "edit", ("ask", "allow", "deny", "allow")),
    # Control files (hooks, settings, agents, MCP servers, git's config): acceptEdits asks.
    ("Write", {"file_path": ".wave/settings.json"}, "edit", ("ask", "ask", "deny", "allow")),
    (
        "Edit",
        {"file_path": "/p/.claude/settings.local.json"},
        "edit",
        ("ask", "ask", "deny", "allow"),
    ),
    ("Write", {"file_path": "/p/.wave/agents/x.md"}, "edit", ("ask", "ask", "deny", "allow")),
    ("Write", {"file_path": ".claude/agents/a/x.md"}, "edit", ("ask", "ask", "deny", "allow")),
    ("Write", {"file_path": "/p/.mcp.json"}, "edit", ("ask", "ask", "deny", "allow")),
    ("Write", {"file_path": ".git/hooks/pre-commit"}, "edit", ("ask", "ask", "deny", "allow")),
    ("Edit", {"file_path": "/p/.git/config"}, "edit", ("ask", "ask", "deny", "allow")),
    ("Write", {"file_path": "docs/settings.json"}, "edit", ("ask", "allow", "deny", "allow")),
    ("Write", {"file_path": ".wave/notes.md"}, "edit", ("ask", "allow", "deny", "allow")),
    ("Bash", {"command": "git status"}, "execute", ("allow", "allow", "allow", "allow")),
    ("Bash", {"command": "rm -rf build"}, "execute", ("ask", "ask", "deny", "allow")),
    ("Bash", {"command": "ls > out.txt"}, "execute", ("ask", "ask", "deny", "allow")),
    ("TaskCreate", {"subject": "x"}, "session", ("allow", "allow", "allow", "allow")),
    ("TaskUpdate", {"taskId": "1"}, "session", ("allow", "allow", "allow", "allow")),
    ("Agent", {"subagent_type": "Plan"}, "session", ("allow", "allow", "allow", "allow")),
    ("ExitPlanMode", {}, "session", ("allow", "allow", "allow", "allow")),
    ("Artifact", {}, "session", ("allow", "allow", "allow", "allow")),
    ("EnterWorktree", {"name": "x"}, "worktree", ("allow", "allow", "deny", "allow")),
    ("SomeNewTool", {"x": 1}, "other", ("ask", "ask", "deny", "allow")),
]
MODES: tuple[PermissionMode, ...] = ("default", "acceptEdits", "plan", "bypassPermissions")


@pytest.mark.parametrize(("tool", "args", "effect", "expected"), TABLE)
def test_permission_table_over_all_modes(
    tool: str, args: dict[str, object], effect: Effect, expected: tuple[str, ...]
) -> None:
    assert set(MODES) == set(PERMISSION_MODES)
    # offline: plan mode's commands run without network here (without it: test_bash_network)
    got = tuple(decide(mode, tool, args, effect=effect, offline=True).action for mode in MODES)
    assert got == expected


def test_plan_mode_edit_is_denied_with_the_exit_plan_mode_hint() -> None:
    # PLAN-2
    verdict = decide("plan", "Write", {"file_path": "x.py", "content": ""}, effect="edit")
    assert verdict.action == "deny"
    assert verdict.message == PLAN_MODE_EDIT_DENIED
    assert "ExitPlanMode" in verdict.message


def test_plan_mode_bash_denial_names_the_command_and_says_only_read_only_is_allowed() -> None:
    # PLAN-RO-3
    verdict = decide("plan", "Bash", {"command": "mkdir -p out && ls"}, effect="execute")
    assert verdict.action == "deny"
    assert "only read-only Bash commands are allowed" in verdict.message
    assert "mkdir -p out && ls" in verdict.message
    assert "`mkdir` creates directories" in verdict.message


@pytest.mark.parametrize("mode", MODES)
def test_read_only_bash_flag_applies_the_plan_rule_in_every_mode(mode: PermissionMode) -> None:
    # EXP-4 / PLAN-RO-3: Explore and Plan subagents keep Bash read-only, even under bypass.
    denied = decide(mode, "Bash", {"command": "touch f"}, effect="execute", read_only_bash=True)
    assert denied.action == "deny"
    assert "read-only" in denied.message and "touch f" in denied.message
    allowed = decide(
        mode, "Bash", {"command": "rg foo"}, effect="execute", read_only_bash=True, offline=True
    )
    assert allowed.action == "allow"


def test_ask_message_tells_what_is_asked() -> None:
    verdict = decide("default", "Bash", {"command": "rm -rf build"}, effect="execute")
    assert verdict.action == "ask"
    assert verdict.message.startswith("Bash: rm -rf build")
    assert decide("default", "Edit", EDIT, effect="edit").message == "Edit src/app.py"


@pytest.mark.parametrize(
    ("tool", "args", "summary"),
    [
        ("Edit", EDIT, "Edit src/app.py"),
        ("Write", {"file_path": "/abs/n.py", "content": "x"}, "Write /abs/n.py"),
        ("Bash", {"command": "rm -rf build"}, "Bash: rm -rf build"),
        ("Bash", {"command": "ls \\\n  -la\n"}, "Bash: ls \\ -la"),
        ("WebFetch", {"url": "https://x.dev", "prompt": "p"}, "WebFetch https://x.dev"),
        ("Agent", {"subagent_type": "Explore", "description": "find x"}, "Agent (Explore): find x"),
        ("ExitPlanMode", {}, "ExitPlanMode"),
        ("Custom", {"b": 2, "a": 1}, 'Custom {"a": 1, "b": 2}'),
    ],
)
def test_permission_summary_is_one_readable_line(
    tool: str, args: dict[str, object], summary: str
) -> None:
    assert permission_summary(tool, args) == summary


def test_permission_summary_truncates_long_commands() -> None:
    summary = permission_summary("Bash", {"command": "echo " + "x" * 500})
    assert len(summary) <= len("Bash: ") + 200 and summary.endswith("…")
