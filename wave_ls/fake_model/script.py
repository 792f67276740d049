"""The fake model's script: parsing, validation and the stateless routing rules.

A script says what the model answers. Routing depends only on the request's messages, so
parallel conversations (a session and its subagents) each follow their own route:

- a route's anchor is the LAST user-role message whose text contains the route's ``match``
  (and, when ``system`` is given, only if the system prompt contains it too);
- the route with the latest anchor wins (ties: the first listed);
- the step index is the number of assistant messages after the anchor;
- past the last step: the last step's text again if it has no tool calls, else
  ``(script finished)``;
- no route matches: the script's ``default`` step.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

DEFAULT_TEXT = "(fake model: no script route matched this request)"
FINISHED_TEXT = "(script finished)"

_SCRIPT_KEYS = {
    "models",
    "api_key",
    "routes",
    "default",
    "tokens_per_second",
    "model_info",
    "props",
}
_ROUTE_KEYS = {"match", "system", "steps"}
_STEP_KEYS = {
    "content",
    "tool_calls",
    "usage",
    "delay",
    "chunk_delay",
    "end_delay",
    "chunk_size",
    "fault",
    "echo",
    "sse_multiline",
    "finish_reason",
    "prompt_delay",
    "drop_tools",
    "reasoning_content",
}
_CALL_KEYS = {"name", "arguments", "id"}
# Fault kinds besides a status code; each takes a number of data events sent before it hits.
STREAM_FAULTS = (
    "error_after_chunks",
    "malformed_after_chunks",
    "drop_after_chunks",
    "end_after_chunks",
    "hang_after_chunks",
)
# Answers with status 200 that are no event stream (for a request with ``stream: true``).
BODY_FAULTS = ("json_body", "html_page")
_FAULT_KEYS = {"status", "body", "headers", "times", "hang", *STREAM_FAULTS, *BODY_FAULTS}


class ScriptError(ValueError):
    """The script is not valid; the message names the place (``routes[0].steps[1]``)."""


@dataclass(frozen=True)
class Fault:
    """One way a step fails. ``times`` limits it to the first N requests reaching the step."""

    status: int | None = None
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    times: int | None = None
    hang: bool = False
    json_body: bool = False
    html_page: bool = False
    error_after_chunks: int | None = None
    malformed_after_chunks: int | None = None
    drop_after_chunks: int | None = None
    end_after_chunks: int | None = None
    hang_after_chunks: int | None = None

    def stream_fault(self) -> tuple[str, int] | None:
        """The mid-stream fault as ``(kind, after_chunks)``, if this is one."""
        for kind in STREAM_FAULTS:
            value = getattr(self, kind)
            if value is not None:
                return kind, value
        return None


@dataclass(frozen=True)
class ScriptedCall:
    name: str
    arguments: str  # JSON text, as the model sends it
    id: str | None = None


@dataclass(frozen=True)
class Step:
    content: str = ""
    tool_calls: tuple[ScriptedCall, ...] = ()
    usage: dict[str, int] | None = None
    delay: float = 0.0
    chunk_delay: float | None = None
    # Seconds between ``[DONE]`` and the end of the body: a keep-alive server whose last
    # write waits (Nagle against a delayed ACK) holds the body open ~40 ms after ``[DONE]``.
    end_delay: float = 0.0
    chunk_size: int = 8
    fault: Fault | None = None
    echo: bool = False
    sse_multiline: bool = False  # each event's JSON spread over several ``data:`` lines
    # Overrides ``stop``/``tool_calls`` (``"length"``: cut off by the output limit).
    finish_reason: str | None = None
    # Seconds between the headers and the first event (llama.cpp reading a long prompt).
    prompt_delay: float = 0.0
    # Answer as a server whose chat template dropped ``tools``: usage counts no tools.
    drop_tools: bool = False
    # The model's reasoning, streamed as ``reasoning_content`` deltas before the answer
    # (DeepSeek, vLLM and llama.cpp with a reasoning parser).
    reasoning_content: str = ""


@dataclass(frozen=True)
class Route:
    match: str
    steps: tuple[Step, ...]
    system: str | None = None


@dataclass(frozen=True)
class Script:
    routes: tuple[Route, ...] = ()
    default: Step = field(default_factory=lambda: Step(content=DEFAULT_TEXT))
    models: tuple[str, ...] | None = None
    api_key: str | None = None
    tokens_per_second: float | None = None
    # Extra fields of every ``/v1/models`` entry (vLLM's ``max_model_len``, ...).
    model_info: dict[str, Any] = field(default_factory=dict)
    # What ``GET /props`` answers (llama.cpp's server properties); None: 404.
    props: dict[str, Any] | None = None


@dataclass(frozen=True)
class Choice:
    """The step that answers a request. ``key`` identifies the step for fault counting."""

    step: Step
    key: tuple[int, int]  # (route index or -1 for the default, step index)
    anchor: int  # index of the anchor message, -1 for the default


# --------------------------------------------------------------------------- parsing


def parse_script(data: Any) -> Script:
    """Validate a script given as parsed JSON; raises ``ScriptError`` naming the place."""
    if data is None:
        return Script()
    obj = _mapping(data, "script", _SCRIPT_KEYS)
    models = obj.get("models")
    if models is not None and not (
        isinstance(models, list) and all(isinstance(m, str) for m in models)
    ):
        raise ScriptError("script.models: expected a list of model names")
    api_key = obj.get("api_key")
    if api_key is not None and not isinstance(api_key, str):
        raise ScriptError("script.api_key: expected a string")
    routes_data = obj.get("routes", [])
    if not isinstance(routes_data, list):
        raise ScriptError("script.routes: expected a list")
    routes = tuple(_parse_route(r, f"routes[{i}]") for i, r in enumerate(routes_data))
    default = (
        _parse_step(obj["default"], "default") if "default" in obj else Step(content=DEFAULT_TEXT)
    )
    tps = _number(obj, "tokens_per_second", "script", None)
    if tps is not None and tps <= 0:
        raise ScriptError("script.tokens_per_second: expected a positive number")
    model_info = obj.get("model_info", {})
    props = obj.get("props")
    if not isinstance(model_info, dict):
        raise ScriptError("script.model_info: expected an object")
    if props is not None and not isinstance(props, dict):
        raise ScriptError("script.props: expected an object")
    return Script(
        routes=routes,
        default=default,
        models=tuple(models) if models is not None else None,
        api_key=api_key,
        tokens_per_second=tps,
        model_info=model_info,
        props=props,
    )


def _parse_route(data: Any, where: str) -> Route:
    obj = _mapping(data, where, _ROUTE_KEYS)
    match = obj.get("match", "")
    system = obj.get("system")
    if not isinstance(match, str):
        raise ScriptError(f"{where}.match: expected a string")
    if system is not None and not isinstance(system, str):
        raise ScriptError(f"{where}.system: expected a string")
    steps = obj.get("steps")
    if not isinstance(steps, list) or not steps:
        raise ScriptError(f"{where}.steps: expected a non-empty list of steps")
    return Route(
        match=match,
        system=system,
        steps=tuple(_parse_step(s, f"{where}.steps[{i}]") for i, s in enumerate(steps)),
    )


def _parse_step(data: Any, where: str) -> Step:
    obj = _mapping(data, where, _STEP_KEYS)
    content = obj.get("content", "")
    if not isinstance(content, str):
        raise ScriptError(f"{where}.content: expected a string")
    reasoning = obj.get("reasoning_content", "")
    if not isinstance(reasoning, str):
        raise ScriptError(f"{where}.reasoning_content: expected a string")
    calls_data = obj.get("tool_calls", [])
    if not isinstance(calls_data, list):
        raise ScriptError(f"{where}.tool_calls: expected a list")
    usage = obj.get("usage")
    if usage is not None and not (
        isinstance(usage, dict) and all(isinstance(v, int) for v in usage.values())
    ):
        raise ScriptError(f"{where}.usage: expected an object of integer token counts")
    chunk_size = obj.get("chunk_size", 8)
    if not isinstance(chunk_size, int) or isinstance(chunk_size, bool) or chunk_size < 1:
        raise ScriptError(f"{where}.chunk_size: expected a positive integer")
    return Step(
        content=content,
        tool_calls=tuple(
            _parse_call(c, f"{where}.tool_calls[{i}]") for i, c in enumerate(calls_data)
        ),
        usage=usage,
        delay=_number(obj, "delay", where, 0.0) or 0.0,
        chunk_delay=_number(obj, "chunk_delay", where, None),
        end_delay=_number(obj, "end_delay", where, 0.0) or 0.0,
        chunk_size=chunk_size,
        fault=_parse_fault(obj["fault"], f"{where}.fault") if "fault" in obj else None,
        echo=_bool(obj, "echo", where),
        sse_multiline=_bool(obj, "sse_multiline", where),
        finish_reason=_finish_reason(obj, where),
        prompt_delay=_number(obj, "prompt_delay", where, 0.0) or 0.0,
        drop_tools=_bool(obj, "drop_tools", where),
        reasoning_content=reasoning,
    )


def _finish_reason(obj: dict[str, Any], where: str) -> str | None:
    value = obj.get("finish_reason")
    if value is not None and (not isinstance(value, str) or not value):
        raise ScriptError(f'{where}.finish_reason: expected a string such as "length"')
    return value


def _parse_call(data: Any, where: str) -> ScriptedCall:
    obj = _mapping(data, where, _CALL_KEYS)
    name = obj.get("name")
    if not isinstance(name, str) or not name:
        raise ScriptError(f"{where}.name: expected the tool's name")
    arguments = obj.get("arguments", {})
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments)
    call_id = obj.get("id")
    if call_id is not None and not isinstance(call_id, str):
        raise ScriptError(f"{where}.id: expected a string")
    return ScriptedCall(name=name, arguments=arguments, id=call_id)


def _parse_fault(data: Any, where: str) -> Fault:
    obj = _mapping(data, where, _FAULT_KEYS)
    kinds = [
        k
        for k in ("status", "hang", *BODY_FAULTS, *STREAM_FAULTS)
        if obj.get(k) is not None and obj.get(k) is not False
    ]
    if len(kinds) != 1:
        raise ScriptError(
            f"{where}: expected exactly one of status, hang, "
            f"{', '.join((*BODY_FAULTS, *STREAM_FAULTS))}"
        )
    counts: dict[str, int | None] = {}
    for key in ("status", "times", *STREAM_FAULTS):
        value = obj.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)):
            raise ScriptError(f"{where}.{key}: expected an integer")
        counts[key] = value
    headers = obj.get("headers", {})
    if not isinstance(headers, dict):
        raise ScriptError(f"{where}.headers: expected an object")
    return Fault(
        status=counts["status"],
        body=obj.get("body"),
        headers={str(k): str(v) for k, v in headers.items()},
        times=counts["times"],
        hang=_bool(obj, "hang", where),
        json_body=_bool(obj, "json_body", where),
        html_page=_bool(obj, "html_page", where),
        error_after_chunks=counts["error_after_chunks"],
        malformed_after_chunks=counts["malformed_after_chunks"],
        drop_after_chunks=counts["drop_after_chunks"],
        end_after_chunks=counts["end_after_chunks"],
        hang_after_chunks=counts["hang_after_chunks"],
    )


def _mapping(data: Any, where: str, known: set[str]) -> dict[str, Any]:
    if not isinstance(data, dict):
        raise ScriptError(f"{where}: expected an object")
    unknown = sorted(set(data) - known)
    if unknown:
        raise ScriptError(
            f"{where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}"
        )
    return data


def _number(obj: dict[str, Any], key: str, where: str, default: float | None) -> float | None:
    value = obj.get(key, default)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ScriptError(f"{where}.{key}: expected a number >= 0")
    return float(value)


def _bool(obj: dict[str, Any], key: str, where: str) -> bool:
    value = obj.get(key, False)
    if not isinstance(value, bool):
        raise ScriptError(f"{where}.{key}: expected true or false")
    return value


# --------------------------------------------------------------------------- routing


def message_text(message: dict[str, Any]) -> str:
    """The text of a message: string content, or its text parts joined by newlines."""
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            part["text"]
            for part in content
            if isinstance(part, dict) and isinstance(part.get("text"), str)
        )
    return ""


def system_text(messages: list[dict[str, Any]]) -> str:
    return "\n".join(message_text(m) for m in messages if m.get("role") in ("system", "developer"))


def last_user_text(messages: list[dict[str, Any]]) -> str:
    for message in reversed(messages):
        if message.get("role") == "user":
            return message_text(message)
    return ""


def choose_step(script: Script, messages: list[dict[str, Any]]) -> Choice:
    """The step answering a conversation; see the module docstring for the rules."""
    system = system_text(messages)
    best: tuple[int, int] | None = None  # (anchor, route index)
    for index, route in enumerate(script.routes):
        if route.system is not None and route.system not in system:
            continue
        anchor = _anchor(route.match, messages)
        if anchor is not None and (best is None or anchor > best[0]):
            best = (anchor, index)
    if best is None:
        return Choice(step=script.default, key=(-1, 0), anchor=-1)
    anchor, index = best
    steps = script.routes[index].steps
    step_index = sum(1 for m in messages[anchor + 1 :] if m.get("role") == "assistant")
    if step_index < len(steps):
        return Choice(step=steps[step_index], key=(index, step_index), anchor=anchor)
    last = steps[-1]
    finished = (
        Step(content=last.content, echo=last.echo)
        if not last.tool_calls
        else Step(content=FINISHED_TEXT)
    )
    return Choice(step=finished, key=(index, len(steps)), anchor=anchor)


def _anchor(match: str, messages: list[dict[str, Any]]) -> int | None:
    for index in range(len(messages) - 1, -1, -1):
        message = messages[index]
        if message.get("role") == "user" and match in message_text(message):
            return index
    return None
