"""A real listener on 127.0.0.1 (TCP and UDP on the same port number) that records every
connection and datagram it gets: what a command in a test must not be able to reach."""

from __future__ import annotations

import contextlib
import select
import socket
import threading
from collections.abc import Iterator


class Listener:
    """``port`` listens for TCP and UDP; ``received`` is everything that came (one entry per
    connection or datagram), ``connections`` the number of TCP connections accepted."""

    def __init__(self) -> None:
        self.tcp = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.tcp.bind(("127.0.0.1", 0))
        self.tcp.listen(16)
        self.port = self.tcp.getsockname()[1]
        self.udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        self.udp.bind(("127.0.0.1", self.port))
        self.received: list[bytes] = []
        self.connections = 0
        self.got = threading.Event()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, name="test-listener", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            ready, _, _ = select.select([self.tcp, self.udp], [], [], 0.05)
            if self.udp in ready:
                data, _ = self.udp.recvfrom(65536)
                self.received.append(data)
                self.got.set()
            if self.tcp in ready:
                conn, _ = self.tcp.accept()
                self.connections += 1
                self.got.set()
                conn.settimeout(2)
                chunks = b""
                with contextlib.suppress(OSError):
                    while b"\r\n\r\n" not in chunks and len(chunks) < 65536:
                        chunk = conn.recv(65536)
                        if not chunk:
                            break
                        chunks += chunk
                    # An HTTP answer, so curl and git end at once.
                    conn.sendall(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n")
                conn.close()
                self.received.append(chunks)

    def close(self) -> None:
        """Stop, then count what still waits in the queues (a connection the kernel took
        that was not accepted yet is a connection all the same)."""
        self._stop.set()
        self._thread.join(5)
        self.tcp.setblocking(False)
        self.udp.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            while True:
                conn, _ = self.tcp.accept()
                self.connections += 1
                self.received.append(b"(connected)")
                conn.close()
        with contextlib.suppress(BlockingIOError):
            while True:
                self.received.append(self.udp.recv(65536))
        self.tcp.close()
        self.udp.close()


@contextlib.contextmanager
def listening() -> Iterator[Listener]:
    listener = Listener()
    try:
        yield listener
    finally:
        listener.close()
