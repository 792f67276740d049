"""Real git repositories for end-to-end tests: a clone of a bare "origin" that is ahead of it.

``cloned_repo`` gives ``repo`` (default branch ``main``, one local-only commit) cloned from
``origin`` (bare, one commit ``repo`` has not fetched yet), so ``fresh`` (origin/main) and
``head`` (the local HEAD) are different commits with different files:

- both: ``README.md``, ``src/app.py``, ``.gitignore`` (ignores ``.env`` and ``*.log``);
- only origin/main: ``origin_only.py`` (contains ``ORIGIN_MARKER``);
- only the local HEAD: ``local_only.py`` (contains ``LOCAL_MARKER``).

Use ``IDENTITY`` in the environment of anything that may commit (a server's Bash tool).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

IDENTITY = {
    "GIT_AUTHOR_NAME": "Wave Test",
    "GIT_AUTHOR_EMAIL": "wave@example.com",
    "GIT_COMMITTER_NAME": "Wave Test",
    "GIT_COMMITTER_EMAIL": "wave@example.com",
    "GIT_CONFIG_NOSYSTEM": "1",
}

BASE_FILES = {
    "README.md": "# demo\n",
    "src/app.py": "def answer():\n    return 41\n",
    ".gitignore": ".env\n*.log\n",
}


def git(cwd: Path, *args: str) -> str:
    """Run git in ``cwd`` with the test identity; fail the test with git's stderr."""
    env = {k: v for k, v in os.environ.items() if k not in ("GIT_DIR", "GIT_WORK_TREE")}
    done = subprocess.run(
        ["git", *args], cwd=cwd, env={**env, **IDENTITY}, capture_output=True, text=True
    )
    assert done.returncode == 0, f"git {' '.join(args)}: {done.stderr}"
    return done.stdout


def write_files(root: Path, files: dict[str, str]) -> None:
    for relative, text in files.items():
        target = root / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")


def commit_all(cwd: Path, message: str) -> str:
    git(cwd, "add", "-A")
    git(cwd, "commit", "-q", "-m", message)
    return rev(cwd, "HEAD")


def rev(cwd: Path, ref: str) -> str:
    return git(cwd, "rev-parse", ref).strip()


def branches(repo: Path) -> set[str]:
    return set(git(repo, "branch", "--format=%(refname:short)").split())


def porcelain(repo: Path) -> str:
    """``git status --porcelain`` with untracked files: empty when nothing changed."""
    return git(repo, "status", "--porcelain", "--untracked-files=all")


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file under ``root`` with its bytes, ``.git`` and wave's worktrees left out."""
    out: dict[str, bytes] = {}
    for path in sorted(root.rglob("*")):
        relative = path.relative_to(root).as_posix()
        if relative.split("/")[0] == ".git" or relative.startswith(".wave/worktrees"):
            continue
        if path.is_file():
            out[relative] = path.read_bytes()
    return out


def worktree_dirs(repo: Path) -> list[Path]:
    """The folders under ``<repo>/.wave/worktrees`` (the registry left out)."""
    root = repo / ".wave" / "worktrees"
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))


def init_repo(path: Path, files: dict[str, str]) -> Path:
    """A new repository at ``path`` (branch main) with ``files`` in one commit."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    write_files(path, files)
    commit_all(path, "initial")
    return path


def origin_and_clone(root: Path, files: dict[str, str]) -> Path:
    """``root/origin.git`` (bare, made from ``files``) and ``root/repo``, a clone of it."""
    init_repo(root / "src", files)
    git(root, "clone", "-q", "--bare", str(root / "src"), "origin.git")
    git(root, "clone", "-q", str(root / "origin.git"), "repo")
    return root


def isolate_git_env(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Commits work on a clean machine; the user's own git config cannot leak in."""
    home.mkdir(exist_ok=True)
    monkeypatch.setenv("HOME", str(home))
    for key, value in IDENTITY.items():
        monkeypatch.setenv(key, value)
    for key in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(key, raising=False)


@dataclass(frozen=True)
class ClonedRepo:
    repo: Path
    origin: Path

    @property
    def head(self) -> str:
        return rev(self.repo, "HEAD")

    @property
    def origin_main(self) -> str:
        """origin's main as the bare repository has it (not yet fetched by ``repo``)."""
        return rev(self.origin, "main")


@pytest.fixture(scope="session")
def repo_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Built once: ``origin.git`` and ``repo`` as described in the module docstring."""
    root = origin_and_clone(tmp_path_factory.mktemp("git-template"), BASE_FILES)
    src = root / "src"
    write_files(src, {"origin_only.py": "ORIGIN_MARKER = 1\n"})
    commit_all(src, "only on origin")
    git(src, "push", "-q", str(root / "origin.git"), "main")
    write_files(root / "repo", {"local_only.py": "LOCAL_MARKER = 1\n"})
    commit_all(root / "repo", "only local")
    return root


@pytest.fixture
def cloned_repo(repo_template: Path, tmp_path: Path) -> ClonedRepo:
    """A fresh copy of the template: its own origin, so tests never share state."""
    origin = tmp_path / "origin.git"
    repo = tmp_path / "repo"
    shutil.copytree(repo_template / "origin.git", origin, symlinks=True)
    shutil.copytree(repo_template / "repo", repo, symlinks=True)
    git(repo, "remote", "set-url", "origin", str(origin))
    return ClonedRepo(repo.resolve(), origin.resolve())
