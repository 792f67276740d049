"""Landlock (Linux >= 5.13): an unprivileged process restricts itself and every process it
starts afterwards. Used here to confine writes: the ruleset handles every right that changes
the file system (reads and execution stay unrestricted) and grants them beneath the allowed
trees only. A ruleset without network (``network=False``, ABI >= 4) also handles TCP
``connect`` and ``bind`` with no rule, so both are refused, scopes abstract Unix sockets to
the sandbox (ABI >= 6), and adds a seccomp filter against every IP socket (``seccomp.py``:
Landlock leaves UDP, so DNS, open).

The ruleset is built once in the parent (``LandlockRuleset``); a child applies it between
fork and exec with two system calls (``no_new_privs`` and ``landlock_restrict_self``), so a
confined command costs no extra process.
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct
from collections.abc import Iterable
from pathlib import Path

from wave_ls.runtime.sandbox.seccomp import NoInetFilter, SeccompError

# The system call numbers are the same on every architecture that has Landlock (the
# generic table, x86_64 included).
_SYS_CREATE_RULESET = 444
_SYS_ADD_RULE = 445
_SYS_RESTRICT_SELF = 446
_CREATE_RULESET_VERSION = 1 << 0
_RULE_PATH_BENEATH = 1
_PR_SET_NO_NEW_PRIVS = 38

# Access rights (include/uapi/linux/landlock.h); the ABI that introduced each.
WRITE_FILE = 1 << 1
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13  # ABI 2: links and renames across directories
TRUNCATE = 1 << 14  # ABI 3
NET_BIND_TCP = 1 << 0  # ABI 4 (handled_access_net)
NET_CONNECT_TCP = 1 << 1
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6 (scoped)
NETWORK_ABI = 4

_WRITE_ABI1 = (
    WRITE_FILE
    | REMOVE_DIR
    | REMOVE_FILE
    | MAKE_CHAR
    | MAKE_DIR
    | MAKE_REG
    | MAKE_SOCK
    | MAKE_FIFO
    | MAKE_BLOCK
    | MAKE_SYM
)

_libc = ctypes.CDLL(None, use_errno=True)
_syscall = _libc.syscall
_prctl = _libc.prctl


def abi_version() -> int:
    """The kernel's Landlock ABI version, 0 when Landlock is missing or disabled."""
    if platform.system() != "Linux":
        return 0
    version = _syscall(
        _SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_RULESET_VERSION)
    )
    return max(0, int(version))


def write_rights(abi: int) -> int:
    """Every file-system right that changes something, as far as ``abi`` knows them."""
    rights = _WRITE_ABI1
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    return rights


class LandlockError(OSError):
    """The ruleset could not be built."""


class LandlockRuleset:
    """Writes allowed beneath ``writable`` (everything) and to device files under ``/dev``
    (``/dev/null``, terminals); everything else may be read and run, never changed.
    ``writable=None``: writes are not restricted. ``network=False``: no IP networking
    (TCP refused by Landlock, every IP socket by the seccomp filter); ``LandlockError``
    below ABI 4 or where the filter cannot be built."""

    def __init__(
        self, writable: Iterable[Path] | None, abi: int | None = None, *, network: bool = True
    ) -> None:
        self.abi = abi if abi is not None else abi_version()
        if self.abi < 1:
            raise LandlockError(errno.EOPNOTSUPP, "Landlock is not available in this kernel")
        self.network = network
        self._filter: NoInetFilter | None = None
        handled = write_rights(self.abi) if writable is not None else 0
        fields = [handled]
        if not network:
            if self.abi < NETWORK_ABI:
                raise LandlockError(
                    errno.EOPNOTSUPP, f"Landlock ABI {self.abi} cannot restrict the network"
                )
            try:
                self._filter = NoInetFilter()
            except SeccompError as error:
                raise LandlockError(error.errno, str(error)) from error
            fields.append(NET_BIND_TCP | NET_CONNECT_TCP)
            if self.abi >= 6:
                fields.append(SCOPE_ABSTRACT_UNIX_SOCKET)
        attr = ctypes.create_string_buffer(struct.pack(f"={len(fields)}Q", *fields))
        fd = _syscall(
            _SYS_CREATE_RULESET, attr, ctypes.c_size_t(8 * len(fields)), ctypes.c_uint32(0)
        )
        if fd < 0:
            code = ctypes.get_errno()
            raise LandlockError(code, f"landlock_create_ruleset: {os.strerror(code)}")
        self.fd = int(fd)
        try:
            for path in writable or ():
                self._allow(Path(path), handled)
            if writable is not None:
                self._allow(Path("/dev"), WRITE_FILE | (TRUNCATE if self.abi >= 3 else 0))
        except BaseException:
            self.close()
            raise

    def _allow(self, path: Path, rights: int) -> None:
        try:
            parent = os.open(path, os.O_PATH | os.O_CLOEXEC)
        except FileNotFoundError:
            return  # nothing there to write into
        try:
            rule = ctypes.create_string_buffer(struct.pack("=Qi", rights, parent))
            done = _syscall(
                _SYS_ADD_RULE,
                ctypes.c_int(self.fd),
                ctypes.c_int(_RULE_PATH_BENEATH),
                rule,
                ctypes.c_uint32(0),
            )
            if done != 0:
                code = ctypes.get_errno()
                raise LandlockError(code, f"landlock_add_rule {path}: {os.strerror(code)}")
        finally:
            os.close(parent)

    def restrict_self(self) -> None:
        """Confine the calling process (the child, between fork and exec). Exits the child
        with status 126 when it cannot: a command must never run unconfined by mistake."""
        if _prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            os._exit(126)
        if _syscall(_SYS_RESTRICT_SELF, ctypes.c_int(self.fd), ctypes.c_uint32(0)) != 0:
            os._exit(126)
        if self._filter is not None:
            try:
                self._filter.install()
            except SeccompError:
                os._exit(126)

    def restrict_thread(self) -> None:
        """Confine the calling thread and what it starts from now on: ``no_new_privs`` and a
        Landlock domain belong to a thread, not to the process. A thread that exists only to
        start commands can then start them with vfork, where ``preexec_fn`` makes Python
        fork the whole server. Raises ``LandlockError`` when it cannot."""
        if _prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            code = ctypes.get_errno()
            raise LandlockError(code, f"no_new_privs: {os.strerror(code)}")
        if _syscall(_SYS_RESTRICT_SELF, ctypes.c_int(self.fd), ctypes.c_uint32(0)) != 0:
            code = ctypes.get_errno()
            raise LandlockError(code, f"landlock_restrict_self: {os.strerror(code)}")
        if self._filter is not None:
            try:
                self._filter.install()
            except SeccompError as error:
                raise LandlockError(error.errno, str(error)) from error

    def close(self) -> None:
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1
