"""Read, Write and Edit on real files, including worktree safety (WT-4)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from wave_ls.runtime.core import ToolContext, ToolError
from wave_ls.runtime.tools import EditTool, ReadTool, WriteTool
from wave_ls.runtime.tools.read import MAX_WHOLE_FILE_BYTES


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    work = tmp_path / "work"
    work.mkdir()
    return ToolContext(cwd=work, home=tmp_path / "home")


# ------------------------------------------------------------------ Read


async def test_read_numbers_lines_like_cat_n(ctx: ToolContext) -> None:
    (ctx.cwd / "app.py").write_text("import os\n\tindented\nlast")
    result = await ReadTool().run({"file_path": "app.py"}, ctx)
    assert result.content == "     1\timport os\n     2\t\tindented\n     3\tlast"
    assert result.short_result == "Read app.py (3 lines)"
    assert not result.is_error


async def test_read_paths_are_relative_to_the_agent_cwd_not_the_process(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # WT-1: an isolated agent's relative paths resolve inside its own worktree.
    (ctx.cwd / "here.txt").write_text("agent's file\n")
    (tmp_path / "here.txt").write_text("process cwd file\n")
    monkeypatch.chdir(tmp_path)
    result = await ReadTool().run({"file_path": "here.txt"}, ctx)
    assert "agent's file" in result.content


async def test_read_offset_and_limit_window(ctx: ToolContext) -> None:
    (ctx.cwd / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    result = await ReadTool().run({"file_path": "n.txt", "offset": 4, "limit": 2}, ctx)
    assert result.content.startswith("     4\tline 4\n     5\tline 5")
    assert "offset=6" in result.content  # tells the model how to read on
    assert result.short_result == "Read n.txt (lines 4-5)"


async def test_read_default_limit_is_2000_lines(ctx: ToolContext) -> None:
    (ctx.cwd / "big.txt").write_text("x\n" * 2500)
    result = await ReadTool().run({"file_path": "big.txt"}, ctx)
    assert "  2000\tx" in result.content
    assert "  2001\t" not in result.content
    assert "offset=2001" in result.content


async def test_read_truncates_long_lines(ctx: ToolContext) -> None:
    (ctx.cwd / "wide.txt").write_text("a" * 5000 + "\n")
    result = await ReadTool().run({"file_path": "wide.txt"}, ctx)
    assert "a" * 2000 + "... [line truncated]" in result.content
    assert "a" * 2001 not in result.content


async def test_read_large_file_needs_offset_or_limit(ctx: ToolContext) -> None:
    (ctx.cwd / "huge.log").write_text(("z" * 99 + "\n") * (MAX_WHOLE_FILE_BYTES // 100 + 10))
    with pytest.raises(ToolError, match="offset and limit"):
        await ReadTool().run({"file_path": "huge.log"}, ctx)
    part = await ReadTool().run({"file_path": "huge.log", "offset": 100, "limit": 3}, ctx)
    assert part.content.startswith("   100\t" + "z" * 99)


async def test_read_refuses_binary_files(ctx: ToolContext) -> None:
    (ctx.cwd / "img.bin").write_bytes(b"\x89PNG\x00\x01\x02")
    with pytest.raises(ToolError, match="binary file"):
        await ReadTool().run({"file_path": "img.bin"}, ctx)


async def test_read_refuses_directories(ctx: ToolContext) -> None:
    (ctx.cwd / "src").mkdir()
    with pytest.raises(ToolError, match="is a directory"):
        await ReadTool().run({"file_path": "src"}, ctx)


async def test_read_missing_file_says_so_and_suggests_a_close_name(ctx: ToolContext) -> None:
    (ctx.cwd / "config.yaml").write_text("a: 1\n")
    with pytest.raises(ToolError) as error:
        await ReadTool().run({"file_path": "config.yml"}, ctx)
    assert str(error.value).startswith(f"File does not exist: {ctx.cwd / 'config.yml'}")
    assert "Did you mean config.yaml?" in str(error.value)


async def test_read_empty_file_gives_a_note(ctx: ToolContext) -> None:
    (ctx.cwd / "empty.txt").write_text("")
    result = await ReadTool().run({"file_path": "empty.txt"}, ctx)
    assert "exists but is empty" in result.content
    assert not result.is_error


async def test_read_offset_past_the_end_says_so(ctx: ToolContext) -> None:
    (ctx.cwd / "short.txt").write_text("a\nb\n")
    result = await ReadTool().run({"file_path": "short.txt", "offset": 10}, ctx)
    assert "has only 2 lines" in result.content


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({}, "Missing required parameter 'file_path'"),
        ({"file_path": 3}, "Parameter 'file_path' must be a string"),
        ({"file_path": "a", "offset": "ten"}, "Parameter 'offset' must be an integer"),
        ({"file_path": "a", "limit": 0}, "Parameter 'limit' must be at least 1"),
    ],
)
async def test_read_validates_arguments(
    ctx: ToolContext, args: dict[str, object], message: str
) -> None:
    with pytest.raises(ToolError, match=message):
        await ReadTool().run(args, ctx)


# ------------------------------------------------------------------ Write


async def test_write_creates_parents_and_reports_created(ctx: ToolContext) -> None:
    result = await WriteTool().run({"file_path": "a/b/new.py", "content": "x = 1\ny = 2\n"}, ctx)
    assert (ctx.cwd / "a/b/new.py").read_text() == "x = 1\ny = 2\n"
    assert result.short_result == "Created a/b/new.py (2 lines)"


async def test_write_overwrites_and_reports_updated(ctx: ToolContext) -> None:
    (ctx.cwd / "f.txt").write_text("old\n")
    result = await WriteTool().run({"file_path": str(ctx.cwd / "f.txt"), "content": "new"}, ctx)
    assert (ctx.cwd / "f.txt").read_text() == "new"
    assert result.short_result == "Updated f.txt (1 lines)"


async def test_write_keeps_content_exactly(ctx: ToolContext) -> None:
    await WriteTool().run({"file_path": "crlf.txt", "content": "a\r\nb\r\n"}, ctx)
    assert (ctx.cwd / "crlf.txt").read_bytes() == b"a\r\nb\r\n"


async def test_write_requires_content(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="Missing required parameter 'content'"):
        await WriteTool().run({"file_path": "x.txt"}, ctx)


async def test_write_to_a_directory_fails(ctx: ToolContext) -> None:
    (ctx.cwd / "d").mkdir()
    with pytest.raises(ToolError, match="is a directory"):
        await WriteTool().run({"file_path": "d", "content": "x"}, ctx)


# ------------------------------------------------------------------ Edit


async def test_edit_replaces_a_unique_string(ctx: ToolContext) -> None:
    (ctx.cwd / "m.py").write_text("def f():\n    return 1\n")
    result = await EditTool().run(
        {"file_path": "m.py", "old_string": "return 1", "new_string": "return 2\n    # done"},
        ctx,
    )
    assert (ctx.cwd / "m.py").read_text() == "def f():\n    return 2\n    # done\n"
    assert result.short_result == "Edited m.py (+2 -1)"
    assert "     2\t    return 2" in result.content  # the edited part, numbered


async def test_edit_string_not_found(ctx: ToolContext) -> None:
    (ctx.cwd / "m.py").write_text("a\n")
    with pytest.raises(ToolError, match=r"old_string not found in m.py"):
        await EditTool().run({"file_path": "m.py", "old_string": "b", "new_string": "c"}, ctx)


async def test_edit_ambiguous_string_needs_context_or_replace_all(ctx: ToolContext) -> None:
    (ctx.cwd / "m.py").write_text("x = 1\nx = 1\nx = 1\n")
    with pytest.raises(ToolError) as error:
        await EditTool().run({"file_path": "m.py", "old_string": "x", "new_string": "y"}, ctx)
    assert str(error.value) == (
        "old_string occurs 3 times in m.py; add context to make it unique or set replace_all"
    )
    result = await EditTool().run(
        {"file_path": "m.py", "old_string": "x", "new_string": "y", "replace_all": True}, ctx
    )
    assert (ctx.cwd / "m.py").read_text() == "y = 1\ny = 1\ny = 1\n"
    assert "3 replacements" in result.content


async def test_edit_identical_strings_are_refused(ctx: ToolContext) -> None:
    (ctx.cwd / "m.py").write_text("a\n")
    with pytest.raises(ToolError, match="identical"):
        await EditTool().run({"file_path": "m.py", "old_string": "a", "new_string": "a"}, ctx)


async def test_edit_missing_file(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="File does not exist"):
        await EditTool().run({"file_path": "no.py", "old_string": "a", "new_string": "b"}, ctx)


async def test_edit_with_empty_old_string_creates_a_file(ctx: ToolContext) -> None:
    await EditTool().run({"file_path": "new/n.txt", "old_string": "", "new_string": "hi\n"}, ctx)
    assert (ctx.cwd / "new/n.txt").read_text() == "hi\n"
    with pytest.raises(ToolError, match="already has content"):
        await EditTool().run({"file_path": "new/n.txt", "old_string": "", "new_string": "x"}, ctx)


async def test_edit_keeps_crlf_line_endings(ctx: ToolContext) -> None:
    (ctx.cwd / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    await EditTool().run(
        {"file_path": "w.txt", "old_string": "one\ntwo", "new_string": "1\n2"}, ctx
    )
    assert (ctx.cwd / "w.txt").read_bytes() == b"1\r\n2\r\nthree\r\n"


async def test_edit_validates_argument_types(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="Parameter 'replace_all' must be a boolean"):
        await EditTool().run(
            {"file_path": "m", "old_string": "a", "new_string": "b", "replace_all": 2}, ctx
        )
    with pytest.raises(ToolError, match="Missing required parameter 'new_string'"):
        await EditTool().run({"file_path": "m", "old_string": "a"}, ctx)


# ------------------------------------------------------------------ worktree safety


@pytest.fixture
def worktree_ctx(tmp_path: Path) -> ToolContext:
    parent = tmp_path / "repo"
    worktree = parent / ".wave" / "worktrees" / "agent-1"
    worktree.mkdir(parents=True)
    (parent / "main.py").write_text("print('parent')\n")
    (worktree / "main.py").write_text("print('worktree')\n")
    return ToolContext(cwd=worktree, home=tmp_path / "home", write_root=worktree)


def _refusal(path: Path, root: Path) -> str:
    return (
        f"Refusing to write {path}: it is outside this agent's worktree {root}. "
        "Write only inside the worktree."
    )


async def test_write_inside_the_worktree_is_allowed(worktree_ctx: ToolContext) -> None:
    await WriteTool().run({"file_path": "sub/ok.txt", "content": "ok"}, worktree_ctx)
    await EditTool().run(
        {"file_path": "main.py", "old_string": "worktree", "new_string": "wt"}, worktree_ctx
    )
    assert (worktree_ctx.cwd / "sub/ok.txt").read_text() == "ok"
    assert "wt" in (worktree_ctx.cwd / "main.py").read_text()


async def test_write_to_the_parent_repo_is_refused(worktree_ctx: ToolContext) -> None:
    # WT-4
    root = worktree_ctx.cwd
    target = root.parents[2] / "main.py"
    with pytest.raises(ToolError) as error:
        await WriteTool().run({"file_path": str(target), "content": "x"}, worktree_ctx)
    assert str(error.value) == _refusal(target, root)
    assert target.read_text() == "print('parent')\n"


async def test_dotdot_escape_is_refused(worktree_ctx: ToolContext) -> None:
    # WT-4: "../" is resolved before the check.
    with pytest.raises(ToolError, match=r"Refusing to write .*outside this agent's worktree"):
        await EditTool().run(
            {"file_path": "../../../main.py", "old_string": "parent", "new_string": "x"},
            worktree_ctx,
        )
    assert (worktree_ctx.cwd.parents[2] / "main.py").read_text() == "print('parent')\n"


async def test_symlink_pointing_outside_is_refused(worktree_ctx: ToolContext) -> None:
    # WT-4: a link inside the worktree to the parent repo does not open a way out.
    parent_file = worktree_ctx.cwd.parents[2] / "main.py"
    os.symlink(parent_file, worktree_ctx.cwd / "link.py")
    os.symlink(parent_file.parent, worktree_ctx.cwd / "linkdir")
    with pytest.raises(ToolError, match="Refusing to write"):
        await WriteTool().run({"file_path": "link.py", "content": "x"}, worktree_ctx)
    with pytest.raises(ToolError, match="Refusing to write"):
        await WriteTool().run({"file_path": "linkdir/new.py", "content": "x"}, worktree_ctx)
    with pytest.raises(ToolError, match="Refusing to write"):
        await EditTool().run(
            {"file_path": "link.py", "old_string": "parent", "new_string": "x"}, worktree_ctx
        )
    assert parent_file.read_text() == "print('parent')\n"
    assert not (parent_file.parent / "new.py").exists()


async def test_no_write_root_means_no_restriction(ctx: ToolContext, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere.txt"
    await WriteTool().run({"file_path": str(outside), "content": "fine"}, ctx)
    assert outside.read_text() == "fine"
