"""The workspace files offered by `@` completion: git's view, or a walk honouring .gitignore."""

from __future__ import annotations

import subprocess
from pathlib import Path

from wave_ls.chat_input.workspace_files import WorkspaceFiles, walk_files


def git(cwd: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=t", *args],
        cwd=cwd,
        check=True,
        capture_output=True,
    )


def write(root: Path, relative: str, text: str = "x\n") -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def make_repo(root: Path) -> None:
    git(root, "init", "-q")
    write(root, ".gitignore", "*.log\nbuild/\n")
    write(root, "README.md")
    write(root, "src/app.py")
    write(root, "src/old.py")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "init")


def test_git_repo_lists_tracked_and_untracked_but_not_ignored(tmp_path: Path) -> None:
    make_repo(tmp_path)
    write(tmp_path, "notes/new idea.md")  # untracked, not ignored
    write(tmp_path, "debug.log")  # ignored
    write(tmp_path, "build/out.js")  # ignored directory
    (tmp_path / "src/old.py").unlink()  # tracked but deleted
    workspace = WorkspaceFiles(tmp_path)
    assert list(workspace.files()) == [".gitignore", "README.md", "notes/new idea.md", "src/app.py"]
    assert workspace.is_git


def test_git_subfolder_lists_paths_relative_to_it(tmp_path: Path) -> None:
    make_repo(tmp_path)
    write(tmp_path, "src/extra.log")
    assert list(WorkspaceFiles(tmp_path / "src").files()) == ["app.py", "old.py"]


def test_git_info_exclude_is_honoured(tmp_path: Path) -> None:
    make_repo(tmp_path)
    write(tmp_path, ".wave/worktrees/agent-1/file.py")
    write(tmp_path, ".git/info/exclude", ".wave/worktrees/\n")
    assert ".wave/worktrees/agent-1/file.py" not in WorkspaceFiles(tmp_path).files()


def test_cache_is_reused_until_something_changes(tmp_path: Path) -> None:
    make_repo(tmp_path)
    workspace = WorkspaceFiles(tmp_path, ttl=3600)
    first = workspace.files()
    assert workspace.files() is first  # warm: no new listing
    write(tmp_path, "src/deep.py")  # invisible to the cheap checks until the ttl passes
    assert "src/deep.py" not in workspace.files()
    write(tmp_path, "top.py")  # the root's mtime changes
    assert {"src/deep.py", "top.py"} <= set(workspace.files())

    write(tmp_path, "src/staged.py")
    git(tmp_path, "add", "src/staged.py")  # only git's index changes
    assert "src/staged.py" in workspace.files()


def test_ttl_expiry_and_invalidate_relist(tmp_path: Path) -> None:
    make_repo(tmp_path)
    workspace = WorkspaceFiles(tmp_path, ttl=0, background=False)
    workspace.files()
    write(tmp_path, "src/deep.py")
    assert "src/deep.py" in workspace.files()  # ttl 0: always listed again
    cached = WorkspaceFiles(tmp_path, ttl=3600)
    cached.files()
    write(tmp_path, "src/other.py")
    cached.invalidate()
    assert "src/other.py" in cached.files()


def test_ttl_refresh_runs_in_the_background(tmp_path: Path) -> None:
    make_repo(tmp_path)
    workspace = WorkspaceFiles(tmp_path, ttl=0)
    first = workspace.files()
    write(tmp_path, "src/deep.py")
    assert workspace.files() is first  # answers at once with the old list...
    workspace.wait_for_refresh(timeout=10)
    assert "src/deep.py" in workspace.files()  # ...and has the new one next time


def test_plain_folder_honours_nested_gitignore_files(tmp_path: Path) -> None:
    write(tmp_path, ".gitignore", "*.log\n/dist\n")
    write(tmp_path, "main.py")
    write(tmp_path, "run.log")
    write(tmp_path, "dist/bundle.js")
    write(tmp_path, "pkg/dist/kept.js")  # `/dist` is anchored to the root
    write(tmp_path, "pkg/.gitignore", "secret.txt\n!keep.log\n")
    write(tmp_path, "pkg/secret.txt")
    write(tmp_path, "pkg/keep.log")  # re-included by the nested file
    write(tmp_path, "pkg/other.log")
    write(tmp_path, "other/secret.txt")  # the nested rule does not reach here
    write(tmp_path, ".git/HEAD")  # skipped although not a real repo
    workspace = WorkspaceFiles(tmp_path)
    assert list(workspace.files()) == [
        ".gitignore",
        "main.py",
        "other/secret.txt",
        "pkg/.gitignore",
        "pkg/keep.log",
        "pkg/dist/kept.js",
    ]
    assert not workspace.is_git


def test_walk_stops_at_max_files(tmp_path: Path) -> None:
    for n in range(20):
        write(tmp_path, f"f{n:02}.txt")
    assert len(walk_files(tmp_path, max_files=5)) == 5
    workspace = WorkspaceFiles(tmp_path, max_files=7, max_listed=12)
    files = workspace.files()
    assert len(files) == 12 and workspace.capped  # the walk stops past max_listed
    assert files.search_span == 7
    roomy = WorkspaceFiles(tmp_path, max_files=20)
    assert len(roomy.files()) == 20 and not roomy.capped


def test_missing_folder_has_no_files(tmp_path: Path) -> None:
    assert list(WorkspaceFiles(tmp_path / "nope").files()) == []
