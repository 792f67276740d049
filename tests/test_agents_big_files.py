"""Big agent files are read in time linear in their size, and read right (issue 25 point 4).

Three committed 64 KB agent files of ~9,000 keys each made the first ``wave/agents/list``
take 88 s of CPU (and held ``@`` completion as long): strictyaml's schema validation copied
the whole document for every value, so the cost grew with the square of the keys (4,000
keys 5.1 s, 9,356 keys 25.8 s; a list of 5,000 tools 30 s). CPU time is measured (the
machine's load only adds wall time); the bounds are far above the figures here
(``benchmarks/bench_agent_files.py``) and far below the old ones.
"""

from __future__ import annotations

import itertools
import string
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.lsp import server_env, wave_client
from wave_ls.agents import parse_agent_file
from wave_ls.agents.authoring import check_agent_text
from wave_ls.agents.discovery import AgentDir
from wave_ls.agents.parse import MAX_HINTS

PATH = Path("/p/.wave/agents/big.md")


def key_names(count: int) -> list[str]:
    """``aaa``, ``aab``, ...: 9,000 of them fit a 64 KB frontmatter as ``xyz: v`` lines."""
    rest = string.ascii_lowercase + string.digits
    names = (a + b + c for a in string.ascii_lowercase for b in rest for c in rest)
    return list(itertools.islice(names, count))


def agent(yaml: str, name: str = "big") -> str:
    return f"---\nname: {name}\ndescription: A big one.\n{yaml}---\nYou are big.\n"


def cpu(work: Callable[[], Any]) -> tuple[float, Any]:
    started = time.process_time()
    result = work()
    return time.process_time() - started, result


def test_a_64_kb_frontmatter_of_9000_keys_is_read_at_once() -> None:
    text = agent("".join(f"{key}: v\n" for key in key_names(9000)))
    assert 60_000 < len(text) < 64 * 1024
    seconds, (definition, problems) = cpu(lambda: parse_agent_file(PATH, text, "project"))
    assert seconds < 0.5, f"{seconds:.2f} s of CPU (26 s before)"
    assert problems == [] and definition is not None
    assert len(definition.extra) == 9000 and definition.extra["aaa"] == "v"


SHAPES = {
    "quoted-keys": "".join(f'{key}: "v"\n' for key in key_names(7000)),
    "flow-keys": "".join(f"{key}: [v]\n" for key in key_names(6000)),
    "block-list": "tools:\n" + "".join(f"  - Tool{i}\n" for i in range(5000)),
    "flow-list": "tools: [" + ", ".join(f"T{i}" for i in range(9000)) + "]\n",
    "hooks": "hooks:\n" + "".join(f"  k{i}: v\n" for i in range(6000)),
    "error-at-the-end": "".join(f"{key}: v\n" for key in key_names(8500)) + "bad: [\n",
    "duplicate-at-the-end": "".join(f"{key}: v\n" for key in key_names(8500)) + "aaa: x\n",
}


@pytest.mark.parametrize("yaml", SHAPES.values(), ids=SHAPES.keys())
def test_every_shape_of_a_big_frontmatter_costs_linear_time(yaml: str) -> None:
    text = agent(yaml)
    assert len(text) < 64 * 1024
    seconds, (_definition, problems) = cpu(lambda: parse_agent_file(PATH, text, "project"))
    # ~0.1 ms a YAML token in pure Python: about 1 s at most here (before: 10 s to 30 s).
    assert seconds < 5, f"{seconds:.2f} s of CPU"
    assert problems is not None


def test_a_big_files_problems_come_out_right() -> None:
    names = key_names(8000)
    # Unknown keys one letter away from 'color'
    close = [f"colr{c}" for c in string.ascii_lowercase + string.digits]
    close += [f"colo{c}" for c in string.ascii_lowercase if c != "r"]
    lines = [f"{key}: v" for key in close[: MAX_HINTS + 10]]
    lines += [f"{key}: v" for key in names[:3000]]
    lines += ["tools: Read, Grp, Foo"]
    lines += [f"{key}: v" for key in names[3000:6000]]
    lines += ["maxTurns: many"]
    lines += ['note: "a value that goes on', 'aab2: at column 0 inside quotes"']
    lines += [f"{key}: v" for key in names[6000:7000]]
    text = agent("\n".join(lines) + "\n")
    assert len(text) < 64 * 1024
    tools_line = 4 + MAX_HINTS + 10 + 3000
    turns_line = tools_line + 1 + 3000

    definition, problems = parse_agent_file(PATH, text, "project")
    assert definition is not None
    assert definition.tools == ("Read", "Grp", "Foo")
    assert definition.max_turns is None
    assert definition.extra["note"] == "a value that goes on aab2: at column 0 inside quotes"
    assert "aab2" not in definition.extra
    assert [(p.line, p.message) for p in problems] == [
        (tools_line, "tools: unknown tools ignored: 'Grp' (did you mean 'Grep'?), 'Foo'"),
        (turns_line, "maxTurns: 'many' is not a whole number above 0; ignored"),
    ]

    # The editor's check: every name where it is written, a guess for the first ones only.
    result = check_agent_text(text, PATH, AgentDir("project", PATH.parent))
    [grp, foo] = [p for p in result.problems if p.code == "unknown-tool"]
    assert (grp.line, grp.span.column if grp.span else None) == (tools_line, 13)
    assert grp.suggestion == "Grep" and foo.suggestion is None
    unknown = {p.message.split("'")[1]: p for p in result.problems if p.code == "unknown-key"}
    colr = [unknown[key] for key in close[: MAX_HINTS + 10]]
    assert all(p.suggestion == "color" for p in colr[:MAX_HINTS])
    assert all(p.suggestion is None and "did you mean" not in p.message for p in colr[MAX_HINTS:])


def test_an_error_at_the_end_of_a_big_file_is_reported_where_it_is() -> None:
    names = key_names(8500)
    text = agent("".join(f"{key}: v\n" for key in names) + "aab: again\n")
    definition, [problem] = parse_agent_file(PATH, text, "project")
    assert definition is None
    assert problem.line == 4 + 8500
    assert problem.message == "duplicate key 'aab' (first on line 5); keep only one"


async def test_three_committed_64_kb_agent_files_list_at_once_over_lsp(
    home: Path, project: Path
) -> None:
    folder = project / ".wave" / "agents"
    folder.mkdir(parents=True)
    keys = "".join(f"{key}: v\n" for key in key_names(9000))
    for index in range(3):
        (folder / f"big{index}.md").write_text(agent(keys, f"big-{index}"), encoding="utf-8")
    async with wave_client(server_env(home), root=project) as client:
        started = time.monotonic()
        listed = await client.request("wave/agents/list", {"cwd": str(project)})
        assert time.monotonic() - started < 15  # 88 s of CPU before
        names = {agent["name"] for agent in listed["agents"]}
        assert {"big-0", "big-1", "big-2"} <= names
        completion = await client.request("wave/chatInput/completion", {"text": "@big-"})
        assert {item["label"] for item in completion["items"]} >= {"big-0", "big-1", "big-2"}


# Lines that make the reader cut its parts in odd places: values carried over to a line at
# column 0 (quotes, flow lists), block lists at column 0, comments, errors.
TRICKY = [
    "k{n}: v{n}",
    'k{n}: "dq"',
    "k{n}: 'sq'",
    'k{n}: "open',
    "k{n}: 'open",
    'close: x"',
    "close: y'",
    "k{n}: [a,",
    "b: c]",
    "k{n}: {a: 1}",
    "k{n}:",
    "- item",
    "  - item",
    "  sub: 1",
    "  more text",
    "k{n}: |",
    "  block",
    "# comment",
    "",
    "k{n}: a:b",
    "k{n}: 1e3",
    "k{n}: ~",
    "k{n}: C#",
    "k{n}: x,",
    '"k{n}": quoted key',
    "k{n}: -x",
]


def as_read(value: Any) -> Any:
    """What an entry's node keeps of a value of strictyaml's data: a list's scalar items
    (its lists and mappings only as such)."""
    if isinstance(value, list):
        return [item if isinstance(item, str) else type(item).__name__ for item in value]
    return value


def node_value(entry: Any) -> Any:
    node = entry.node
    if node.kind == "scalar":
        return node.text
    if node.kind == "mapping":
        return node.data
    kinds = {"mapping": "dict", "sequence": "list"}
    return [item.text if item.kind == "scalar" else kinds[item.kind] for item in node.items]


def test_reading_in_parts_gives_what_the_whole_document_says() -> None:
    import random

    import strictyaml

    from wave_ls.agents.frontmatter import read_mapping, split_frontmatter

    rng = random.Random(25)
    compared = 0
    for _ in range(1500):
        lines = [
            rng.choice(TRICKY).replace("{n}", str(i)) if rng.random() < 0.6 else f"k{i}: v{i}"
            for i in range(rng.randint(1, 40))
        ]
        yaml = "\n".join(lines) + "\n"
        try:
            whole = strictyaml.dirty_load(yaml, allow_flow_style=True).data
        except Exception:
            continue  # an error, or the lenient second reading: the corpus test covers those
        if not isinstance(whole, dict):
            continue
        entries = read_mapping(split_frontmatter(f"---\n{yaml}---\n"))
        read = {entry.key: node_value(entry) for entry in entries}
        assert read == {key: as_read(value) for key, value in whole.items()}, yaml
        assert [entry.key for entry in entries] == list(whole), yaml
        compared += 1
    assert compared > 200
