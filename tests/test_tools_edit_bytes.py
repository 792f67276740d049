"""Edit and Write keep every byte they were not asked to change, and replace files
atomically (issue 12, defect 3)."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from wave_ls.runtime.core import ToolContext, ToolError
from wave_ls.runtime.tools import EditTool, ReadTool, WriteTool

LATIN1 = b"caf\xe9 demo\nna\xefve line two \xff\n"


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    work = tmp_path / "work"
    work.mkdir()
    return ToolContext(cwd=work, home=tmp_path / "home")


async def test_edit_keeps_undecodable_bytes_outside_the_span(ctx: ToolContext) -> None:
    path = ctx.cwd / "legacy.txt"
    path.write_bytes(LATIN1)
    result = await EditTool().run(
        {"file_path": "legacy.txt", "old_string": "demo", "new_string": "DEMO"}, ctx
    )
    assert not result.is_error
    assert path.read_bytes() == b"caf\xe9 DEMO\nna\xefve line two \xff\n"
    assert "\ufffd DEMO" in result.content  # the snippet shows what Read would show


async def test_edit_of_text_read_with_replacement_characters_is_refused_clearly(
    ctx: ToolContext,
) -> None:
    path = ctx.cwd / "legacy.txt"
    path.write_bytes(LATIN1)
    shown = (await ReadTool().run({"file_path": "legacy.txt"}, ctx)).content
    assert "caf\ufffd demo" in shown
    with pytest.raises(ToolError, match="not UTF-8"):
        await EditTool().run(
            {"file_path": "legacy.txt", "old_string": "caf\ufffd", "new_string": "cafe"}, ctx
        )
    assert path.read_bytes() == LATIN1


async def test_edit_in_a_crlf_file_leaves_other_line_ends_alone(ctx: ToolContext) -> None:
    path = ctx.cwd / "mixed.txt"
    path.write_bytes(b"one\r\ntwo\r\nthree\nfour\r\n")
    await EditTool().run(
        {"file_path": "mixed.txt", "old_string": "one\ntwo", "new_string": "1\n2"}, ctx
    )
    assert path.read_bytes() == b"1\r\n2\r\nthree\nfour\r\n"


@pytest.mark.parametrize("tool", ["Write", "Edit"])
async def test_a_write_keeps_the_mode_and_does_not_write_through_hard_links(
    tool: str, ctx: ToolContext
) -> None:
    path = ctx.cwd / "run.sh"
    path.write_text("echo old\n")
    path.chmod(0o751)
    other = ctx.cwd / "other-name.sh"
    os.link(path, other)
    if tool == "Write":
        await WriteTool().run({"file_path": "run.sh", "content": "echo new\n"}, ctx)
    else:
        await EditTool().run({"file_path": "run.sh", "old_string": "old", "new_string": "new"}, ctx)
    assert path.read_text() == "echo new\n"
    assert stat.S_IMODE(path.stat().st_mode) == 0o751
    assert other.read_text() == "echo old\n"  # the other name is another file now
    assert sorted(p.name for p in ctx.cwd.iterdir()) == ["other-name.sh", "run.sh"]


async def test_a_write_through_a_symlink_replaces_its_target(ctx: ToolContext) -> None:
    target = ctx.cwd / "real.txt"
    target.write_text("old\n")
    (ctx.cwd / "link.txt").symlink_to(target)
    await WriteTool().run({"file_path": "link.txt", "content": "new\n"}, ctx)
    assert (ctx.cwd / "link.txt").is_symlink()
    assert target.read_text() == "new\n"


async def test_a_new_file_gets_the_usual_mode(ctx: ToolContext) -> None:
    umask = os.umask(0o022)
    try:
        await WriteTool().run({"file_path": "new/file.txt", "content": "x"}, ctx)
    finally:
        os.umask(umask)
    assert stat.S_IMODE((ctx.cwd / "new" / "file.txt").stat().st_mode) == 0o644


async def test_a_failed_write_leaves_the_old_file_and_no_temporary(ctx: ToolContext) -> None:
    path = ctx.cwd / "kept.txt"
    path.write_text("old\n")
    with pytest.raises(ToolError, match="surrogate"):
        await WriteTool().run({"file_path": "kept.txt", "content": "bad \ud83d"}, ctx)
    assert path.read_text() == "old\n"
    assert [p.name for p in ctx.cwd.iterdir()] == ["kept.txt"]
    with pytest.raises(ToolError, match="surrogate"):
        await EditTool().run(
            {"file_path": "kept.txt", "old_string": "old", "new_string": "\udcff"}, ctx
        )
    assert path.read_text() == "old\n"
