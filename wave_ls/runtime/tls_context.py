"""The TLS context of the SDK's HTTP client, built in a thread while the process starts.

Building it is OpenSSL reading the system's certificates (~45 ms here), which runs outside
the GIL: a process that calls ``prepare`` first, then imports the SDK and everything else,
gets the context for free, where a client built without it pays that time just before its
first model request. The context is httpx's own default (``httpx2.create_ssl_context()``,
``SSL_CERT_FILE``/``SSL_CERT_DIR`` included), so the client behaves as it would anyway.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import ssl

_done = threading.Event()
_started = False
_context: ssl.SSLContext | None = None


def prepare() -> None:
    """Start building the context (once per process). The HTTP client's modules are
    imported here, in the caller's thread (the SDK imports them anyway): only OpenSSL's
    work runs in the thread, so the two never wait for each other's imports or the GIL."""
    global _started
    if _started:
        return
    _started = True
    try:
        import httpcore2  # noqa: F401  (what create_ssl_context imports)
        import httpx2  # the openai SDK's HTTP client (openai 3.x)
    except ImportError:  # the SDK then builds its own client, and says what is missing
        _done.set()
        return
    threading.Thread(
        target=_build, args=(httpx2.create_ssl_context,), name="wave-tls-context", daemon=True
    ).start()


def _build(create: Callable[[], ssl.SSLContext]) -> None:
    global _context
    try:
        _context = create()
    except Exception:  # the SDK then builds its own, and reports what is wrong there
        _context = None
    finally:
        _done.set()


def prepared() -> ssl.SSLContext | None:
    """The context ``prepare`` built (waiting for it), or None when none was prepared."""
    if not _started:
        return None
    _done.wait()
    return _context


def client_options() -> dict[str, Any]:
    """Extra ``openai.AsyncOpenAI`` arguments: an HTTP client with the prepared context, or
    nothing when none was prepared (the SDK's own default client)."""
    context = prepared()
    if context is None:
        return {}
    import openai

    return {"http_client": openai.DefaultAsyncHttpxClient(verify=context)}
