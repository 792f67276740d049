"""Grep (ripgrep and the pure-Python fallback give the same answer) and Glob."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from wave_ls.runtime.core import ToolContext, ToolError
from wave_ls.runtime.tools import GlobTool, GrepTool
from wave_ls.runtime.tools.glob_tool import MAX_RESULTS
from wave_ls.runtime.tools.ripgrep import find_ripgrep


def test_ripgrep_is_installed() -> None:
    # The `ripgrep` package is a dependency: its rg is found even when the virtualenv's
    # bin/ is not on PATH. The rg half of the tests below fails (never skips) without it.
    rg = find_ripgrep()
    assert rg is not None, "rg not found: pip install 'ripgrep>=14.1,<15'"
    version = subprocess.run([rg, "--version"], capture_output=True, text=True, check=True)
    assert version.stdout.startswith("ripgrep ")


FILES = {
    ".gitignore": "build/\n*.log\n!keep.log\n/secret.txt\n",
    "README.md": "# Demo\nTODO: write docs\n",
    "src/app.py": "import os\n\ndef main():\n    # TODO: implement\n    return os.getcwd()\n",
    "src/util.py": "def helper():\n    pass\n\nclass Todo:\n    pass\n",
    "src/types.pyi": "def helper() -> None: ...  # TODO\n",
    "src/web/index.ts": "export const todo = 1; // TODO later\nfunction f() {}\n",
    "src/web/view.tsx": "const x = <div>TODO</div>;\n",
    "src/.gitignore": "generated.py\n",
    "src/generated.py": "# TODO generated\n",
    "docs/guide.md": "Step one\nStep two TODO\nStep three\nStep four\nStep five\nTODO end\n",
    "build/out.py": "# TODO built\n",
    "debug.log": "TODO in a log\n",
    "keep.log": "TODO kept log\n",
    "secret.txt": "TODO secret\n",
    "sub/secret.txt": "TODO not the root one\n",
    ".hidden.py": "# TODO hidden file\n",
    ".config/settings.py": "# TODO hidden dir\n",
    "crlf.txt": "first\r\nTODO crlf\r\n",
    "a.txt": "TODO a\n",
    "a/b.txt": "TODO a/b\n",
    "excluded.txt": "TODO excluded by info/exclude\n",
    "Makefile": "all:\n\t@echo TODO\n",
    "multi.txt": "start\nfoo\nbar\nfoo bar\nend\n",
}


def make_tree(root: Path) -> None:
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(text.encode())
    (root / "bin.dat").write_bytes(b"TODO\x00binary\n")
    (root / ".git" / "info").mkdir(exist_ok=True)
    (root / ".git" / "info" / "exclude").write_text("excluded.txt\n")
    os.symlink(root / "a.txt", root / "link.txt")


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One tree for the whole module: the tests only read it."""
    root = tmp_path_factory.mktemp("search") / "repo"
    root.mkdir()
    make_tree(root)
    return root


@pytest.fixture
def ctx(repo: Path) -> ToolContext:
    return ToolContext(cwd=repo, home=repo.parent)


async def grep(ctx: ToolContext, use_ripgrep: bool, **args: Any) -> str:
    result = await GrepTool(use_ripgrep=use_ripgrep).run(args, ctx)
    assert result.details["engine"] == ("ripgrep" if use_ripgrep else "python")
    return result.content


QUERIES: list[dict[str, Any]] = [
    {"pattern": "TODO"},
    {"pattern": "todo", "-i": True},
    {"pattern": "TODO", "output_mode": "content"},
    {"pattern": "TODO", "output_mode": "content", "-n": False},
    {"pattern": "TODO", "output_mode": "count"},
    {"pattern": "Step t", "output_mode": "content", "-C": 1},
    {"pattern": "TODO", "output_mode": "content", "-A": 2, "path": "docs"},
    {"pattern": "TODO", "output_mode": "content", "-B": 1, "-A": 0, "path": "docs"},
    {"pattern": "TODO", "glob": "*.py"},
    {"pattern": "TODO", "glob": "*.{ts,tsx}"},
    {"pattern": "TODO", "glob": "src/**/*.ts"},
    {"pattern": "TODO", "glob": "!src"},
    {"pattern": "TODO", "glob": "*.log"},
    {"pattern": "TODO", "type": "py"},
    {"pattern": "TODO", "type": "ts", "output_mode": "count"},
    {"pattern": "TODO", "type": "make", "output_mode": "content"},
    {"pattern": "TODO", "path": "build"},
    {"pattern": "TODO", "path": ".config", "output_mode": "content"},
    {"pattern": "TODO", "path": "src"},
    {"pattern": "TODO", "path": "src/app.py", "output_mode": "content"},
    {"pattern": "TODO", "path": "bin.dat"},
    {"pattern": r"def \w+\(\)", "output_mode": "content"},
    {"pattern": r"^\s+pass$", "output_mode": "count"},
    {"pattern": "crlf$", "output_mode": "content"},
    {"pattern": r"foo\nbar", "multiline": True, "output_mode": "content"},
    {"pattern": r"foo\nbar", "multiline": True, "output_mode": "count"},
    {"pattern": "o", "multiline": True, "output_mode": "count", "path": "multi.txt"},
    {"pattern": r"(?s)start.*?end", "multiline": True, "output_mode": "content"},
    {"pattern": "TODO", "output_mode": "content", "head_limit": 3},
    {"pattern": "TODO", "head_limit": 2, "offset": 1},
    {"pattern": "no such text anywhere"},
    {"pattern": "no such text anywhere", "output_mode": "content"},
]


@pytest.mark.parametrize("args", QUERIES, ids=[str(q) for q in QUERIES])
async def test_ripgrep_and_fallback_agree(ctx: ToolContext, args: dict[str, Any]) -> None:
    assert await grep(ctx, True, **args) == await grep(ctx, False, **args)


@pytest.fixture(params=[True, False], ids=["rg", "python"])
def engine(request: pytest.FixtureRequest) -> bool:
    return bool(request.param)


async def test_default_lists_files_sorted_respecting_gitignore(
    ctx: ToolContext, engine: bool
) -> None:
    # Left out: build/ (a directory rule), *.log but keep.log, /secret.txt (root only), the
    # nested src/.gitignore's generated.py, .git/info/exclude's excluded.txt, hidden entries,
    # the binary bin.dat and the symlink link.txt.
    assert await grep(ctx, engine, pattern="TODO") == "\n".join(
        [
            "Found 12 files",
            "Makefile",
            "README.md",
            "a/b.txt",  # rg --sort path order: "a/" before "a.txt"
            "a.txt",
            "crlf.txt",
            "docs/guide.md",
            "keep.log",
            "src/app.py",
            "src/types.pyi",
            "src/web/index.ts",
            "src/web/view.tsx",
            "sub/secret.txt",
        ]
    )


async def test_content_mode_shows_numbered_lines_and_context(
    ctx: ToolContext, engine: bool
) -> None:
    out = await grep(ctx, engine, pattern="Step t", output_mode="content", **{"-C": 1})
    assert out == "\n".join(
        [
            "docs/guide.md-1-Step one",
            "docs/guide.md:2:Step two TODO",
            "docs/guide.md:3:Step three",
            "docs/guide.md-4-Step four",
        ]
    )


async def test_count_mode_sums_up(ctx: ToolContext, engine: bool) -> None:
    out = await grep(ctx, engine, pattern=r"^\s+pass$", output_mode="count")
    assert out == "src/util.py:2\n\nFound 2 total matches across 1 file."


async def test_glob_and_type_filters(ctx: ToolContext, engine: bool) -> None:
    assert await grep(ctx, engine, pattern="TODO", glob="*.{ts,tsx}") == (
        "Found 2 files\nsrc/web/index.ts\nsrc/web/view.tsx"
    )
    # An explicit glob selects even an ignored or hidden file (as rg does).
    assert "debug.log" in await grep(ctx, engine, pattern="TODO", glob="*.log")
    assert ".hidden.py" in await grep(ctx, engine, pattern="TODO", type="py")


async def test_paths_are_relative_to_cwd_and_absolute_outside(
    ctx: ToolContext, engine: bool, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "o.txt").write_text("TODO outside\n")
    out = await grep(ctx, engine, pattern="TODO", path=str(outside))
    assert out == f"Found 1 file\n{outside / 'o.txt'}"
    inside = await grep(ctx, engine, pattern="TODO", path=str(ctx.cwd / "docs"))
    assert inside == "Found 1 file\ndocs/guide.md"


async def test_head_limit_notes_the_rest(ctx: ToolContext, engine: bool) -> None:
    out = await grep(ctx, engine, pattern="TODO", head_limit=2)
    assert out.splitlines()[1:3] == ["Makefile", "README.md"]
    assert "Showing entries 1-2 of" in out


async def test_no_matches(ctx: ToolContext, engine: bool) -> None:
    assert await grep(ctx, engine, pattern="zzz-nothing") == "No files found"
    assert await grep(ctx, engine, pattern="zzz", output_mode="content") == "No matches found"


async def test_grep_errors(ctx: ToolContext, engine: bool) -> None:
    tool = GrepTool(use_ripgrep=engine)
    with pytest.raises(ToolError, match="Path does not exist"):
        await tool.run({"pattern": "x", "path": "nope"}, ctx)
    with pytest.raises(ToolError, match=r"Grep failed|Invalid regular expression"):
        await tool.run({"pattern": "(unclosed"}, ctx)
    with pytest.raises(ToolError, match="Parameter 'output_mode' must be one of"):
        await tool.run({"pattern": "x", "output_mode": "lines"}, ctx)
    with pytest.raises(ToolError, match="Missing required parameter 'pattern'"):
        await tool.run({}, ctx)


# ------------------------------------------------------------------ Glob


async def glob(ctx: ToolContext, **args: Any) -> list[str]:
    result = await GlobTool().run(args, ctx)
    return [] if result.content == "No files found" else result.content.splitlines()


async def test_glob_star_star_finds_every_level(ctx: ToolContext) -> None:
    assert sorted(await glob(ctx, pattern="**/*.py")) == ["src/app.py", "src/util.py"]
    assert sorted(await glob(ctx, pattern="src/**/*.{ts,tsx}")) == [
        "src/web/index.ts",
        "src/web/view.tsx",
    ]


async def test_glob_single_star_stays_at_the_top(ctx: ToolContext) -> None:
    # link.txt: symbolic links to files are listed (Grep skips them, as rg does).
    assert sorted(await glob(ctx, pattern="*.txt")) == [
        "a.txt",
        "crlf.txt",
        "link.txt",
        "multi.txt",
    ]
    assert sorted(await glob(ctx, pattern="src/*.py")) == ["src/app.py", "src/util.py"]


async def test_glob_sorts_newest_first(tmp_path: Path) -> None:
    now = time.time()
    for age, name in enumerate(["new.txt", "mid.txt", "old.txt"]):
        (tmp_path / name).write_text("")
        os.utime(tmp_path / name, (now - 100 * age, now - 100 * age))
    ctx = ToolContext(cwd=tmp_path, home=tmp_path)
    assert await glob(ctx, pattern="*.txt") == ["new.txt", "mid.txt", "old.txt"]


async def test_glob_skips_ignored_and_hidden_unless_named(ctx: ToolContext) -> None:
    assert "build/out.py" not in await glob(ctx, pattern="**/*.py")
    assert await glob(ctx, pattern="build/*.py") == ["build/out.py"]
    assert await glob(ctx, pattern=".config/*.py") == [".config/settings.py"]
    assert sorted(await glob(ctx, pattern="**/.hidden*")) == [".hidden.py"]


async def test_glob_path_argument_and_absolute_patterns(ctx: ToolContext, tmp_path: Path) -> None:
    assert await glob(ctx, pattern="*.md", path="docs") == ["docs/guide.md"]
    assert await glob(ctx, pattern=str(ctx.cwd / "docs" / "*.md")) == ["docs/guide.md"]
    assert await glob(ctx, pattern="src/app.py") == ["src/app.py"]
    outside = tmp_path / "other"
    outside.mkdir()
    (outside / "x.py").write_text("")
    assert await glob(ctx, pattern="*.py", path=str(outside)) == [str(outside / "x.py")]


async def test_glob_caps_results(tmp_path: Path) -> None:
    for index in range(MAX_RESULTS + 5):
        (tmp_path / f"f{index}.txt").write_text("")
    result = await GlobTool().run({"pattern": "*.txt"}, ToolContext(tmp_path, tmp_path))
    assert len(result.content.split("\n\n")[0].splitlines()) == MAX_RESULTS
    assert f"most recently modified of {MAX_RESULTS + 5}" in result.content


async def test_glob_errors(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="Directory does not exist"):
        await GlobTool().run({"pattern": "*", "path": "missing"}, ctx)
    with pytest.raises(ToolError, match="Path is not a directory"):
        await GlobTool().run({"pattern": "*", "path": "a.txt"}, ctx)
    with pytest.raises(ToolError, match="Missing required parameter 'pattern'"):
        await GlobTool().run({}, ctx)
    assert (await GlobTool().run({"pattern": "*.nothing"}, ctx)).content == "No files found"
