"""Paths a client sends (a session's folder, a worktree): checked before a system call sees
them, so a path no call could take (too long, a NUL byte) is the client's error, never an
internal one. Each adapter turns ``UnusablePath`` into its protocol's invalid-params error."""

from __future__ import annotations

from pathlib import Path

# Linux's PATH_MAX: no longer path can be opened.
MAX_PATH_CHARS = 4096


class UnusablePath(ValueError):
    """The path cannot be used; the message names the field and says why."""


def absolute_path(value: str, name: str) -> Path:
    """``value`` as an absolute path (``~`` expanded); it need not exist."""
    if len(value) > MAX_PATH_CHARS:
        raise UnusablePath(
            f"'{name}' is {len(value)} characters long; a path has at most {MAX_PATH_CHARS}"
        )
    if "\0" in value:
        raise UnusablePath(f"'{name}' holds a NUL character")
    try:
        path = Path(value).expanduser()
    except RuntimeError as error:  # "~someone" for a user this system does not know
        raise UnusablePath(f"'{name}' {value!r}: {error}") from error
    if not path.is_absolute():
        raise UnusablePath(f"'{name}' must be an absolute path, got {value!r}")
    return path


def existing_dir(value: str, name: str) -> Path:
    """An absolute path to a directory, resolved."""
    path = absolute_path(value, name)
    try:
        resolved = path.resolve() if path.is_dir() else None
    except (OSError, ValueError, RuntimeError) as error:  # ENAMETOOLONG, a symlink loop
        raise UnusablePath(f"'{name}' is not a usable path: {error}") from None
    if resolved is None:
        raise UnusablePath(f"'{name}' is not a directory: {value}")
    return resolved
