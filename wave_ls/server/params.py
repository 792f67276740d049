"""Validation of raw request params: every problem becomes a JSON-RPC InvalidParams error."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

from pygls.exceptions import JsonRpcInvalidParams

from wave_ls.runtime import client_paths
from wave_ls.runtime.client_paths import UnusablePath

T = TypeVar("T")
# A model id is sent with every model request: a name, or at most a model file's path.
MAX_MODEL_CHARS = 1024


def require_object(params: object, method: str) -> dict[str, object]:
    """The params of a ``wave/*`` request as the JSON object they must be."""
    if not isinstance(params, dict):
        raise JsonRpcInvalidParams(f"{method}: params must be an object")
    return params


def field(
    params: dict[str, object], name: str, kind: type[T], method: str, *, required: bool = False
) -> T | None:
    """``params[name]`` checked against ``kind``; None when absent and not required."""
    value = params.get(name)
    if value is None:
        if required:
            raise JsonRpcInvalidParams(f"{method}: '{name}' is required")
        return None
    # bool is a subclass of int: a flag must not pass as a number
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise JsonRpcInvalidParams(f"{method}: '{name}' must be a {kind.__name__}")
    return value


def required_str(params: dict[str, object], name: str, method: str) -> str:
    value = field(params, name, str, method, required=True)
    assert value is not None
    return value


def model_param(params: dict[str, object], method: str) -> str | None:
    """``params.model`` when given: text of at most ``MAX_MODEL_CHARS``, else InvalidParams."""
    value = field(params, "model", str, method)
    if value is not None and len(value) > MAX_MODEL_CHARS:
        raise JsonRpcInvalidParams(
            f"{method}: 'model' is {len(value):,} characters long; a model id has at most "
            f"{MAX_MODEL_CHARS:,}"
        )
    return value


def absolute_path(value: str, name: str, method: str) -> Path:
    """``value`` as an absolute path (``~`` expanded); it need not exist. InvalidParams for
    a path no system call could take (too long, a NUL byte)."""
    try:
        return client_paths.absolute_path(value, name)
    except UnusablePath as error:
        raise JsonRpcInvalidParams(f"{method}: {error}") from None


def existing_dir(value: str, name: str, method: str) -> Path:
    """An absolute path to a directory, resolved; InvalidParams for anything else."""
    try:
        return client_paths.existing_dir(value, name)
    except UnusablePath as error:
        raise JsonRpcInvalidParams(f"{method}: {error}") from None
