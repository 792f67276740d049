"""A TCP relay that timestamps each request it passes to a model server.

    python benchmarks/timing_relay.py HOST PORT

Listens on 127.0.0.1 (prints ``listening on <port>``) and forwards every connection to
``HOST:PORT``. For each request it prints ``<last> <done>``: ``time.perf_counter()`` when
the request's last byte arrived and when the response's ``data: [DONE]`` was passed on. On
Linux that clock is the system's monotonic clock, so the client's own readings compare with
it: ``(last - sent) + (returned - done)`` is the client's own time in a round, whatever the
server took. ``bench_models.py`` runs it in its own process, so its work shares no GIL with
the client it times.
"""

from __future__ import annotations

import asyncio
import sys
import time

DONE = b"data: [DONE]"


async def relay(upstream_host: str, upstream_port: int) -> None:
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        up_reader, up_writer = await asyncio.open_connection(upstream_host, upstream_port)
        last = 0.0

        async def to_server() -> None:
            nonlocal last
            while data := await reader.read(65536):
                last = time.perf_counter()
                up_writer.write(data)
                await up_writer.drain()
            up_writer.close()

        async def to_client() -> None:
            tail = b""
            while data := await up_reader.read(65536):
                writer.write(data)
                if DONE in tail + data:
                    print(f"{last} {time.perf_counter()}", flush=True)
                tail = data[-len(DONE) :]
                await writer.drain()
            writer.close()

        try:
            await asyncio.gather(to_server(), to_client())
        except OSError:  # a client that stops reading after [DONE] closes early
            pass
        finally:
            writer.close()
            up_writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    print(f"listening on {server.sockets[0].getsockname()[1]}", flush=True)
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(relay(sys.argv[1], int(sys.argv[2])))
