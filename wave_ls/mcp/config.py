"""Where MCP servers are defined, in Claude Code's format, and what one definition holds.

A definition is ``{"command", "args"?, "env"?}`` (stdio; ``"type": "stdio"`` optional) or
``{"type": "http" | "sse", "url", "headers"?}``, under ``mcpServers`` in:

- ``<folder>/.mcp.json`` (scope ``project``: code from the repository, approved first);
- ``<folder>/.wave/settings.local.json`` (``local``; ``project`` when git tracks the file);
- ``$HOME/.wave/settings.json`` (``user``);
- an ACP client's ``session/new`` (``acp``) and a subagent's frontmatter (``agent``).

A name defined in several files is the most specific one's: local, then project, then user
(as Claude Code). ``${VAR}`` and ``${VAR:-default}`` expand in ``command``, ``args``,
``env``, ``url`` and ``headers``; a variable that is not set and has no default makes the
definition unusable (the server fails with that reason, nothing starts).

Nothing here imports the MCP SDK: a session with no server never pays for it.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from wave_ls.runtime.project_settings import SettingsLayer, read_layers
from wave_ls.runtime.regular_files import read_if_regular

Scope = Literal["project", "user", "local", "acp", "agent"]
Transport = Literal["stdio", "http", "sse"]

MCP_JSON = ".mcp.json"
MAX_MCP_JSON_BYTES = 4 * 1024 * 1024
TRANSPORTS: dict[str, Transport] = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamableHttp": "http",
    "sse": "sse",
}
# What Claude Code and OpenAI accept in a tool name: the server's name is made to fit.
_NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


@dataclass(frozen=True)
class ServerSpec:
    """One server definition, expanded, with where it came from.

    ``problem`` says why it cannot be used (then it never starts; its status is
    ``failed`` with that text); ``written`` is the definition as written, whose hash
    (``definition_hash``) an approval is kept for.
    """

    name: str
    scope: Scope
    transport: Transport
    command: str = ""
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    url: str = ""
    headers: Mapping[str, str] = field(default_factory=dict)
    source: Path | None = None
    from_repository: bool = False  # git tracks the file it came from
    problem: str | None = None
    written: Mapping[str, Any] = field(default_factory=dict)
    # Started only once the user approves it (a project's server, or an inline server of a
    # project agent file).
    ask_first: bool = False

    @property
    def definition_hash(self) -> str:
        """What an approval is kept for: a changed definition asks again."""
        text = json.dumps(self.written, sort_keys=True, ensure_ascii=False, default=str)
        return hashlib.sha256(f"{self.transport}\0{text}".encode()).hexdigest()[:32]

    @property
    def tool_prefix(self) -> str:
        """``mcp__<server>__``: what this server's tools are named with."""
        return f"mcp__{tool_name_part(self.name)}__"

    def describe(self) -> str:
        """One line for a person: what runs or where it connects."""
        if self.transport == "stdio":
            return " ".join([self.command, *self.args]).strip()
        return f"{self.transport} {self.url}"


def tool_name_part(name: str) -> str:
    """A server or tool name as it appears in ``mcp__<server>__<tool>`` (Claude Code's rule:
    every character outside ``[A-Za-z0-9_-]`` becomes ``_``)."""
    return _NAME_CHARS.sub("_", name)


def expand(text: str, env: Mapping[str, str], missing: list[str]) -> str:
    """``${VAR}`` and ``${VAR:-default}`` replaced from ``env``; unset names without a
    default are added to ``missing`` (and left as written)."""

    def one(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = env.get(name)
        if value is not None and (value != "" or default is None):
            return value
        if default is not None:
            return default
        if name not in missing:
            missing.append(name)
        return match.group(0)

    return _VARIABLE.sub(one, text)


def parse_server(
    name: str,
    written: Any,
    scope: Scope,
    source: Path | None = None,
    *,
    from_repository: bool = False,
    ask_first: bool = False,
    env: Mapping[str, str] | None = None,
) -> ServerSpec:
    """One definition read (never raises: what is wrong is the spec's ``problem``)."""
    environment = os.environ if env is None else env
    base: dict[str, Any] = {
        "name": name,
        "scope": scope,
        "source": source,
        "from_repository": from_repository,
        "ask_first": scope == "project" or ask_first,
    }
    if not isinstance(written, dict):
        return ServerSpec(transport="stdio", problem="the definition is not a JSON object", **base)
    base["written"] = written
    kind = written.get("type")
    if kind is None:
        kind = "http" if "url" in written and "command" not in written else "stdio"
    transport = TRANSPORTS.get(kind) if isinstance(kind, str) else None
    if transport is None:
        return ServerSpec(
            transport="stdio", problem=f'"type" must be stdio, http or sse, not {kind!r}', **base
        )
    missing: list[str] = []
    problems: list[str] = []
    if transport == "stdio":
        command = written.get("command")
        args = written.get("args", [])
        if not isinstance(command, str) or not command.strip():
            problems.append('"command" must be a non-empty string')
            command = ""
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            problems.append('"args" must be a list of strings')
            args = []
        env_map = _string_map(written.get("env"), "env", problems)
        spec = ServerSpec(
            transport="stdio",
            command=expand(command, environment, missing),
            args=tuple(expand(a, environment, missing) for a in args),
            env={k: expand(v, environment, missing) for k, v in env_map.items()},
            **base,
        )
    else:
        url = written.get("url")
        if not isinstance(url, str) or not url.strip():
            problems.append('"url" must be a non-empty string')
            url = ""
        headers = _string_map(written.get("headers"), "headers", problems)
        spec = ServerSpec(
            transport=transport,
            url=expand(url, environment, missing),
            headers={k: expand(v, environment, missing) for k, v in headers.items()},
            **base,
        )
        if spec.url and not spec.url.startswith(("http://", "https://")) and not missing:
            problems.append(f'"url" must start with http:// or https://, not {spec.url!r}')
    if missing:
        problems.append("environment variables not set: " + ", ".join(missing))
    if problems:
        return ServerSpec(**{**spec.__dict__, "problem": "; ".join(problems)})
    return spec


def _string_map(value: Any, key: str, problems: list[str]) -> dict[str, str]:
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        problems.append(f'"{key}" must be an object of strings')
        return {}
    return {str(k): v for k, v in value.items()}


def parse_servers(
    data: Any, scope: Scope, source: Path | None = None, *, from_repository: bool = False
) -> tuple[list[ServerSpec], list[str]]:
    """The servers of one ``mcpServers`` object, and a warning when it is not one."""
    if data is None:
        return [], []
    where = str(source) if source else scope
    if not isinstance(data, dict):
        return [], [f"{where}: mcpServers must be an object of server definitions; ignored"]
    specs = [
        parse_server(str(name), written, scope, source, from_repository=from_repository)
        for name, written in data.items()
    ]
    return specs, []


@dataclass(frozen=True)
class FolderConfig:
    """Every server defined for one folder, and the MCP settings that apply there.

    ``servers``: one per name, the most specific definition; ``warnings``: files that
    could not be used; ``enabled_project``: ``mcp.enableProjectServers`` of the user's own
    files (``True``, or the names); ``timeout``: ``mcp.toolTimeoutSeconds`` (None: unset).
    """

    folder: Path
    servers: tuple[ServerSpec, ...] = ()
    warnings: tuple[str, ...] = ()
    enabled_project: bool | frozenset[str] = False
    timeout: float | None = None

    def get(self, name: str) -> ServerSpec | None:
        return next((spec for spec in self.servers if spec.name == name), None)


def folder_config(folder: Path, home: Path) -> FolderConfig:
    """The servers of ``folder`` (its ``.mcp.json`` and settings files) and ``$HOME``'s.

    Read without applying trust: every server is listed, and the gate
    (``wave_ls.mcp.gate``) says which may start.
    """
    layers, warnings = read_layers(folder, home)
    by_name: dict[str, ServerSpec] = {}
    for origin in ("user", "mcp.json", "local"):  # least specific first: later ones win
        if origin == "mcp.json":
            _add(by_name, _mcp_json(folder, warnings))
            continue
        for layer in (layer for layer in layers if layer.origin == origin):
            # A committed settings.local.json is the project's, not the user's.
            scope: Scope = "project" if layer.from_repository else cast(Scope, origin)
            specs, problems = parse_servers(
                layer.data.get("mcpServers"),
                scope,
                layer.path,
                from_repository=layer.from_repository,
            )
            warnings += problems
            _add(by_name, specs)
    tracked_ok = not any(layer.from_repository for layer in layers) or _trusted(folder, home)
    usable = [layer for layer in layers if tracked_ok or not layer.from_repository]
    return FolderConfig(
        folder=folder,
        servers=tuple(by_name.values()),
        warnings=tuple(warnings),
        enabled_project=_enabled_project(layers),
        timeout=_timeout(usable, warnings),
    )


def _trusted(folder: Path, home: Path) -> bool:
    from wave_ls.runtime.trust import is_trusted

    return is_trusted(folder, home)


def _add(by_name: dict[str, ServerSpec], specs: Sequence[ServerSpec]) -> None:
    for spec in specs:
        by_name.pop(spec.name, None)
        by_name[spec.name] = spec


def _mcp_json(folder: Path, warnings: list[str]) -> list[ServerSpec]:
    from wave_ls.runtime.trust import from_repository

    path = folder / MCP_JSON
    raw = read_if_regular(path, MAX_MCP_JSON_BYTES)
    if raw is None or not raw.strip():
        return []
    try:
        data = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as error:
        warnings.append(f"{path}: invalid JSON ({error}); its servers are ignored")
        return []
    if not isinstance(data, dict):
        warnings.append(f"{path}: expected a JSON object at the top; ignored")
        return []
    specs, problems = parse_servers(
        data.get("mcpServers"), "project", path, from_repository=from_repository(path)
    )
    warnings += problems
    return specs


def _own_layers(layers: Sequence[SettingsLayer]) -> list[SettingsLayer]:
    """The user's own files: ``$HOME``'s and an untracked ``settings.local.json``."""
    return [
        layer
        for layer in layers
        if layer.origin == "user" or (layer.origin == "local" and not layer.from_repository)
    ]


def _enabled_project(layers: Sequence[SettingsLayer]) -> bool | frozenset[str]:
    names: set[str] = set()
    for layer in _own_layers(layers):
        mcp = layer.data.get("mcp")
        value = mcp.get("enableProjectServers") if isinstance(mcp, dict) else None
        if value is True:
            return True
        if isinstance(value, list):
            names.update(str(item) for item in value if isinstance(item, str))
    return frozenset(names)


def _timeout(layers: Sequence[SettingsLayer], warnings: list[str]) -> float | None:
    for layer in layers:  # most specific first
        mcp = layer.data.get("mcp")
        seconds = mcp.get("toolTimeoutSeconds") if isinstance(mcp, dict) else None
        if seconds is None:
            continue
        if isinstance(seconds, int | float) and not isinstance(seconds, bool) and seconds > 0:
            return float(seconds)
        warnings.append(f"{layer.path}: mcp.toolTimeoutSeconds must be a number above 0")
    return None


def from_acp(servers: Sequence[Any]) -> list[ServerSpec]:
    """ACP's ``mcpServers`` of ``session/new`` / ``session/load`` as specs (scope ``acp``).

    Takes the SDK's models or plain dicts: stdio ``{name, command, args, env: [{name,
    value}]}``, ``{type: "http" | "sse", name, url, headers: [{name, value}]}``.
    """
    out = []
    for server in servers:
        item = server if isinstance(server, dict) else _model_dict(server)
        name = str(item.get("name") or "")
        written: dict[str, Any] = {}
        kind = item.get("type")
        if kind in ("http", "sse") or ("url" in item and "command" not in item):
            written = {"type": kind or "http", "url": item.get("url")}
            written["headers"] = _pairs(item.get("headers"))
        else:
            written = {"command": item.get("command"), "args": list(item.get("args") or [])}
            written["env"] = _pairs(item.get("env"))
        out.append(parse_server(name, written, "acp"))
    return out


def _model_dict(model: Any) -> dict[str, Any]:
    dump = getattr(model, "model_dump", None)
    if callable(dump):
        return cast(dict[str, Any], dump(by_alias=False))
    return dict(vars(model))


def _pairs(value: Any) -> dict[str, str]:
    """``[{name, value}]`` (ACP's shape) or an object, as an object."""
    if isinstance(value, dict):
        return {str(k): str(v) for k, v in value.items()}
    out: dict[str, str] = {}
    for pair in value or []:
        item = pair if isinstance(pair, dict) else _model_dict(pair)
        if "name" in item:
            out[str(item["name"])] = str(item.get("value", ""))
    return out


def agent_servers(
    entries: Any, *, source: Path | None, from_repository: bool, ask_first: bool
) -> tuple[list[str], list[ServerSpec], list[str]]:
    """A subagent's frontmatter ``mcpServers``: the names of configured servers it uses,
    the inline definitions started for it alone (scope ``agent``), and warnings.

    Accepts a list of names and ``{name: definition}`` items, a mapping of definitions, or
    one name.
    """
    names: list[str] = []
    specs: list[ServerSpec] = []
    warnings: list[str] = []
    items = [entries] if isinstance(entries, str | dict) else entries
    if isinstance(entries, dict) and all(isinstance(v, dict) for v in entries.values()):
        items = [{name: value} for name, value in entries.items()]
    if not isinstance(items, list):
        return [], [], ["mcpServers: expected a list of server names or definitions"]
    for item in items:
        if isinstance(item, str):
            names.extend(part for part in re.split(r"[,\s]+", item) if part)
        elif isinstance(item, dict):
            for name, written in item.items():
                if isinstance(written, str | type(None)):
                    names.append(str(name))
                    continue
                specs.append(
                    parse_server(
                        str(name),
                        written,
                        "agent",
                        source,
                        from_repository=from_repository,
                        ask_first=ask_first,
                    )
                )
        else:
            warnings.append(f"mcpServers: {item!r} is neither a name nor a definition; ignored")
    return names, specs, warnings


# Claude Code's variables: a tool call's and a server start's patience, in milliseconds.
TOOL_TIMEOUT_ENV = "MCP_TOOL_TIMEOUT"
STARTUP_TIMEOUT_ENV = "MCP_TIMEOUT"
DEFAULT_TOOL_TIMEOUT = 600.0
DEFAULT_STARTUP_TIMEOUT = 30.0


def tool_timeout(config: FolderConfig, env: Mapping[str, str] | None = None) -> float:
    """Seconds one tool call may take: ``MCP_TOOL_TIMEOUT`` (ms), else
    ``mcp.toolTimeoutSeconds``, else 600."""
    from_env = _milliseconds(TOOL_TIMEOUT_ENV, env)
    return from_env or config.timeout or DEFAULT_TOOL_TIMEOUT


def startup_timeout(env: Mapping[str, str] | None = None) -> float:
    """Seconds a server may take to start and answer ``initialize``: ``MCP_TIMEOUT`` (ms),
    else 30."""
    return _milliseconds(STARTUP_TIMEOUT_ENV, env) or DEFAULT_STARTUP_TIMEOUT


def _milliseconds(name: str, env: Mapping[str, str] | None) -> float | None:
    text = (os.environ if env is None else env).get(name, "").strip()
    try:
        value = float(text) / 1000 if text else 0.0
    except ValueError:
        return None
    return value if value > 0 else None
