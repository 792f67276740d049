"""MCP server definitions as Claude Code writes them (issue 26): where they are read from,
which one wins, ``${VAR}`` expansion, and who may start (real files, real git repositories)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.support.git_repos import commit_all
from wave_ls.mcp import approvals
from wave_ls.mcp.config import (
    agent_servers,
    expand,
    folder_config,
    from_acp,
    parse_server,
    tool_timeout,
)
from wave_ls.mcp.gate import gate
from wave_ls.runtime.trust import is_trusted, set_trust


def write(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_variables_expand_with_defaults_and_unset_ones_make_the_definition_unusable() -> None:
    env = {"HOST": "example.com", "EMPTY": ""}
    missing: list[str] = []
    assert expand("https://${HOST}/${PATH_PART:-mcp}", env, missing) == "https://example.com/mcp"
    assert expand("${EMPTY:-fallback}", env, missing) == "fallback"
    assert missing == []
    spec = parse_server("s", {"command": "${NOPE}", "args": ["${NOPE2}"]}, "user", env=env)
    assert spec.problem == "environment variables not set: NOPE, NOPE2"
    http = parse_server(
        "h",
        {"type": "http", "url": "https://${HOST}/mcp", "headers": {"A": "${HOST}"}},
        "user",
        env=env,
    )
    assert http.url == "https://example.com/mcp" and dict(http.headers) == {"A": "example.com"}
    assert http.transport == "http" and http.problem is None
    bad = parse_server("b", {"type": "websocket", "url": "x"}, "user")
    assert bad.problem is not None and "stdio, http or sse" in bad.problem


def test_local_beats_project_beats_user_and_committed_local_settings_are_the_projects(
    project: Path, home: Path
) -> None:
    write(home / ".wave" / "settings.json", {"mcpServers": {"a": {"command": "user-a"}}})
    write(
        project / ".mcp.json",
        {"mcpServers": {"a": {"command": "project-a"}, "b": {"command": "b"}}},
    )
    write(project / ".wave" / "settings.local.json", {"mcpServers": {"b": {"command": "local-b"}}})
    config = folder_config(project, home)
    by_name = {spec.name: spec for spec in config.servers}
    assert (by_name["a"].command, by_name["a"].scope) == ("project-a", "project")
    assert (by_name["b"].command, by_name["b"].scope) == ("local-b", "local")
    assert not by_name["b"].ask_first
    commit_all(project, "commit the local settings too")
    committed = folder_config(project, home).get("b")
    assert committed is not None and committed.scope == "project" and committed.ask_first
    assert committed.from_repository


def test_approval_is_kept_per_definition_and_trust_holds_back_committed_servers(
    project: Path, home: Path
) -> None:
    write(project / ".mcp.json", {"mcpServers": {"p": {"command": "p"}}})
    config = folder_config(project, home)
    spec = config.servers[0]
    assert gate(spec, config, home, lambda: False).verdict == "needs-approval"  # untracked
    approvals.keep(home, project, "p", spec.definition_hash, True)
    assert gate(spec, config, home, lambda: False).verdict == "allowed"
    commit_all(project, "commit .mcp.json")
    config = folder_config(project, home)

    def trusted() -> bool:  # what the folder's servers ask: the kept decision
        return is_trusted(project, home)

    held = gate(config.servers[0], config, home, trusted)
    assert held.verdict == "disabled" and "not trusted" in held.reason
    set_trust(project, home, True)
    assert gate(config.servers[0], config, home, trusted).verdict == "allowed"
    write(project / ".mcp.json", {"mcpServers": {"p": {"command": "p", "args": ["changed"]}}})
    config = folder_config(project, home)
    assert gate(config.servers[0], config, home, trusted).verdict == "needs-approval"


def test_enable_project_servers_counts_only_in_the_users_own_files(
    project: Path, home: Path
) -> None:
    write(project / ".mcp.json", {"mcpServers": {"p": {"command": "p"}, "q": {"command": "q"}}})
    write(home / ".wave" / "settings.json", {"mcp": {"enableProjectServers": ["p"]}})
    config = folder_config(project, home)
    verdicts = {s.name: gate(s, config, home, lambda: True).verdict for s in config.servers}
    assert verdicts == {"p": "allowed", "q": "needs-approval"}
    # A committed settings.local.json cannot approve the repository's own servers.
    write(project / ".wave" / "settings.local.json", {"mcp": {"enableProjectServers": True}})
    commit_all(project, "self-approval")
    config = folder_config(project, home)
    assert config.enabled_project == frozenset({"p"})


def test_tool_timeout_from_settings_and_claude_codes_variable(project: Path, home: Path) -> None:
    write(home / ".wave" / "settings.json", {"mcp": {"toolTimeoutSeconds": 42}})
    config = folder_config(project, home)
    assert tool_timeout(config, env={}) == 42
    assert tool_timeout(config, env={"MCP_TOOL_TIMEOUT": "1500"}) == 1.5


def test_acp_servers_and_subagent_frontmatter_servers() -> None:
    specs = from_acp(
        [
            {
                "name": "gh",
                "command": "gh-mcp",
                "args": ["x"],
                "env": [{"name": "T", "value": "1"}],
            },
            {"type": "http", "name": "web", "url": "http://127.0.0.1:1/mcp", "headers": []},
        ]
    )
    assert [(s.name, s.scope, s.transport) for s in specs] == [
        ("gh", "acp", "stdio"),
        ("web", "acp", "http"),
    ]
    assert dict(specs[0].env) == {"T": "1"}
    names, inline, warnings = agent_servers(
        ["github", {"own": {"command": "own-server"}}, {"named": None}],
        source=None,
        from_repository=False,
        ask_first=True,
    )
    assert names == ["github", "named"] and warnings == []
    assert [(s.name, s.scope, s.ask_first) for s in inline] == [("own", "agent", True)]


def test_a_stdio_server_inherits_the_environment_but_not_wave_ls_own(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # As Claude Code: servers read their tokens from the environment they start in; the
    # model endpoint's key and wave-ls's settings are not theirs.
    from wave_ls.mcp.connection import server_environment

    monkeypatch.setenv("GITHUB_TOKEN", "gh-token")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("WAVE_MODEL", "m")
    environment = server_environment()
    assert environment["GITHUB_TOKEN"] == "gh-token"
    assert "OPENAI_API_KEY" not in environment and "WAVE_MODEL" not in environment
    assert environment["PATH"] == os.environ["PATH"]
