"""Validating a tool call's arguments: a wrong or missing one names the parameter."""

from __future__ import annotations

from typing import Any

from wave_ls.runtime.core import ToolError


def _type_name(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def require_str(args: dict[str, Any], name: str, *, allow_empty: bool = True) -> str:
    """A required string parameter."""
    if name not in args or args[name] is None:
        raise ToolError(f"Missing required parameter '{name}'")
    value = args[name]
    if not isinstance(value, str):
        raise ToolError(f"Parameter '{name}' must be a string, got {_type_name(value)}")
    if not allow_empty and not value.strip():
        raise ToolError(f"Parameter '{name}' must not be empty")
    return value


def optional_str(args: dict[str, Any], name: str) -> str | None:
    """An optional string parameter (``None`` when absent or null)."""
    value = args.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise ToolError(f"Parameter '{name}' must be a string, got {_type_name(value)}")
    return value


def optional_int(
    args: dict[str, Any], name: str, *, minimum: int | None = None, maximum: int | None = None
) -> int | None:
    """An optional integer; digit strings and whole floats are accepted (models send both)."""
    value = args.get(name)
    if value is None:
        return None
    number: int | None = None
    if isinstance(value, bool):
        number = None
    elif isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and value.strip().lstrip("-").isdigit():
        number = int(value.strip())
    if number is None:
        raise ToolError(f"Parameter '{name}' must be an integer, got {_type_name(value)}")
    if minimum is not None and number < minimum:
        raise ToolError(f"Parameter '{name}' must be at least {minimum}, got {number}")
    if maximum is not None and number > maximum:
        raise ToolError(f"Parameter '{name}' must be at most {maximum}, got {number}")
    return number


def optional_bool(args: dict[str, Any], name: str, default: bool = False) -> bool:
    """An optional boolean; the strings "true"/"false" are accepted."""
    value = args.get(name)
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("true", "false"):
        return value.lower() == "true"
    raise ToolError(f"Parameter '{name}' must be a boolean, got {_type_name(value)}")


def optional_str_list(args: dict[str, Any], name: str) -> list[str]:
    """An optional list of strings (a single string counts as a list of one)."""
    value = args.get(name)
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(item, str) for item in value):
        return list(value)
    raise ToolError(f"Parameter '{name}' must be a list of strings, got {_type_name(value)}")


def optional_choice(args: dict[str, Any], name: str, choices: tuple[str, ...]) -> str | None:
    """An optional string that must be one of ``choices``."""
    value = optional_str(args, name)
    if value is not None and value not in choices:
        raise ToolError(f"Parameter '{name}' must be one of {', '.join(choices)}; got {value!r}")
    return value
