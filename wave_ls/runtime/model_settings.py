"""Request options for the model: ``{"model": {...}}`` in the settings files, and the
first-token wait (``WAVE_MODEL_FIRST_TOKEN_TIMEOUT``).

``{"model": {"maxTokens": N, "temperature": T, "toolChoice": C, "byModel": {"<model id>":
{...the same keys...}}}}``; the most specific settings file that sets a key wins, and a
``byModel`` entry of the session's model wins over the file's own keys. ``toolChoice`` is
``"auto"``, ``"none"``, ``"required"`` or ``{"type": "function", "function": {"name": N}}``;
a forcing choice (``required``, a named function) applies to the first request of each turn
only, or the turn could never end with an answer. ``replyPrefix`` (text) is sent as the start
of the assistant's reply on that same first request: llama.cpp continues a final assistant
message (its "prefill"), so ``"<tool_call>\n"`` with ``toolChoice: "required"`` has even a
135 M model call a tool at once. A ``toolChoice`` or ``replyPrefix`` from a settings file that
came with the repository (git tracks it) applies only once the folder is trusted: it could
make the agent call a tool of the repository's choosing first.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wave_ls.runtime import trust_store
from wave_ls.runtime.project_settings import load_layers

FIRST_TOKEN_ENV = "WAVE_MODEL_FIRST_TOKEN_TIMEOUT"
# A long prompt on a small machine: llama.cpp reads 7 K tokens in 20-60 s on two threads,
# and sends nothing meanwhile.
DEFAULT_FIRST_TOKEN_TIMEOUT = 300.0
MAX_FIRST_TOKEN_TIMEOUT = 3600.0
MAX_TOKENS_LIMIT = 1_000_000
TOOL_CHOICES = ("auto", "none", "required")
KEYS = ("maxTokens", "temperature", "toolChoice", "replyPrefix")
# Keys that steer what the agent does first: held back in a folder not trusted yet.
STEERING = ("toolChoice", "replyPrefix")
MAX_PREFIX_CHARS = 200


@dataclass(frozen=True)
class ModelOptions:
    """What the settings ask every model request to carry (None: not set)."""

    max_tokens: int | None = None
    temperature: float | None = None
    tool_choice: str | dict[str, Any] | None = None
    reply_prefix: str | None = None
    problems: tuple[str, ...] = ()

    def params(self) -> dict[str, Any]:
        """The request parameters these options set (``tool_choice`` aside: per round)."""
        out: dict[str, Any] = {}
        if self.max_tokens is not None:
            out["max_tokens"] = self.max_tokens
        if self.temperature is not None:
            out["temperature"] = self.temperature
        return out


def load_model_options(cwd: Path, home: Path | None, model: str | None) -> ModelOptions:
    """The ``model`` settings for ``model`` in the project ``cwd``."""
    layers, _warnings = load_layers(cwd, home)
    found: dict[str, tuple[object, Path]] = {}
    problems: list[str] = []
    trusted: bool | None = None
    for layer in layers:  # most specific first
        section = layer.data.get("model")
        if not isinstance(section, dict):
            continue
        by_model = section.get("byModel")
        specific = by_model.get(model) if isinstance(by_model, dict) and model else None
        for source in (specific, section):
            if not isinstance(source, dict):
                continue
            for key in KEYS:
                if key not in source or key in found:
                    continue
                if key in STEERING and layer.from_repository:
                    if trusted is None:
                        trusted = trust_store.decision(cwd, home or Path.home()) is True
                    if not trusted:
                        problems.append(
                            f"{layer.path}: model.{key} is held back until the folder is "
                            "trusted (the file came with the repository)"
                        )
                        continue
                found[key] = (source[key], layer.path)
    max_tokens = _checked(found, "maxTokens", _max_tokens, "a whole number from 1", problems)
    temperature = _checked(found, "temperature", _temperature, "a number from 0 to 2", problems)
    choice = _checked(
        found,
        "toolChoice",
        _tool_choice,
        'one of "auto", "none", "required" or a function',
        problems,
    )
    prefix_rule = f"text of 1 to {MAX_PREFIX_CHARS} characters"
    prefix = _checked(found, "replyPrefix", _prefix, prefix_rule, problems)
    return ModelOptions(max_tokens, temperature, choice, prefix, tuple(problems))


def first_token_timeout(env: Mapping[str, str] | None = None) -> float:
    """Seconds to wait for the first token of an answer (``WAVE_MODEL_FIRST_TOKEN_TIMEOUT``)."""
    text = (os.environ if env is None else env).get(FIRST_TOKEN_ENV, "")
    try:
        value = float(text)
    except ValueError:
        return DEFAULT_FIRST_TOKEN_TIMEOUT
    return value if 0 < value <= MAX_FIRST_TOKEN_TIMEOUT else DEFAULT_FIRST_TOKEN_TIMEOUT


def forcing(tool_choice: object) -> bool:
    """Whether a ``tool_choice`` forces a tool call (then only a turn's first round)."""
    return tool_choice == "required" or isinstance(tool_choice, dict)


def _checked(
    found: dict[str, tuple[object, Path]], key: str, check: Any, rule: str, problems: list[str]
) -> Any:
    if key not in found:
        return None
    value, path = found[key]
    checked = check(value)
    if checked is None:
        problems.append(f"{path}: model.{key} {value!r} is not {rule}; ignored")
    return checked


def _max_tokens(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if 1 <= value <= MAX_TOKENS_LIMIT else None


def _temperature(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if 0 <= value <= 2 else None


def _prefix(value: object) -> str | None:
    return value if isinstance(value, str) and 0 < len(value) <= MAX_PREFIX_CHARS else None


def _tool_choice(value: object) -> str | dict[str, Any] | None:
    if isinstance(value, str):
        return value if value in TOOL_CHOICES else None
    if isinstance(value, dict):
        function = value.get("function")
        name = function.get("name") if isinstance(function, dict) else None
        if value.get("type") == "function" and isinstance(name, str) and name:
            return {"type": "function", "function": {"name": name}}
    return None
