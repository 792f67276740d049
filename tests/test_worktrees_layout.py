"""The pure parts of the worktree manager: git output parsing and git's on-disk layout."""

from __future__ import annotations

from pathlib import Path

from wave_ls.worktrees import worktree_location
from wave_ls.worktrees.git_cli import count_status_entries, parse_worktree_list
from wave_ls.worktrees.layout import add_exclude, make_admin_dir

PORCELAIN = """worktree /repo
HEAD 1111111111111111111111111111111111111111
branch refs/heads/main

worktree /repo/.wave/worktrees/b
HEAD 2222222222222222222222222222222222222222
detached

worktree /repo/.wave/worktrees/a b
HEAD 3333333333333333333333333333333333333333
branch refs/heads/worktree-a
prunable gitdir file points to non-existent location

"""


def test_worktree_location():
    # WT-2: <main repo>/.wave/worktrees/<name>, branch worktree-<name>
    assert worktree_location("/repo", "agent-1") == (
        Path("/repo/.wave/worktrees/agent-1"),
        "worktree-agent-1",
    )


def test_parse_worktree_list_puts_main_first_then_sorted():
    infos = parse_worktree_list(PORCELAIN)
    assert [str(i.path) for i in infos] == [
        "/repo",
        "/repo/.wave/worktrees/a b",
        "/repo/.wave/worktrees/b",
    ]
    assert [i.branch for i in infos] == ["main", "worktree-a", None]
    assert [i.is_main for i in infos] == [True, False, False]
    assert [i.prunable for i in infos] == [False, True, False]
    assert infos[2].head == "2" * 40


def test_count_status_entries():
    assert count_status_entries("") == 0
    assert count_status_entries(" M a.txt\0?? dir/b c.txt\0D  gone\0") == 3


def test_add_exclude_appends_once_and_keeps_the_file(tmp_path: Path):
    exclude = tmp_path / "info" / "exclude"
    assert add_exclude(tmp_path, ".wave/worktrees/") is True
    assert exclude.read_text() == ".wave/worktrees/\n"
    exclude.write_text("# comment\n*.log")
    assert add_exclude(tmp_path, ".wave/worktrees/") is True
    assert add_exclude(tmp_path, ".wave/worktrees/") is False
    assert exclude.read_text() == "# comment\n*.log\n.wave/worktrees/\n"


def test_admin_dirs_are_never_shared(tmp_path: Path):
    # dulwich reuses worktrees/<basename>; we number them like git does
    names = [make_admin_dir(tmp_path, f"/somewhere/{i}/x").name for i in range(3)]
    assert names == ["x", "x1", "x2"]
    assert make_admin_dir(tmp_path, "/a/we ird*name").name == "we-ird-name"
