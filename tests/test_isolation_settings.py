"""Worktree settings (``worktree.baseRef``, hooks), ``.worktreeinclude`` entries and names:
the pure parts of worktree isolation (SPEC section 6, WT-2, WT-3)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from wave_ls.worktrees.hooks import printed_directory
from wave_ls.worktrees.include import include_patterns
from wave_ls.worktrees.names import agent_name, name_problem, session_name
from wave_ls.worktrees.settings import HookCommand, load_worktree_settings


def write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")


def test_defaults_without_any_file(tmp_path: Path):
    settings = load_worktree_settings(tmp_path / "project", tmp_path / "home")
    assert settings.base_ref == "fresh"
    assert settings.create_hooks == [] and settings.remove_hooks == [] and settings.warnings == []


def test_layers_local_over_project_over_user(tmp_path: Path):
    # WT-2: worktree.baseRef from the most specific file that sets it
    project, home = tmp_path / "project", tmp_path / "home"
    write(home / ".wave" / "settings.json", {"worktree": {"baseRef": "fresh"}})
    write(project / ".wave" / "settings.json", {"worktree": {"baseRef": "fresh"}})
    write(project / ".wave" / "settings.local.json", {"worktree": {"baseRef": "head"}})
    assert load_worktree_settings(project, home).base_ref == "head"
    (project / ".wave" / "settings.local.json").unlink()
    write(home / ".wave" / "settings.json", {"worktree": {"baseRef": "head"}})
    assert load_worktree_settings(project, home).base_ref == "fresh"
    (project / ".wave" / "settings.json").unlink()
    assert load_worktree_settings(project, home).base_ref == "head"


def test_hooks_in_both_shapes_project_first(tmp_path: Path):
    # WT-3: {"command"} entries, Claude Code's {"hooks": [{"type": "command"}]} groups, strings
    project, home = tmp_path / "project", tmp_path / "home"
    write(
        project / ".wave" / "settings.json",
        {
            "hooks": {
                "WorktreeCreate": [
                    {"command": "make-wt", "timeout": 30},
                    {"matcher": "", "hooks": [{"type": "command", "command": "cc-style"}]},
                ],
                "WorktreeRemove": ["drop-wt"],
            }
        },
    )
    write(home / ".wave" / "settings.json", {"hooks": {"WorktreeCreate": ["user-wt", "make-wt"]}})
    settings = load_worktree_settings(project, home)
    source = project / ".wave" / "settings.json"
    assert settings.create_hooks == [
        HookCommand("make-wt", 30.0, source),
        HookCommand("cc-style", 60.0, source),
        HookCommand("user-wt", 60.0, home / ".wave" / "settings.json"),
    ]
    assert settings.remove_hooks == [HookCommand("drop-wt", 60.0, source)]


def test_bad_json_warns_and_uses_defaults(tmp_path: Path):
    project, home = tmp_path / "project", tmp_path / "home"
    write(project / ".wave" / "settings.json", '{"worktree": {"baseRef": "head",}}')
    write(home / ".wave" / "settings.json", {"hooks": {"WorktreeCreate": ["from-user"]}})
    settings = load_worktree_settings(project, home)
    assert settings.base_ref == "fresh"
    assert [h.command for h in settings.create_hooks] == ["from-user"]
    assert len(settings.warnings) == 1
    warning = settings.warnings[0]
    assert warning.startswith(f"{project / '.wave' / 'settings.json'}:1:")
    assert "invalid JSON" in warning and "defaults are used" in warning


def test_wrong_shapes_warn_and_are_ignored(tmp_path: Path):
    project = tmp_path / "project"
    write(
        project / ".wave" / "settings.json",
        {
            "worktree": {"baseRef": "origin"},
            "hooks": {
                "WorktreeCreate": [
                    {"command": ""},
                    {"type": "http", "url": "x"},
                    {"command": "ok", "timeout": -1},
                    42,
                ],
                "WorktreeRemove": "not-a-list",
            },
        },
    )
    settings = load_worktree_settings(project, tmp_path / "home")
    assert settings.base_ref == "fresh"
    assert settings.create_hooks == [HookCommand("ok", 60.0, project / ".wave" / "settings.json")]
    assert settings.remove_hooks == []
    text = "\n".join(settings.warnings)
    assert 'worktree.baseRef must be "fresh" or "head"' in text
    assert "'command' must be a non-empty string" in text
    assert "hook type 'http' is not supported" in text
    assert "'timeout' must be a positive number" in text
    assert "hooks.WorktreeCreate[3]" in text
    assert "hooks.WorktreeRemove must be a list" in text


def test_worktreeinclude_refuses_entries_outside_the_repo(tmp_path: Path):
    # WT-3: absolute paths and '..' are refused; a leading '/' is gitignore's anchor
    repo = tmp_path / "repo"
    (repo / "etc").mkdir(parents=True)
    text = "\n".join(
        [
            "# comment",
            "",
            ".env",
            "/.mcp.json",
            "/etc/app.conf",  # the repo has etc/: anchored, not absolute
            "/home/someone/.env",
            f"{repo}/config/local.json",
            "../secrets.env",
            "config/../../x",
            "~/.aws/credentials",
            "C:\\Users\\me\\.env",
            "!.env.example",
        ]
    )
    accepted, warnings = include_patterns(text, repo)
    assert accepted == [
        ".env",
        "/.mcp.json",
        "/etc/app.conf",
        "/config/local.json",
        "!.env.example",
    ]
    assert [w.split(":")[1] for w in warnings] == ["6", "8", "9", "10", "11"]
    assert all(w.startswith(".worktreeinclude:") and "refused" in w for w in warnings)


def test_hook_path_is_stdout_or_its_last_line(tmp_path: Path):
    target = tmp_path / "wt"
    target.mkdir()
    assert printed_directory(f"  {target}\n", tmp_path) == target
    assert printed_directory(f"Preparing worktree\n{target}\n", tmp_path) == target
    assert printed_directory("wt\n", tmp_path) == target  # relative to the project
    assert printed_directory("", tmp_path) is None
    assert printed_directory(f"{target}/missing\n", tmp_path) is None


def test_names():
    assert re.fullmatch(r"agent-[0-9a-f]{8}", agent_name())
    assert re.fullmatch(r"[a-z]+-[a-z]+-[a-z]+", session_name())
    assert name_problem("my-feature_2.x") is None
    for bad in ("", "-x", ".hidden", "a/b", "a..b", "x.lock", "x.", "a b", "x" * 65):
        assert name_problem(bad), bad
