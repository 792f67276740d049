"""Claude Code users move in: the 966 real agent files of ``shared/corpus/agents/`` load as
Claude Code loads them (issue 24; LOAD-1, LOAD-6 edge cases).

``tests/data/claude_corpus.json`` is what each file gives today (name, description digest,
tools, model, the problems' severities and lines). The test fails when a file that loads
stops loading or reads differently, and when a file broken for Claude Code too starts to
load; a file that newly loads is a change to make on purpose: write the snapshot again with
``WAVE_WRITE_CORPUS=1 pytest`` this module.
"""

from __future__ import annotations

import json
import os

import pytest

from tests.support.claude_corpus import (
    BROKEN_FOR_CLAUDE_CODE,
    CORPUS,
    SNAPSHOT,
    read_corpus,
    report,
)

pytestmark = pytest.mark.skipif(not CORPUS.is_dir(), reason="shared/corpus is not beside the repo")


def test_every_file_claude_code_loads_loads_and_reads_as_before(
    capsys: pytest.CaptureFixture[str],
) -> None:
    readings = read_corpus()
    if os.environ.get("WAVE_WRITE_CORPUS"):
        lines = (f"{json.dumps(k)}: {json.dumps(readings[k])}" for k in sorted(readings))
        SNAPSHOT.write_text("{\n" + ",\n".join(lines) + "\n}\n")  # a file a line
    with capsys.disabled():
        print("\n" + report(readings))
    expected = json.loads(SNAPSHOT.read_text())
    assert sorted(readings) == sorted(expected), "the corpus changed: write the snapshot again"
    changed = [name for name in expected if readings[name] != expected[name]]
    assert not changed, f"{len(changed)} files read differently, e.g. {changed[:5]}"
    not_loaded = [name for name, one in readings.items() if not one["loads"]]
    assert len(not_loaded) == BROKEN_FOR_CLAUDE_CODE, not_loaded
    # Each of those keeps an error with a line, as today.
    assert all(readings[name]["problems"][0][:1] == ["error"] for name in not_loaded)
    assert all(isinstance(readings[name]["problems"][0][1], int) for name in not_loaded)


def test_claude_code_model_names_and_tool_names_are_read_as_claude_code_means_them() -> None:
    readings = read_corpus()
    loaded = [one for one in readings.values() if one["loads"]]
    tools = [name for one in loaded for name in one["tools"] or ()]
    # MultiEdit, LS, TodoWrite, Task... never reach a subagent as unknown names.
    for claude_name in ("MultiEdit", "LS", "TodoWrite", "Task", "BashOutput", "KillShell"):
        assert claude_name not in tools
    assert "Edit" in tools and "Glob" in tools
    # Kept as written: the tier is resolved when delegating (issue 24: 464 of the 867 files
    # that loaded before name a tier or a claude-* id).
    claude_models = [
        one["model"]
        for one in loaded
        if one["model"] in ("haiku", "sonnet", "opus") or one["model"].startswith("claude-")
    ]
    assert len(claude_models) >= 464
