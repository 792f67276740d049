"""Agent files in the editor: diagnostics after ``didChange`` and completion latency.

A real ``wave-ls --stdio`` process and a plain pygls client. The project's ``.wave/agents/``
holds 100 generated subagents (the neighbours a file is checked against) and the file being
edited: 10 KB (frontmatter with a folded description and a tool list, then a Markdown prompt
with headings and lists). After opening it:

- **diagnostics**: incremental ``didChange`` edits, each introducing or fixing a misspelt
  tool name (so the published list changes every time), half in the frontmatter, half
  typing in the prompt; the latency is from sending the change to receiving the
  ``publishDiagnostics`` of that version. Two rhythms: one edit every 100 ms (typing) and
  the next edit as soon as the previous diagnostics arrived (back to back, which the 20 ms
  debounce window delays on purpose).
- **completion**: ``textDocument/completion`` in the tool lists (comma and block
  spellings), at the start of a frontmatter line (keys) and after ``model:``; one after
  another, latency from send to result. Hover on keys and tools is shown too.

    .venv/bin/python benchmarks/bench_agent_files.py [--quick] [--profile]

- **parse time** (in-process, CPU time, best of 7): a 64 KB frontmatter of 9,000
  ``key: v`` lines (three such committed files took 88 s of CPU at the first
  ``wave/agents/list``), and, as context, other shapes of 64 KB (quoted values, flow
  lists, a 5,000-item block list, 6,000 hook events, an error at the end) that go through
  the YAML scanner.

``--profile`` also checks the file in-process and prints the time per check and the
cProfile top.

Targets (issue 14): diagnostics p95 <= 50 ms after ``didChange``; completion p99 <= 10 ms.
Issue 25: a 64 KB frontmatter parses in under 50 ms.
"""

from __future__ import annotations

import asyncio
import cProfile
import itertools
import statistics
import string
import tempfile
import time
from pathlib import Path
from typing import Any

from common import (
    age_tree,
    figure,
    heading,
    note,
    parse_options,
    percentile,
    print_profile,
    run_async,
    server_env,
    wave_server,
    write_agents,
)
from lsprotocol import types
from pygls.uris import from_fs_path

DIAGNOSTICS_P95_TARGET_MS = 50.0
COMPLETION_P99_TARGET_MS = 10.0
PARSE_64KB_TARGET_MS = 50.0

FRONTMATTER = """\
---
name: bench-reviewer
description: >-
  Use PROACTIVELY after any change to the payment code: reviews the diff for
  correctness, security and style, and reports findings with file and line.
tools: Read, Grep, Glob, Bash
disallowedTools:
  - Write
  - Edit
model: inherit
isolation: worktree
omitAgentsMd: false
color: orange
---
"""
TOOLS_LINE = 5  # "tools: Read, Grep, Glob, Bash"
BLOCK_LINE = 8  # "  - Edit"
MODEL_LINE = 9
COLOR_LINE = 12


def ten_kb_agent() -> str:
    """A realistic 10 KB agent file (frontmatter, then a long structured prompt)."""
    parts = [FRONTMATTER, "# Role\n\n"]
    section = 0
    while sum(len(p) for p in parts) < 10_000:
        section += 1
        parts.append(f"## Step {section}: check area {section}\n\n")
        parts += [
            f"- Look at every changed line in area {section}; note what it does and why.\n",
            "- Compare it with the tests that cover it; a change without a test is a finding.\n",
            "- Check error handling, input validation and logging of secrets.\n\n",
            "Report each finding as `path:line: what is wrong, and what to do instead`.\n\n",
        ]
    parts.append("# Output\n\nA list of findings, most severe first, then a one-line verdict.\n")
    return "".join(parts)


class DiagnosticsClock:
    """Collects ``publishDiagnostics`` by version, with their time of arrival."""

    def __init__(self) -> None:
        self.arrived: dict[int, float] = {}
        self.waiters: dict[int, asyncio.Future[float]] = {}

    def on_publish(self, params: types.PublishDiagnosticsParams) -> None:
        now = time.perf_counter()
        if params.version is None:
            return
        self.arrived[params.version] = now
        waiter = self.waiters.pop(params.version, None)
        if waiter is not None and not waiter.done():
            waiter.set_result(now)

    async def wait(self, version: int, timeout: float = 10) -> float:
        if version in self.arrived:
            return self.arrived[version]
        future = asyncio.get_running_loop().create_future()
        self.waiters[version] = future
        return await asyncio.wait_for(future, timeout)


def edits(text: str, count: int) -> list[tuple[types.Range, str]]:
    """Alternately break and fix the tools line, and type into the prompt."""
    lines = text.split("\n")
    tools = lines[TOOLS_LINE]
    grep_at = tools.index("Grep")
    body_line = next(i for i, line in enumerate(lines) if line.startswith("- Check error"))
    out: list[tuple[types.Range, str]] = []
    for index in range(count):
        if index % 2 == 0:
            # "Grep" -> "Grp" (a warning) and back.
            broken = index % 4 == 0
            start = types.Position(TOOLS_LINE, grep_at + 2)
            end = types.Position(TOOLS_LINE, grep_at + (3 if broken else 2))
            out.append((types.Range(start, end), "" if broken else "e"))
        else:
            column = len(lines[body_line])
            where = types.Position(body_line, column)
            out.append((types.Range(where, where), "x"))
            lines[body_line] += "x"
    return out


async def measure_diagnostics(
    client: Any,
    clock: DiagnosticsClock,
    uri: str,
    changes: list[tuple[types.Range, str]],
    version: int,
    pace: float | None,
) -> tuple[list[float], int]:
    latencies = []
    for where, new_text in changes:
        version += 1
        sent = time.perf_counter()
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                [types.TextDocumentContentChangePartial(range=where, text=new_text)],
            )
        )
        arrived = await clock.wait(version)
        latencies.append((arrived - sent) * 1000)
        if pace is not None:
            await asyncio.sleep(max(0.0, pace - (time.perf_counter() - sent)))
    return latencies, version


async def timed(coro: Any) -> tuple[float, Any]:
    started = time.perf_counter()
    result = await coro
    return (time.perf_counter() - started) * 1000, result


def key_names(count: int) -> list[str]:
    """``aaa``, ``aab``, ...: 9,000 ``xyz: v`` lines fill a 64 KB frontmatter."""
    rest = string.ascii_lowercase + string.digits
    names = (a + b + c for a in string.ascii_lowercase for b in rest for c in rest)
    return list(itertools.islice(names, count))


def big_agent(yaml: str) -> str:
    return f"---\nname: big\ndescription: A big one.\n{yaml}---\nYou are big.\n"


def parse_cpu_ms(text: str, rounds: int) -> float:
    """The best CPU time of ``rounds`` parses (what ``wave/agents/list`` does per file)."""
    from wave_ls.agents import parse_agent_file

    path = Path("/bench/.wave/agents/big.md")
    best = float("inf")
    for _ in range(rounds):
        started = time.process_time()
        parse_agent_file(path, text, "project")
        best = min(best, time.process_time() - started)
    return best * 1000


def measure_parse(rounds: int) -> None:
    heading(f"parse time of a 64 KB frontmatter (in-process CPU time, best of {rounds})")
    keys = key_names(9000)
    text = big_agent("".join(f"{key}: v\n" for key in keys))
    figure(
        f"a {len(text) / 1024:.0f} KB frontmatter of 9,000 keys",
        parse_cpu_ms(text, rounds),
        "ms",
        PARSE_64KB_TARGET_MS,
        note="was 25.8 s for 9,356 keys",
    )
    shapes = {
        "7,000 quoted values": "".join(f'{key}: "v"\n' for key in keys[:7000]),
        "6,000 one-item flow lists": "".join(f"{key}: [v]\n" for key in keys[:6000]),
        "a block list of 5,000 tools": "tools:\n" + "".join(f"  - Tool{i}\n" for i in range(5000)),
        "a flow list of 9,000 tools": "tools: [" + ", ".join(f"T{i}" for i in range(9000)) + "]\n",
        "6,000 hook events": "hooks:\n" + "".join(f"  k{i}: v\n" for i in range(6000)),
        "8,500 keys, then an error": "".join(f"{key}: v\n" for key in keys[:8500]) + "x: [\n",
    }
    for label, yaml in shapes.items():
        note(f"{label}: {parse_cpu_ms(big_agent(yaml), max(1, rounds // 3)):,.0f} ms")


async def main() -> int:
    options = parse_options(__doc__, profile=True)
    measure_parse(3 if options.quick else 7)
    rounds, requests = (60, 300) if options.quick else (200, 1_000)
    text = ten_kb_agent()
    heading(f"an agent file of {len(text.encode()):,} bytes, 100 neighbours")
    with tempfile.TemporaryDirectory(prefix="wave-bench-agentfiles-") as tmp:
        home, project = Path(tmp) / "home", Path(tmp) / "project"
        home.mkdir()
        folder = project / ".wave" / "agents"
        write_agents(folder, 100)
        path = folder / "bench-reviewer.md"
        path.write_text(text, encoding="utf-8")
        age_tree(project)
        uri = from_fs_path(str(path)) or path.as_uri()
        async with wave_server(server_env(home), root=project) as client:
            clock = DiagnosticsClock()

            @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
            def on_publish(params: types.PublishDiagnosticsParams) -> None:
                clock.on_publish(params)

            sent = time.perf_counter()
            client.text_document_did_open(
                types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "markdown", 1, text))
            )
            first = (await clock.wait(1) - sent) * 1000
            figure("first diagnostics after didOpen (loads the checker)", first, "ms")
            await asyncio.sleep(1.0)  # let the tool descriptions load in the background

            heading(f"diagnostics after didChange ({rounds} edits each)")
            version = 1
            paced, version = await measure_diagnostics(
                client, clock, uri, edits(text, rounds), version, pace=0.1
            )
            figure(
                "diagnostics after didChange, typing (an edit every 100 ms), p95",
                percentile(paced, 95),
                "ms",
                DIAGNOSTICS_P95_TARGET_MS,
            )
            note(f"p50 {statistics.median(paced):.1f} ms, max {max(paced):.1f} ms")
            text_now = text  # the edits alternate, so the text returns to this every 4 edits
            burst, version = await measure_diagnostics(
                client, clock, uri, edits(text_now, rounds), version, pace=None
            )
            figure(
                "diagnostics after didChange, back to back, p95",
                percentile(burst, 95),
                "ms",
                DIAGNOSTICS_P95_TARGET_MS,
                note="includes the 20 ms debounce window",
            )
            note(f"p50 {statistics.median(burst):.1f} ms, max {max(burst):.1f} ms")

            heading(f"completion and hover ({requests} requests each)")
            positions = [
                (TOOLS_LINE, len("tools: Read, Grep, Glob, Bash")),
                (TOOLS_LINE, len("tools: Read, Gr")),
                (BLOCK_LINE, len("  - Ed")),
                (MODEL_LINE, len("model: ")),
                (COLOR_LINE, 0),  # the start of a frontmatter line: keys
            ]
            document = types.TextDocumentIdentifier(uri)
            latencies = []
            for index in range(requests):
                line, character = positions[index % len(positions)]
                elapsed, result = await timed(
                    client.text_document_completion_async(
                        types.CompletionParams(document, types.Position(line, character))
                    )
                )
                assert result is not None and result.items, (line, character)
                latencies.append(elapsed)
            figure(
                "completion p99",
                percentile(latencies, 99),
                "ms",
                COMPLETION_P99_TARGET_MS,
            )
            note(f"p50 {statistics.median(latencies):.2f} ms, max {max(latencies):.1f} ms")
            hovers = []
            for index in range(requests // 2):
                line, character = ((1, 2), (TOOLS_LINE, 8), (MODEL_LINE, 9))[index % 3]
                elapsed, result = await timed(
                    client.text_document_hover_async(
                        types.HoverParams(document, types.Position(line, character))
                    )
                )
                assert result is not None
                hovers.append(elapsed)
            figure("hover p99", percentile(hovers, 99), "ms")

        if options.profile:
            heading("in-process: one check of the 10 KB file")
            from wave_ls.agents import AgentRegistry
            from wave_ls.agents.authoring import agent_place, check_agent_text

            registry = AgentRegistry(home)
            place = agent_place(path, project, home, {}, {})
            assert place is not None

            def check() -> None:
                check_agent_text(
                    text, place.path, place.agent_dir, registry.directories(project), None
                )

            check()
            profiler = cProfile.Profile()
            started = time.perf_counter()
            profiler.enable()
            for _ in range(200):
                check()
            profiler.disable()
            figure("check_agent_text, mean of 200", (time.perf_counter() - started) * 5, "ms")
            print_profile(profiler, limit=15, sort="tottime")
    return 0


if __name__ == "__main__":
    run_async(main())
