"""The editor set-ups in ``editors/``: each file parses, names ``wave-ls``, and the command
it names really serves what the editor will ask of it."""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path
from typing import Any

from lsprotocol import types

from tests.support.acp_client import acp_agent
from tests.support.agent_docs import AgentEditor
from tests.support.lsp import server_env, wave_client
from wave_ls.server.options import parse_initialization_options

EDITORS = Path(__file__).resolve().parent.parent / "editors"
LSP4IJ = EDITORS / "jetbrains" / "lsp4ij"
ACP_SETUPS = {
    "JetBrains AI Assistant": EDITORS / "jetbrains" / "acp.json",
    "Zed": EDITORS / "zed" / "settings.json",
}


def load(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def env_with_wave_ls_on_path(home: Path) -> dict[str, str]:
    """The environment an editor gives its servers, with this venv's ``wave-ls`` on PATH."""
    env = server_env(home)
    env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
    return env


def test_every_setup_has_a_readme() -> None:
    for folder in (EDITORS / "jetbrains", LSP4IJ, EDITORS / "zed"):
        assert (folder / "README.md").read_text(encoding="utf-8").strip(), folder


def test_acp_entries_start_wave_ls_acp() -> None:
    for editor, path in ACP_SETUPS.items():
        (entry,) = load(path)["agent_servers"].values()
        assert entry["command"].startswith("wave-ls"), editor
        assert entry["args"] == ["acp"], editor
        assert set(entry["env"]) == {"OPENAI_BASE_URL", "OPENAI_API_KEY", "WAVE_MODEL"}, editor


def test_lsp4ij_template_starts_wave_ls_for_agent_files() -> None:
    template = load(LSP4IJ / "template.json")
    assert template["id"] == "wave-ls"
    for command in template["programArgs"].values():
        assert command.startswith("wave-ls"), command
        assert shlex.split(command)[1:] == ["--stdio"]
    patterns = [p for m in template["fileTypeMappings"] for p in m["fileType"]["patterns"]]
    assert "*.md" in patterns  # LSP4IJ matches file names: agent files are *.md
    options, problems = parse_initialization_options(load(LSP4IJ / "initializationOptions.json"))
    assert problems == [] and options.permissionMode == "default"
    assert set(load(LSP4IJ / "experimental.json")["wave"]) == {"permissionRequest", "editorLsp"}


async def test_the_acp_command_of_each_setup_serves_acp(home: Path, project: Path) -> None:
    for path in ACP_SETUPS.values():
        (entry,) = load(path)["agent_servers"].values()
        env = {**env_with_wave_ls_on_path(home), **entry["env"]}
        command = [entry["command"], *entry["args"]]
        async with acp_agent(env, command=command) as agent:
            caps = agent.init.agent_capabilities
            assert caps is not None and caps.load_session
            session = await agent.conn.new_session(cwd=str(project), mcp_servers=[])
            assert session.modes is not None and session.modes.current_mode_id == "default"


async def test_the_lsp4ij_command_checks_agent_files(home: Path, project: Path) -> None:
    template = load(LSP4IJ / "template.json")
    agents = project / ".wave" / "agents"
    agents.mkdir(parents=True)
    checker = agents / "checker.md"
    text = "---\nname: checker\ndescription: Checks.\ntools: Raed\n---\nCheck.\n"
    checker.write_text(text)
    caps = types.ClientCapabilities(experimental=load(LSP4IJ / "experimental.json"))
    async with wave_client(
        env_with_wave_ls_on_path(home),
        caps=caps,
        init_options=load(LSP4IJ / "initializationOptions.json"),
        root=project,
        command=shlex.split(template["programArgs"]["default"]),
    ) as client:
        # LSP4IJ sends every *.md (the template maps them); wave-ls answers agent files.
        editor = AgentEditor(client)
        (warning,) = await editor.diagnostics(editor.open(checker, text), bool)
        assert "did you mean" in warning.message and "Read" in warning.message
        listed = await client.request("wave/agents/list", {"cwd": str(project)})
        assert "checker" in [agent["name"] for agent in listed["agents"]]
        assert client.messages == []  # the template's options raise no warning
