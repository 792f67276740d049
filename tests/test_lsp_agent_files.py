"""Agent files in the editor (PROTOCOL.md "Agent files in the editor"), end to end: a real
``wave-ls`` and standard LSP requests. Diagnostics come from the open text (files on disk
only where a test says so), within 2 s, at the lines ``wave/agents/list`` gives; completion,
hover, quick fixes, symbols and folding; nothing for documents elsewhere."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from tests.support.agent_docs import (
    AgentEditor,
    agent_text,
    problems_for,
    span,
    units,
    uri_of,
)
from tests.support.fake_model import FakeModelServer, model_env
from tests.support.lsp import CLIENTS, WaveClient, capabilities, server_env, wave_client
from wave_ls.chat_input.query import Encoding

WARNING = types.DiagnosticSeverity.Warning
INFORMATION = types.DiagnosticSeverity.Information


def agents_dir(folder: Path) -> Path:
    path = folder / ".wave" / "agents"
    path.mkdir(parents=True, exist_ok=True)
    return path


def only(diagnostics: list[types.Diagnostic]) -> types.Diagnostic:
    assert len(diagnostics) == 1, diagnostics
    return diagnostics[0]


async def loads_cleanly(client: WaveClient, folder: Path, name: str, text: str) -> None:
    """The text, saved as ``<folder>/.wave/agents/<name>.md``, loads without a problem."""
    path = agents_dir(folder) / f"{name}.md"
    path.write_text(text, encoding="utf-8")
    result = await client.request("wave/agents/list", {"cwd": str(folder)})
    assert problems_for(result, path) == [], text
    assert any(a.get("path") == str(path) for a in result["agents"]), text


# ---------------------------------------------------------------------------- diagnostics


@pytest.mark.parametrize("client_name", CLIENTS)
async def test_unknown_tools_in_each_spelling_warn_with_did_you_mean_and_fix(
    client_name: str, home: Path, project: Path, tmp_path: Path
) -> None:
    folder = agents_dir(project)
    cases = {
        # name: (extra frontmatter, (line, start, end) of the wrong name, suggestion)
        "flow": ("tools: [Read, Reed]\n", (3, 14, 18), "Read"),
        "comma": ("tools: Read, Reed\n", (3, 13, 17), "Read"),
        "block": ("tools:\n  - Read\n  - Reed\n", (5, 4, 8), "Read"),
        "blacklist": ("disallowedTools: Bsh\n", (3, 17, 20), "Bash"),
        "lowercase": ("tools: [grep]\n", (3, 8, 12), "Grep"),
    }
    async with wave_client(
        server_env(home), caps=capabilities(client_name), root=project
    ) as client:
        editor = AgentEditor(client)
        uris = {
            name: editor.open(folder / f"{name}.md", agent_text(name, extra=extra))
            for name, (extra, _, _) in cases.items()
        }
        for name, (_, (line, start, end), suggestion) in cases.items():
            diagnostic = only(await editor.diagnostics(uris[name], bool))
            assert diagnostic.severity == WARNING
            assert diagnostic.range == span(line, start, end)
            assert "did you mean" in diagnostic.message and f"'{suggestion}'" in diagnostic.message
            [fix] = await editor.fixes(uris[name], diagnostic)
            assert fix.kind == types.CodeActionKind.QuickFix
            assert fix.edit is not None and fix.edit.changes is not None
            [edit] = fix.edit.changes[uris[name]]
            assert (edit.range, edit.new_text) == (diagnostic.range, suggestion)
            fixed = editor.applied(uris[name], fix)
            await loads_cleanly(client, tmp_path / name, name, fixed)
            editor.replace_all(uris[name], fixed)
            assert await editor.diagnostics(uris[name], lambda d: not d) == []


BROKEN = {
    "colon": "---\nname: colon\ndescription: Use it: always\n---\nbody\n",
    "tab": "---\nname: tab\ndescription: d\ntools:\n\t- Read\n---\nbody\n",
    "quote": '---\nname: quote\ndescription: "never closed\n---\nbody\n',
    "noname": "---\ndescription: d\n---\nbody\n",
    "nodescription": "\n\n---\nname: nodescription\n---\nbody\n",
    "badname": "---\nname: 1st\ndescription: d\n---\nbody\n",
    "twice": "---\nname: twice\ndescription: d\nname: again\n---\nbody\n",
    "nofront": "You are an agent.\n",
    "unclosed": "---\nname: unclosed\ndescription: d\nbody\n",
    "empty": "",
    "listname": "---\nname: [a, b]\ndescription: d\n---\nbody\n",
    "at": "---\nname: at\ndescription: @mention me\n---\nbody\n",
    "flag": "---\nname: flag\ndescription: d\nomitAgentsMd: yes\n---\nbody\n",
    "never": "---\nname: never\ndescription: d\ntools: Read, Agent\n---\nbody\n",
    "twin-a": agent_text("twin"),
    "twin-b": agent_text("twin"),
}


async def test_every_problem_of_the_agent_list_is_a_diagnostic_at_its_line(
    home: Path, project: Path
) -> None:
    # LOAD-6 edge cases, as the editor shows them
    folder = agents_dir(project)
    for name, text in BROKEN.items():
        (folder / f"{name}.md").write_text(text, encoding="utf-8")
    async with wave_client(server_env(home), root=project) as client:
        listed = await client.request("wave/agents/list", {"cwd": str(project)})
        editor = AgentEditor(client)
        uris = {name: editor.open(folder / f"{name}.md", text) for name, text in BROKEN.items()}
        for name in BROKEN:
            problems = problems_for(listed, folder / f"{name}.md")
            if name != "twin-a":
                assert problems, name
            count = len(problems)
            diagnostics = await editor.diagnostics(uris[name], lambda d: len(d) >= count)  # noqa: B023
            shown = {(d.range.start.line, d.message) for d in diagnostics}
            for problem in problems:
                assert ((problem.get("line") or 1) - 1, problem["message"]) in shown, name
            serious = [d for d in diagnostics if d.severity != INFORMATION]
            notes = [p for p in problems if p.get("severity") == "info"]
            assert len(serious) == len(problems) - len(notes), (name, diagnostics)
        # The file that wins the duplicate name hears about the other one.
        twin = only(await editor.diagnostics(uris["twin-a"], bool))
        assert twin.severity == INFORMATION and twin.message.startswith("twin-b.md in the same")


async def test_problems_come_from_the_open_text_not_the_file(home: Path, project: Path) -> None:
    path = agents_dir(project) / "reviewer.md"
    path.write_text(agent_text(extra="tools: Reed\n"), encoding="utf-8")
    async with wave_client(server_env(home), root=project) as client:
        editor = AgentEditor(client)
        uri = editor.open(path, agent_text(extra="tools: Read\n"))
        assert await editor.diagnostics(uri) == []
        # A document that exists only in the editor is checked too.
        unsaved = editor.open(path.with_name("draft.md"), "---\nname: draft\n---\n")
        diagnostic = only(await editor.diagnostics(unsaved, bool))
        assert diagnostic.range == span(0, 0, 3) and "description" in diagnostic.message


async def test_typing_is_debounced_and_the_last_text_wins(home: Path, project: Path) -> None:
    async with wave_client(server_env(home), root=project) as client:
        editor = AgentEditor(client)
        uri = editor.open(
            agents_dir(project) / "typist.md", agent_text("typist", extra="tools: \n")
        )
        assert await editor.diagnostics(uri) == []
        typed = "Reed, Grepp, Glob"
        for index, char in enumerate(typed):
            editor.edit(uri, span(3, 7 + index, 7 + index), char)
        final = await editor.diagnostics(
            uri, lambda d: [x.message.split("'")[1] for x in d] == ["Reed", "Grepp"]
        )
        assert [(d.range, d.message.split("(")[1]) for d in final] == [
            (span(3, 7, 11), "did you mean 'Read'?)"),
            (span(3, 13, 18), "did you mean 'Grep'?)"),
        ]
        # Fixed by hand, incrementally: the list is emptied.
        editor.edit(uri, span(3, 9, 10), "a")
        editor.edit(uri, span(3, 16, 17), "")
        assert editor.texts[uri].split("\n")[3] == "tools: Read, Grep, Glob"
        assert await editor.diagnostics(uri, lambda d: not d) == []


async def test_editor_only_warnings_unknown_keys_isolation_and_fixes(
    home: Path, project: Path, tmp_path: Path
) -> None:
    text = agent_text("keys", extra="tols: Read\ncolr: blue\nisolation: worktre\nsecret: x\n")
    async with wave_client(server_env(home), root=project) as client:
        editor = AgentEditor(client)
        uri = editor.open(agents_dir(project) / "keys.md", text)
        found = await editor.diagnostics(uri, lambda d: len(d) == 4)
        by_line = {d.range.start.line: d for d in found}
        assert by_line[3].range == span(3, 0, 4) and "did you mean 'tools'" in by_line[3].message
        assert by_line[4].range == span(4, 0, 4) and "did you mean 'color'" in by_line[4].message
        assert by_line[5].range == span(5, 11, 18) and "only value is 'worktree'" in (
            by_line[5].message
        )
        assert "did you mean" not in by_line[6].message and "'secret'" in by_line[6].message
        assert all(d.severity == WARNING for d in found)
        fixed = text
        for line in (3, 4, 5):
            editor.texts[uri] = fixed
            [action] = await editor.fixes(uri, by_line[line])
            fixed = editor.applied(uri, action)
        assert "tools: Read\ncolor: blue\nisolation: worktree\n" in fixed
        await loads_cleanly(client, tmp_path / "keys", "keys", fixed)


async def test_names_that_override_another_scope_get_information(home: Path, project: Path) -> None:
    user = agents_dir(home)
    (user / "reviewer.md").write_text(agent_text("reviewer"), encoding="utf-8")
    folder = agents_dir(project)
    async with wave_client(server_env(home), root=project) as client:
        editor = AgentEditor(client)
        mine = editor.open(folder / "reviewer.md", agent_text("reviewer"))
        note = only(await editor.diagnostics(mine, bool))
        assert note.severity == INFORMATION and note.range == span(1, 6, 14)
        assert note.message == f"overrides the user-level agent 'reviewer' ({user / 'reviewer.md'})"
        plan = editor.open(folder / "plan.md", agent_text("Plan"))
        assert only(await editor.diagnostics(plan, bool)).message == (
            "overrides the built-in agent 'Plan'"
        )
        # The user's file, seen from this workspace, is overridden by the project's (as saved).
        (folder / "reviewer.md").write_text(agent_text("reviewer"), encoding="utf-8")
        theirs = editor.open(user / "reviewer.md", agent_text("reviewer"))
        note = only(await editor.diagnostics(theirs, bool))
        assert note.message.startswith("the project-level agent 'reviewer'")
        assert note.message.endswith("overrides this one")


async def test_a_file_created_outside_the_editor_is_seen_at_save_and_watch(
    home: Path, project: Path
) -> None:
    folder = agents_dir(project)
    async with wave_client(server_env(home), root=project) as client:
        editor = AgentEditor(client)
        uri = editor.open(folder / "helper.md", agent_text("helper"))
        assert await editor.diagnostics(uri) == []
        [watch] = [r for r in client.registrations if r.method == "workspace/didChangeWatchedFiles"]
        globs = [w["globPattern"] for w in watch.register_options["watchers"]]  # type: ignore[index]
        assert {"**/.wave/agents/**/*.md", "**/.claude/agents/**/*.md"} <= set(globs)
        user_file = agents_dir(home) / "helper.md"
        user_file.write_text(agent_text("helper"), encoding="utf-8")
        client.workspace_did_change_watched_files(
            types.DidChangeWatchedFilesParams(
                [types.FileEvent(uri_of(user_file), types.FileChangeType.Created)]
            )
        )
        assert "user-level" in only(await editor.diagnostics(uri, bool)).message
        user_file.unlink()
        (folder / "helper.md").write_text(agent_text("helper"), encoding="utf-8")
        client.text_document_did_save(
            types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri))
        )
        assert await editor.diagnostics(uri, lambda d: not d) == []


async def test_a_change_no_client_reports_is_seen_by_the_sweep(home: Path, project: Path) -> None:
    # The open files are judged again whenever the registry renews a catalog, not only at a
    # save or a reported file event: a client that cannot watch still sees the change.
    folder = agents_dir(project)
    async with wave_client(server_env(home), root=project) as client:
        editor = AgentEditor(client)
        uri = editor.open(folder / "helper.md", agent_text("helper"))
        assert await editor.diagnostics(uri) == []
        user_file = agents_dir(home) / "helper.md"
        user_file.write_text(agent_text("helper"), encoding="utf-8")
        assert "user-level" in only(await editor.diagnostics(uri, bool)).message
        user_file.unlink()
        assert await editor.diagnostics(uri, lambda d: not d) == []


async def test_model_values_are_checked_against_the_endpoint(
    home: Path, project: Path, fake_model: FakeModelServer, tmp_path: Path
) -> None:
    fake_model.set_script({"models": ["fake-model", "big-model"], "routes": []})
    async with wave_client(server_env(home, **model_env(fake_model)), root=project) as client:
        editor = AgentEditor(client)
        uri = editor.open(agents_dir(project) / "modeled.md", agent_text(extra="model: bigmodel\n"))
        warning = only(await editor.diagnostics(uri, bool))
        assert warning.range == span(3, 7, 15) and warning.severity == WARNING
        assert "did you mean 'big-model'" in warning.message
        [fix] = await editor.fixes(uri, warning)
        fixed = editor.applied(uri, fix)
        assert "model: big-model\n" in fixed
        await loads_cleanly(client, tmp_path / "m", "modeled", fixed)
        editor.replace_all(uri, fixed)
        assert await editor.diagnostics(uri, lambda d: not d) == []
        items = await editor.completion(uri, 3, len("model: "))
        assert [i.label for i in items] == [
            "inherit",
            *("haiku", "sonnet", "opus"),  # Claude Code's tiers
            "big-model",
            "fake-model",
        ]
        hover = await editor.hover(uri, 3, 9)
        assert hover is not None and "The endpoint offers it" in hover.contents.value  # type: ignore[union-attr]
        editor.replace_all(uri, agent_text(extra="model: inherit\n"))
        hover = await editor.hover(uri, 3, 9)
        assert hover is not None and "now `fake-model`" in hover.contents.value  # type: ignore[union-attr]


# ---------------------------------------------------------------------------- quick fixes


async def test_each_quick_fix_gives_a_file_that_loads(
    home: Path, project: Path, tmp_path: Path
) -> None:
    folder = agents_dir(project)
    cases = {
        "quoted": ("---\nname: quoted\ndescription: Use it: always\n---\nb\n", "Quote the value"),
        "folded": (
            "---\nname: folded\ndescription: Use it\n  when: asked\n---\nb\n",
            "Write the value as a folded block ('>-')",
        ),
        "nameless": ("---\ndescription: d\n---\nb\n", "Add 'name: nameless'"),
        "emptyname": ("---\nname:\ndescription: d\n---\nb\n", "Set 'name: emptyname'"),
        "silent": (
            "---\nname: silent\n---\nb\n",
            "Add 'description: When to use this agent (the main agent reads this to choose it)'",
        ),
        "flagged": ("---\nname: flagged\ndescription: d\nomitAgentsMd: yes\n---\nb\n", "Set "),
    }
    async with wave_client(server_env(home), root=project) as client:
        editor = AgentEditor(client)
        for name, (text, title) in cases.items():
            uri = editor.open(folder / f"{name}.md", text)
            diagnostic = (await editor.diagnostics(uri, bool))[0]
            actions = [a for a in await editor.fixes(uri, diagnostic) if a.title.startswith(title)]
            assert actions, (name, await editor.fixes(uri, diagnostic))
            for action in actions:
                fixed = editor.applied(uri, action)
                await loads_cleanly(client, tmp_path / f"{name}-{len(action.title)}", name, fixed)
    cli = subprocess.run(
        [sys.executable, "-m", "wave_ls", "agents", "--cwd", str(tmp_path / "quoted-15")],
        capture_output=True,
        text=True,
        env=server_env(home),
        timeout=60,
    )
    assert cli.returncode == 0, cli.stdout + cli.stderr


@pytest.mark.parametrize("client_name", CLIENTS)
async def test_a_lenient_value_is_quoted_whole_over_lsp(
    client_name: str, home: Path, project: Path, tmp_path: Path
) -> None:
    # Issue 24: a value Claude Code reads as the whole line is a warning whose quick fix
    # keeps every character, ' # ...' included (the old fix cut the description there).
    line = 'description: Use when: tests fail # "é" too'
    text = f"---\nname: lenient\n{line}  \n---\nbody\n"
    async with wave_client(
        server_env(home), caps=capabilities(client_name), root=project
    ) as client:
        editor = AgentEditor(client)
        uri = editor.open(agents_dir(project) / "lenient.md", text)
        warning = only(await editor.diagnostics(uri, bool))
        assert warning.code == "lenient-value" and warning.severity == WARNING
        assert warning.range == span(2, 13, units(line, editor.encoding))
        actions = await editor.fixes(uri, warning)
        assert actions[0].title == "Quote the value" and actions[0].is_preferred
        fixed = editor.applied(uri, actions[0])
        assert fixed.split("\n")[2] == 'description: "Use when: tests fail # \\"é\\" too"  '
        await loads_cleanly(client, tmp_path / "lenient", "lenient", fixed)
        listed = await client.request("wave/agents/list", {"cwd": str(tmp_path / "lenient")})
        [agent] = [a for a in listed["agents"] if a["name"] == "lenient"]
        assert agent["description"] == 'Use when: tests fail # "é" too'
        editor.replace_all(uri, fixed)
        assert await editor.diagnostics(uri, lambda d: not d) == []


# ---------------------------------------------------------------------------- completion


@pytest.mark.parametrize("client_name", CLIENTS)
async def test_completion_of_keys_tools_and_values(
    client_name: str, home: Path, project: Path
) -> None:
    folder = agents_dir(project)
    text = (
        "---\n"  # 0
        "name: writer\n"  # 1
        "description: Writes docs\n"  # 2
        "tools: Read, \n"  # 3
        "disallowedTools: [Bash, ]\n"  # 4
        "model: \n"  # 5
        "isolation: \n"  # 6
        "omitAgentsMd: \n"  # 7
        "de\n"  # 8
        "---\n"
        "body\n"
    )
    block = "---\nname: blocky\ndescription: d\ntools:\n  - Grep\n  - \n---\n"
    async with wave_client(
        server_env(home), caps=capabilities(client_name), root=project
    ) as client:
        editor = AgentEditor(client)
        uri = editor.open(folder / "writer.md", text)
        comma = await editor.completion(uri, 3, 13)
        labels = [i.label for i in comma]
        assert "Grep" in labels and "Agent" not in labels
        assert labels[-1] == "Read"  # already listed: last
        grep = next(i for i in comma if i.label == "Grep")
        assert editor.applied(uri, grep).split("\n")[3] == "tools: Read, Grep"
        flow = await editor.completion(uri, 4, 24)
        assert "Edit" in [i.label for i in flow] and "Agent" in [i.label for i in flow]
        assert sorted(flow, key=lambda i: i.sort_text or "")[-1].label == "Bash"
        edit = next(i for i in flow if i.label == "Edit")
        assert editor.applied(uri, edit).split("\n")[4] == "disallowedTools: [Bash, Edit]"
        blocky = editor.open(folder / "blocky.md", block)
        listed = await editor.completion(blocky, 5, 4)
        assert sorted(listed, key=lambda i: i.sort_text or "")[-1].label == "Grep"
        read = next(i for i in listed if i.label == "Read")
        assert editor.applied(blocky, read).split("\n")[5] == "  - Read"
        # Partly typed: the word is replaced.
        editor.replace_all(blocky, block.replace("  - \n", "  - Gl\n"))
        glob = next(i for i in await editor.completion(blocky, 5, 6) if i.label == "Glob")
        assert editor.applied(blocky, glob).split("\n")[5] == "  - Glob"
        tiers = ["haiku", "sonnet", "opus"]
        assert [i.label for i in await editor.completion(uri, 5, 7)] == ["inherit", *tiers]
        assert [i.label for i in await editor.completion(uri, 6, 11)] == ["worktree"]
        assert [i.label for i in await editor.completion(uri, 7, 14)] == ["true", "false"]
        keys = await editor.completion(uri, 8, 2)
        labels = [i.label for i in keys]
        assert labels[0] == "omitClaudeMd"  # the first key not written yet comes first
        assert labels[-2:] == ["isolation", "omitAgentsMd"]  # written keys last
        assert {"name", "description", "tools", "model"} <= set(labels)
        assert all(i.kind == types.CompletionItemKind.Property for i in keys)
        alias = next(i for i in keys if i.label == "omitClaudeMd")
        assert editor.applied(uri, alias).split("\n")[8] == "omitClaudeMd: "
        assert await editor.completion(uri, 10, 2) == []  # the prompt


async def test_a_new_file_gets_the_whole_template(
    home: Path, project: Path, tmp_path: Path
) -> None:
    async with wave_client(server_env(home), root=project) as client:
        editor = AgentEditor(client)
        uri = editor.open(agents_dir(project) / "api-tester.md", "")
        [item] = await editor.completion(uri, 0, 0)
        assert item.insert_text_format == types.InsertTextFormat.Snippet
        assert isinstance(item.text_edit, types.TextEdit)
        assert item.text_edit.new_text.startswith("---\nname: ${1:api-tester}\ndescription: ")
        # With its placeholders filled in as written, it loads.
        plain = item.text_edit.new_text
        for number in range(5):
            plain = plain.replace(f"${{{number}:", "")
        plain = plain.replace("}", "")
        await loads_cleanly(client, tmp_path / "new", "api-tester", plain)


# ---------------------------------------------------------------------------- hover


async def test_hover_on_keys_tools_and_model(home: Path, project: Path) -> None:
    from wave_ls.runtime.tools.read import DESCRIPTION

    text = agent_text("hovered", extra="tools:\n  - Read\n  - Agent\nmodel: inherit\n")
    env = server_env(home, WAVE_MODEL="house-model")
    async with wave_client(env, root=project) as client:
        editor = AgentEditor(client)
        uri = editor.open(agents_dir(project) / "hovered.md", text)
        for line, key in enumerate(("name", "description", "tools"), start=1):
            hover = await editor.hover(uri, line, 2)
            assert hover is not None and isinstance(hover.contents, types.MarkupContent)
            assert hover.contents.kind == types.MarkupKind.Markdown
            assert hover.contents.value.startswith(f"**{key}**")
            assert hover.range == span(line, 0, len(key))
        read = await editor.hover(uri, 4, 5)
        assert read is not None and isinstance(read.contents, types.MarkupContent)
        assert DESCRIPTION.strip().split("\n")[0] in read.contents.value
        assert read.range == span(4, 4, 8)
        agent = await editor.hover(uri, 5, 5)
        assert agent is not None and "Never given to a subagent" in agent.contents.value  # type: ignore[union-attr]
        model = await editor.hover(uri, 6, 9)
        assert model is not None and "now `house-model`" in model.contents.value  # type: ignore[union-attr]
        assert await editor.hover(uri, 8, 2) is None  # the prompt


async def test_hover_on_a_model_tier_names_the_model_it_runs_on(home: Path, project: Path) -> None:
    # Issue 24: a tier's hover says what it became (the environment's mapping here).
    text = agent_text("tiered", extra="model: sonnet\n")
    env = server_env(home, WAVE_MODEL="house-model", WAVE_MODEL_SONNET="big-model")
    async with wave_client(env, root=project) as client:
        editor = AgentEditor(client)
        uri = editor.open(agents_dir(project) / "tiered.md", text)
        hover = await editor.hover(uri, 3, 9)
        assert hover is not None and isinstance(hover.contents, types.MarkupContent)
        assert "runs on `big-model` (env: WAVE_MODEL_SONNET)" in hover.contents.value
        items = {i.label: i.detail for i in await editor.completion(uri, 3, len("model: "))}
        assert items["sonnet"] == "Claude Code's tier: runs on big-model"
        assert items["opus"] == "Claude Code's tier: no model set for it, runs on the session's"


# ---------------------------------------------------------------------------- encodings


@pytest.mark.parametrize("encoding", ["utf-16", "utf-8"])
async def test_positions_count_in_the_negotiated_encoding(
    encoding: Encoding, home: Path, project: Path, tmp_path: Path
) -> None:
    caps = capabilities()
    caps.general = types.GeneralClientCapabilities(
        position_encodings=[types.PositionEncodingKind(encoding)]
    )
    head = "tools: [Grép😀, "  # é and 😀 differ in every encoding
    text = agent_text("wide", "Prüft 😀 code", f"{head}Reed]\n")
    async with wave_client(server_env(home), caps=caps, root=project) as client:
        editor = AgentEditor(client)
        assert editor.encoding == encoding
        uri = editor.open(agents_dir(project) / "wide.md", text)
        found = await editor.diagnostics(uri, lambda d: len(d) == 2)
        reed = next(d for d in found if "'Reed'" in d.message)
        start = units(head, encoding)
        assert reed.range == span(3, start, start + 4)
        odd = next(d for d in found if "'Grép😀'" in d.message)
        assert odd.range == span(3, units("tools: [", encoding), start - 2)
        [fix] = await editor.fixes(uri, reed)
        assert editor.applied(uri, fix).split("\n")[3] == f"{head}Read]"
        items = await editor.completion(uri, 3, start + 2)  # after "Re"
        item = next(i for i in items if i.label == "Read")
        assert isinstance(item.text_edit, types.TextEdit)
        assert item.text_edit.range == span(3, start, start + 4)
        hover = await editor.hover(uri, 3, start + 1)
        assert hover is not None and hover.range == span(3, start, start + 4)
        del tmp_path


# ---------------------------------------------------------------------------- outline


async def test_symbols_and_folding(home: Path, project: Path) -> None:
    text = (
        "---\nname: outlined\ndescription: >-\n  Long\n  text\ntools: Read\n---\n"  # 0-6
        "# Role\nYou outline.\n\n## Steps\n1. a\n```\n# not a heading\n```\n# Output\nDone.\n"
    )
    async with wave_client(server_env(home), root=project) as client:
        editor = AgentEditor(client)
        uri = editor.open(agents_dir(project) / "outlined.md", text)
        symbols = await client.text_document_document_symbol_async(
            types.DocumentSymbolParams(types.TextDocumentIdentifier(uri))
        )
        assert symbols is not None
        names = [(s.name, [c.name for c in s.children or ()]) for s in symbols]  # type: ignore[union-attr]
        assert names == [
            ("frontmatter", ["name", "description", "tools"]),
            ("Role", ["Steps"]),
            ("Output", []),
        ]
        folds = await client.text_document_folding_range_async(
            types.FoldingRangeParams(types.TextDocumentIdentifier(uri))
        )
        assert folds is not None
        spans = {(f.start_line, f.end_line) for f in folds}
        assert {(0, 6), (2, 4), (7, 14), (10, 14)} <= spans


# ---------------------------------------------------------------------------- elsewhere


async def test_documents_outside_agent_directories_get_nothing(home: Path, project: Path) -> None:
    broken = "---\nname: x\ntools: [Reed]\n---\n# Title\n"
    outside = [
        project / "README.md",
        project / ".wave" / "notes.md",
        project / ".wave" / "agents" / "nested" / "deep.md",
        project / ".wave" / "agents" / "notes.txt",
        project / "agents" / "x.md",
    ]
    async with wave_client(server_env(home), root=project) as client:
        editor = AgentEditor(client)
        uris = [editor.open(path, broken) for path in outside]
        probe = editor.open(agents_dir(project) / "probe.md", broken)
        # The probe's check was scheduled after any check of the others (and a check runs
        # as soon as it is due, in order): its diagnostics prove the others got none.
        await editor.diagnostics(probe, bool)
        for uri in uris:
            assert uri not in client.diagnostics, uri
            assert await editor.completion(uri, 2, 8) == []
            assert await editor.hover(uri, 1, 1) is None
            line = types.Range(start=types.Position(2, 8), end=types.Position(2, 12))
            diagnostic = types.Diagnostic(range=line, message="did you mean 'Read'?")
            assert await editor.fixes(uri, diagnostic) == []
            symbols = await client.text_document_document_symbol_async(
                types.DocumentSymbolParams(types.TextDocumentIdentifier(uri))
            )
            assert not symbols


# ---------------------------------------------------------------------------- command


async def test_new_subagent_command_writes_a_template_that_loads(home: Path, project: Path) -> None:
    async with wave_client(server_env(home), root=project) as client:
        assert client.init_result is not None
        provider = client.init_result.capabilities.execute_command_provider
        assert provider is not None and "wave-ls.newSubagent" in provider.commands
        result = await client.workspace_execute_command_async(
            types.ExecuteCommandParams("wave-ls.newSubagent", [str(project), "doc-writer"])
        )
        path = project / ".wave" / "agents" / "doc-writer.md"
        assert result == {"path": str(path), "uri": uri_of(path)}
        listed = await client.request("wave/agents/list", {"cwd": str(project)})
        assert problems_for(listed, path) == []
        assert any(a["name"] == "doc-writer" for a in listed["agents"])
        with pytest.raises(Exception, match="already exists"):
            await client.workspace_execute_command_async(
                types.ExecuteCommandParams("wave-ls.newSubagent", [str(project), "doc-writer"])
            )
        with pytest.raises(Exception, match="not a valid subagent name"):
            await client.workspace_execute_command_async(
                types.ExecuteCommandParams("wave-ls.newSubagent", [str(project), "doc writer"])
            )
        user = await client.workspace_execute_command_async(
            types.ExecuteCommandParams(
                "wave-ls.newSubagent",
                [{"folder": str(home / ".wave" / "agents"), "name": "mine", "description": "a: b"}],
            )
        )
        assert user is not None and user["path"] == str(home / ".wave" / "agents" / "mine.md")
        listed = await client.request("wave/agents/list", {"cwd": str(project)})
        mine = next(a for a in listed["agents"] if a["name"] == "mine")
        assert mine["source"] == "user" and mine["description"] == "a: b"


async def test_new_subagent_writes_only_inside_a_workspace_folder(
    home: Path, project: Path, tmp_path: Path
) -> None:
    # issue 25 point 4: it wrote <folder>/.wave/agents/<name>.md in any folder given.
    outside = tmp_path / "outside"
    outside.mkdir()
    linked = project / "linked"
    linked.mkdir()
    (linked / ".wave").symlink_to(outside)
    refused: list[list[Any]] = [
        [str(outside), "stray"],
        ["../outside", "stray"],
        [{"folder": uri_of(outside), "name": "stray"}],
        [str(linked), "stray"],  # its .wave is a link out of the workspace
    ]
    async with wave_client(server_env(home), root=project) as client:
        for arguments in refused:
            with pytest.raises(Exception, match="outside the workspace folders") as raised:
                await client.workspace_execute_command_async(
                    types.ExecuteCommandParams("wave-ls.newSubagent", arguments)
                )
            assert str(project) in str(raised.value)
        inside = await client.workspace_execute_command_async(
            types.ExecuteCommandParams("wave-ls.newSubagent", ["packages/api", "api-helper"])
        )
        assert inside is not None
        assert inside["path"] == str(project / "packages/api/.wave/agents/api-helper.md")
    async with wave_client(server_env(home)) as client:  # no workspace folder declared
        with pytest.raises(Exception, match="outside the workspace folders"):
            await client.workspace_execute_command_async(
                types.ExecuteCommandParams("wave-ls.newSubagent", [str(project), "stray"])
            )
    assert list(outside.rglob("*.md")) == []
    assert not (project / ".wave" / "agents" / "stray.md").exists()
