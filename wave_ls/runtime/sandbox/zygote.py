"""The spawner inside a sandbox: started confined once, it starts every command of that
sandbox with ``posix_spawn``, so each command inherits the confinement without the server
forking itself (``spawner.py`` is the other end; the protocol is described there).

Run as ``python -I -S zygote.py <socket fd>``: it imports nothing of wave_ls and writes
nothing. It ends when the socket says no more requests will come (or the server is gone)
and every command it started has ended.
"""

import contextlib
import json
import os
import select
import signal
import socket
import struct
import sys
from typing import Any

HEADER = struct.Struct("!II")  # payload length, number of descriptors that come with it
MAX_FDS = 4


def main(fd: int) -> None:
    sock = socket.socket(fileno=fd)
    os.set_inheritable(fd, False)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    children: set[int] = set()
    data, accepting = b"", True
    fds: list[int] = []

    def send(message: dict[str, object]) -> None:
        with contextlib.suppress(OSError):  # the server is gone: nobody to tell
            sock.sendall(json.dumps(message).encode() + b"\n")

    while accepting or children:
        watched = [wake_r, sock.fileno()] if accepting else [wake_r]
        ready, _, _ = select.select(watched, [], [])
        if wake_r in ready:
            os.read(wake_r, 4096)
            while children:
                try:
                    pid, status = os.waitpid(-1, os.WNOHANG)
                except ChildProcessError:
                    children.clear()
                    break
                if pid == 0:
                    break
                children.discard(pid)
                send({"exited": pid, "code": os.waitstatus_to_exitcode(status)})
        if sock.fileno() in ready:
            chunk, ancillary, _flags, _addr = sock.recvmsg(
                1 << 16, socket.CMSG_SPACE(MAX_FDS * 4), socket.MSG_CMSG_CLOEXEC
            )
            if not chunk:
                accepting = False
                continue
            data += chunk
            for level, kind, payload in ancillary:
                if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                    usable = len(payload) - len(payload) % 4
                    fds += list(struct.unpack(f"{usable // 4}i", payload[:usable]))
            while len(data) >= HEADER.size:
                length, count = HEADER.unpack_from(data)
                if len(data) < HEADER.size + length or len(fds) < count:
                    break
                request = json.loads(data[HEADER.size : HEADER.size + length])
                data = data[HEADER.size + length :]
                given, fds = fds[:count], fds[count:]
                try:
                    pid = spawn(request, given)
                except OSError as error:
                    filename = None if error.filename is None else str(error.filename)
                    message = error.strerror or str(error)
                    send({"error": error.errno or 0, "message": message, "filename": filename})
                else:
                    children.add(pid)
                    send({"spawned": pid})
                finally:
                    for descriptor in given:
                        os.close(descriptor)


def spawn(request: dict[str, Any], fds: list[int]) -> int:
    """``posix_spawn`` the command: its own session, stdin ``/dev/null``, stdout and stderr
    the descriptor it came with, in its working directory."""
    output = fds[0]
    os.chdir(request["cwd"])  # inherited by the command; this process is single-threaded
    return os.posix_spawn(
        request["path"],
        request["argv"],
        request["env"],
        setsid=True,
        file_actions=[
            (os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
            (os.POSIX_SPAWN_DUP2, output, 1),
            (os.POSIX_SPAWN_DUP2, output, 2),
        ],
    )


if __name__ == "__main__":
    main(int(sys.argv[1]))
