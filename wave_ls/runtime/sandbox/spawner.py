"""Starting confined commands through a helper process that is itself confined.

Applying Landlock in the child between fork and exec (``preexec_fn``) makes Python fork
the whole server instead of using vfork: that copies the server's page tables, so each
command pays for the server's size (measured: +5.4 ms per command at 80 MB, the server's
size with its libraries loaded; ``benchmarks/bench_sandbox.py``). Instead, each sandbox
starts one small helper (``zygote.py``, ~10 MB) inside the confinement, once; the helper
starts each command with ``posix_spawn``, which inherits the confinement (Landlock's domain,
bubblewrap's namespace) at vfork speed: +0.2 ms per command.

Protocol over a Unix socket pair: a request is ``HEADER`` (payload length, descriptor
count) + JSON ``{path, argv, env, cwd}``, with the command's output descriptor attached
(``SCM_RIGHTS``); the helper answers one JSON line ``{"spawned": pid}`` or ``{"error":
errno, "message"}`` per request, and ``{"exited": pid, "code": n}`` when a command ends
(``code`` as ``Popen.returncode``: negative for a signal). Closing our end of the socket
for writing tells it no more requests will come: it ends once its commands have.
"""

from __future__ import annotations

import array
import asyncio
import contextlib
import json
import logging
import os
import shutil
import socket
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from wave_ls.runtime.sandbox.zygote import HEADER

log = logging.getLogger(__name__)

ZYGOTE_SCRIPT = Path(__file__).with_name("zygote.py")
# An exit code for a command whose helper died before it could report one.
UNKNOWN_EXIT = -1
POLL_S = 0.05


class SpawnedProcess:
    """A command started by the helper: what callers use of ``asyncio.subprocess.Process``
    (``pid``, ``returncode``, ``wait()``)."""

    def __init__(self, pid: int, ended: asyncio.Future[int]) -> None:
        self.pid = pid
        self._ended = ended

    @property
    def returncode(self) -> int | None:
        return self._ended.result() if self._ended.done() else None

    async def wait(self) -> int:
        return await asyncio.shield(self._ended)


class Spawner:
    """One sandbox's helper process, started on the first ``spawn``.

    ``start`` turns the helper's command line into the confined one (``Confinement.argv``);
    ``preexec`` confines it between fork and exec (Landlock); ``watch(pid)`` is called for
    the helper and every command (the process-group reaper).
    """

    def __init__(
        self,
        start: Callable[[list[str]], list[str]],
        preexec: Callable[[], None] | None,
        watch: Callable[[int], None] = lambda _pid: None,
    ) -> None:
        self._start = start
        self._preexec = preexec
        self._watch = watch
        self._sock: socket.socket | None = None
        self._helper: subprocess.Popen[bytes] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._buffer = b""
        self._replies: asyncio.Queue[dict[str, object]] | None = None
        self._ends: dict[int, asyncio.Future[int]] = {}
        self._early: dict[int, int] = {}  # exits reported before we saw the pid
        self._lock: asyncio.Lock | None = None
        self._closed = False

    async def spawn(
        self, argv: Sequence[str], *, cwd: Path, env: Mapping[str, str], output: int
    ) -> SpawnedProcess:
        """Start ``argv`` in its own session inside the sandbox, stdin ``/dev/null``, stdout
        and stderr to ``output``. Raises ``OSError`` as ``Popen`` would."""
        if self._closed:
            raise OSError("this sandbox is closed")
        path = shutil.which(argv[0], path=env.get("PATH", os.defpath)) or argv[0]
        payload = json.dumps(
            {"path": path, "argv": list(argv), "env": dict(env), "cwd": str(cwd)}
        ).encode()
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:  # one request at a time: replies come in order
            replies = self._connect()
            frame = HEADER.pack(len(payload), 1) + payload
            rights = [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", [output]))]
            try:
                assert self._sock is not None
                self._sock.sendmsg([frame], rights)
                reply = await replies.get()
            except (OSError, EOFError) as error:
                self._lost(f"the sandbox helper is gone ({error})")
                raise OSError(f"cannot start the command in the sandbox: {error}") from error
        if "error" in reply:
            code = int(str(reply["error"]))
            message = str(reply.get("message") or os.strerror(code))
            filename = reply.get("filename")
            if filename is None:
                raise OSError(code, message)
            raise OSError(code, message, str(filename))
        pid = int(str(reply["spawned"]))
        self._watch(pid)
        assert self._loop is not None
        ended: asyncio.Future[int] = self._loop.create_future()
        if pid in self._early:
            ended.set_result(self._early.pop(pid))
        else:
            self._ends[pid] = ended
        return SpawnedProcess(pid, ended)

    def warm(self) -> None:
        """Start the helper now (on the event loop), so the first command does not wait for
        its ~40 ms start."""
        if not self._closed:
            self._connect()

    def close(self) -> None:
        """No more commands: the helper ends once those it started have (their exits are
        still reported)."""
        self._closed = True
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.shutdown(socket.SHUT_WR)

    @property
    def running(self) -> int:
        """How many of the commands it started have not ended yet."""
        return len(self._ends)

    @property
    def helper_pid(self) -> int | None:
        return self._helper.pid if self._helper is not None else None

    # ------------------------------------------------------------------ internals

    def _connect(self) -> asyncio.Queue[dict[str, object]]:
        loop = asyncio.get_running_loop()
        if self._sock is not None and self._replies is not None and self._loop is loop:
            return self._replies
        if self._sock is not None:  # a helper from another event loop (tests): start anew
            self._lost("the event loop changed")
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            helper = subprocess.Popen(
                self._start([sys.executable, "-I", "-S", str(ZYGOTE_SCRIPT), str(theirs.fileno())]),
                pass_fds=[theirs.fileno()],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                preexec_fn=self._preexec,
                start_new_session=True,
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        self._watch(helper.pid)
        self._sock, self._helper, self._loop = ours, helper, loop
        self._buffer, self._replies = b"", asyncio.Queue()
        loop.add_reader(ours.fileno(), self._readable)
        return self._replies

    def _readable(self) -> None:
        assert self._sock is not None
        try:
            chunk = self._sock.recv(1 << 16)
        except BlockingIOError:
            return
        except OSError:
            chunk = b""
        if not chunk:
            self._lost("the sandbox helper ended")
            return
        self._buffer += chunk
        *lines, self._buffer = self._buffer.split(b"\n")
        for line in lines:
            message = json.loads(line)
            if "exited" in message:
                pid, code = int(message["exited"]), int(message["code"])
                ended = self._ends.pop(pid, None)
                if ended is None:
                    self._early[pid] = code
                elif not ended.done():
                    ended.set_result(code)
            elif self._replies is not None:
                self._replies.put_nowait(message)

    def _lost(self, why: str) -> None:
        """The helper is gone: its commands may still run (orphans); each is taken as ended
        (exit code unknown) once its pid is gone. The next ``spawn`` starts a new helper."""
        sock, helper, loop, replies = self._sock, self._helper, self._loop, self._replies
        self._sock = self._helper = self._replies = None
        if sock is not None:
            if loop is not None and not loop.is_closed():
                loop.remove_reader(sock.fileno())
            sock.close()
        if helper is not None and helper.poll() is None:
            # Reap it when it has ended (it does once its commands have): no zombie left.
            threading.Thread(target=helper.wait, name="wave-sandbox-reap", daemon=True).start()
        if replies is not None:
            # A spawn waiting for its answer gets an EOF instead.
            replies.put_nowait({"error": 0, "message": why})
        pending, self._ends = self._ends, {}
        if pending and not self._closed:
            log.warning("%s; the exit codes of %d running commands are unknown", why, len(pending))
        for pid, ended in pending.items():
            if loop is not None and not loop.is_closed():
                loop.create_task(_await_gone(pid, ended))


async def _await_gone(pid: int, ended: asyncio.Future[int]) -> None:
    while not ended.done():
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            ended.set_result(UNKNOWN_EXIT)
            return
        except PermissionError:
            pass
        await asyncio.sleep(POLL_S)
