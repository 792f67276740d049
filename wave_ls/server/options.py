"""``initializationOptions``: typed, fully defaulted, and forgiving.

A bad value never stops the server: it falls back to its default and the problem is returned
so the server can show it to the user (``window/showMessage``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

from wave_ls.runtime.context.window import WINDOW_RULE, check_window
from wave_ls.runtime.core import PERMISSION_MODES, PermissionMode
from wave_ls.runtime.settings import RETRIES_RULE, TIMEOUT_RULE, check_retries, check_timeout
from wave_ls.server.params import MAX_MODEL_CHARS


@dataclass(frozen=True)
class InitializationOptions:
    """Client settings; each overrides the matching environment variable when set."""

    model: str | None = None  # WAVE_MODEL
    baseUrl: str | None = None  # OPENAI_BASE_URL
    apiKey: str | None = None  # OPENAI_API_KEY
    permissionMode: PermissionMode = "default"
    logFile: str | None = None  # WAVE_LOG_FILE
    logLevel: str | None = None  # WAVE_LOG_LEVEL
    modelTimeout: float | None = None  # WAVE_MODEL_TIMEOUT
    modelRetries: int | None = None  # WAVE_MODEL_RETRIES
    contextWindow: int | None = None  # WAVE_CONTEXT_WINDOW (docs/endpoints.md)


# The options that are not text: how to check each, and what a valid value is.
_NUMBERS: dict[str, tuple[Callable[[object], object | None], str]] = {
    "modelTimeout": (check_timeout, TIMEOUT_RULE),
    "modelRetries": (check_retries, RETRIES_RULE),
    "contextWindow": (check_window, WINDOW_RULE),
}


def parse_initialization_options(raw: object) -> tuple[InitializationOptions, list[str]]:
    """The options from the client's JSON, and one message per value that was ignored."""
    if raw is None:
        return InitializationOptions(), []
    if not isinstance(raw, dict):
        return InitializationOptions(), [
            f"initializationOptions must be an object, got {type(raw).__name__}; using defaults"
        ]
    values: dict[str, Any] = {}  # checked above: each is its field's type
    problems: list[str] = []
    known = {f.name for f in fields(InitializationOptions)}
    for key, value in raw.items():
        if key not in known:
            continue  # other clients' settings are not ours to judge
        if value is None:
            continue
        if key in _NUMBERS:
            check, rule = _NUMBERS[key]
            checked = check(value)
            if checked is None:
                problems.append(
                    f"initializationOptions.{key} {value!r} is not {rule}; using the default"
                )
            else:
                values[key] = checked
            continue
        if not isinstance(value, str):
            problems.append(f"initializationOptions.{key} must be a string; ignored")
            continue
        if key == "permissionMode" and value not in PERMISSION_MODES:
            allowed = ", ".join(PERMISSION_MODES)
            problems.append(
                f"initializationOptions.permissionMode {value!r} is not one of {allowed}; "
                "using 'default'"
            )
            continue
        if key == "model" and len(value) > MAX_MODEL_CHARS:
            problems.append(
                f"initializationOptions.model is {len(value):,} characters long; a model id "
                f"has at most {MAX_MODEL_CHARS:,}; ignored"
            )
            continue
        values[key] = value
    return InitializationOptions(**values), problems
