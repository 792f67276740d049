"""Opening files that someone else may have planted: only regular files, and only so much.

A FIFO opened for reading waits for a writer for ever, and a symbolic link to
``/dev/zero`` never ends. Each file is opened with ``O_NONBLOCK`` (a FIFO opens at once)
and checked on the descriptor (nothing swapped in after a check can slip through); reading
stops past the caller's limit, however big the file has grown meanwhile.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0) | getattr(os, "O_NOCTTY", 0)
CHUNK = 1 << 20


class NotRegularFile(OSError):
    """The path is a FIFO, a device, a socket or a directory."""


class FileTooLarge(OSError):
    """The file is over the reader's limit; ``size`` is how big it is."""

    def __init__(self, path: Path | str | os.PathLike[str], size: int, limit: int) -> None:
        super().__init__(
            errno.EFBIG, f"{size:,} bytes, over the limit of {limit:,}", os.fspath(path)
        )
        self.size = size
        self.limit = limit


def open_regular(path: Path | str | os.PathLike[str]) -> tuple[int, os.stat_result]:
    """A read-only descriptor of the regular file ``path`` (symbolic links followed) and
    its status; ``NotRegularFile`` for anything else, ``OSError`` when it cannot be opened.
    The descriptor is blocking again: reading a regular file never waits."""
    fd = os.open(path, _FLAGS)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise NotRegularFile(errno.EINVAL, "not a regular file", str(path))
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd, info


def read_regular(path: Path | str | os.PathLike[str], limit: int) -> bytes:
    """The bytes of the regular file ``path``; ``FileTooLarge`` past ``limit`` bytes (also
    when it grew past it while being read), ``NotRegularFile``, or the ``OSError`` of
    opening it (``FileNotFoundError``...)."""
    fd, info = open_regular(path)
    try:
        if info.st_size > limit:
            raise FileTooLarge(path, info.st_size, limit)
        chunks: list[bytes] = []
        left = limit + 1
        while left > 0:
            chunk = os.read(fd, min(left, CHUNK))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        data = b"".join(chunks)
        if len(data) > limit:
            raise FileTooLarge(path, os.fstat(fd).st_size, limit)
        return data
    finally:
        os.close(fd)


def read_if_regular(path: Path | str | os.PathLike[str], limit: int) -> bytes | None:
    """``read_regular``, or None when the file is missing, not a regular file, over
    ``limit`` bytes or unreadable: for readers to whom all of those mean "not there"."""
    try:
        return read_regular(path, limit)
    except (OSError, ValueError):
        return None
