"""The model client's asyncio network streams under httpx: TLS, large bodies, kept
connections, timeouts (the offline model covers plain HTTP streaming and errors)."""

from __future__ import annotations

import asyncio
import datetime
import ssl
from collections.abc import AsyncIterator
from pathlib import Path

import httpx2
import openai
import pytest

from wave_ls.runtime.asyncio_network import AsyncioTransport

BODY = b"x" * 600_000  # past the buffer's high-water mark: reading pauses and resumes


def self_signed(directory: Path) -> tuple[Path, Path]:
    """A certificate for ``localhost`` and its key (PEM files)."""
    x509 = pytest.importorskip("cryptography.x509")
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "localhost")])
    now = datetime.datetime.now(datetime.UTC)
    certificate = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost")]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = directory / "cert.pem", directory / "key.pem"
    cert_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Answers each request on a kept connection; ``/silent`` sends headers, then nothing."""
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            if head.startswith(b"GET /silent"):
                writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n")
                await writer.drain()
                await asyncio.sleep(30)
                return
            writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % len(BODY) + BODY)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass
    finally:
        writer.close()


@pytest.fixture
async def tls_server(tmp_path: Path) -> AsyncIterator[tuple[int, Path]]:
    cert, key = self_signed(tmp_path)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    server = await asyncio.start_server(serve, "127.0.0.1", 0, ssl=context)
    yield server.sockets[0].getsockname()[1], cert
    server.close()


def transport(verify: ssl.SSLContext | bool) -> AsyncioTransport:
    return AsyncioTransport(verify=verify, limits=openai.DEFAULT_CONNECTION_LIMITS)


async def test_tls_bodies_arrive_whole_and_the_connection_is_kept(
    tls_server: tuple[int, Path],
) -> None:
    port, cert = tls_server
    trusted = ssl.create_default_context(cafile=str(cert))
    async with httpx2.AsyncClient(transport=transport(trusted)) as client:
        first = await client.get(f"https://localhost:{port}/one")
        second = await client.get(f"https://localhost:{port}/two")
    assert first.status_code == second.status_code == 200
    assert first.content == BODY and second.content == BODY
    assert first.extensions["network_stream"] is second.extensions["network_stream"]


async def test_an_untrusted_certificate_is_refused(tls_server: tuple[int, Path]) -> None:
    port, _ = tls_server
    async with httpx2.AsyncClient(transport=transport(True)) as client:
        with pytest.raises(httpx2.ConnectError, match="CERTIFICATE_VERIFY_FAILED"):
            await client.get(f"https://localhost:{port}/")


async def test_a_silent_server_times_the_read_out(tls_server: tuple[int, Path]) -> None:
    port, cert = tls_server
    trusted = ssl.create_default_context(cafile=str(cert))
    timeout = httpx2.Timeout(5.0, read=0.3)
    async with httpx2.AsyncClient(transport=transport(trusted), timeout=timeout) as client:
        with pytest.raises(httpx2.ReadTimeout):
            await client.get(f"https://localhost:{port}/silent")


async def test_a_refused_connection_is_a_connect_error() -> None:
    probe = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)
    port = probe.sockets[0].getsockname()[1]
    probe.close()
    await probe.wait_closed()
    async with httpx2.AsyncClient(transport=transport(True)) as client:
        with pytest.raises(httpx2.ConnectError):
            await client.get(f"http://127.0.0.1:{port}/")
