"""WebFetch and WebSearch against a real HTTP server on 127.0.0.1."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from wave_ls.runtime.core import ToolContext, ToolError
from wave_ls.runtime.tools import WebFetchTool, WebSearchTool
from wave_ls.runtime.tools.web_fetch import MAX_BYTES, fetch
from wave_ls.runtime.tools.web_search import ENV_URL

PAGE = """<!doctype html><html><head><title>Release notes</title>
<style>body { color: red }</style><script>alert("no")</script></head>
<body><h1>Version 2.0</h1><p>Faster <b>search</b> and <a href="/docs">new docs</a>.</p>
<ul><li>one</li><li>two</li></ul></body></html>"""

SEARCH = {
    "results": [
        {"title": "Python docs", "url": "https://docs.python.org/3/", "content": "Official"},
        {"title": "Spam", "url": "https://spam.example.com/x", "content": "Buy"},
        {"title": "PyPI", "url": "https://pypi.org/project/x", "content": "Packages"},
    ]
}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
        pass

    def send(self, status: int, body: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        url = urlsplit(self.path)
        if url.path == "/page":
            self.send(200, PAGE.encode(), "text/html; charset=utf-8")
        elif url.path == "/text":
            self.send(200, "plain ünïcode text\n".encode("latin-1"), "text/plain; charset=latin-1")
        elif url.path == "/data.json":
            self.send(200, b'{"a": 1}', "application/json")
        elif url.path == "/image.png":
            self.send(200, b"\x89PNG\r\n", "image/png")
        elif url.path == "/redirect":
            self.send_response(302)
            self.send_header("Location", "/page")
            self.send_header("Content-Length", "0")
            self.end_headers()
        elif url.path == "/big":
            self.send(200, b"x" * (MAX_BYTES + 100_000), "text/plain")
        elif url.path == "/slow":
            time.sleep(2)  # the behaviour under test: a server slower than the fetch's limit
            self.send(200, b"late", "text/plain")
        elif url.path == "/search":
            query = parse_qs(url.query).get("q", [""])[0]
            body = dict(SEARCH, query=query)
            self.send(200, json.dumps(body).encode(), "application/json")
        elif url.path == "/notjson":
            self.send(200, b"<html>oops</html>", "text/html")
        else:
            self.send(404, b"not found", "text/plain")


@pytest.fixture(scope="module")
def server() -> Iterator[str]:
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path, home=tmp_path)


# ------------------------------------------------------------------ WebFetch


async def test_fetch_html_becomes_readable_text(server: str, ctx: ToolContext) -> None:
    result = await WebFetchTool().run({"url": f"{server}/page", "prompt": "What is new?"}, ctx)
    assert f"Content of {server}/page:" in result.content
    assert "# Version 2.0" in result.content
    assert f"[new docs]({server}/docs)" in result.content
    assert "- one\n- two" in result.content
    assert "alert" not in result.content and "color: red" not in result.content
    assert result.content.endswith("Use this content to answer: What is new?")
    assert result.short_result.startswith(f"Fetched {server}/page (200,")


async def test_fetch_plain_text_and_json_as_they_are(server: str, ctx: ToolContext) -> None:
    text = await WebFetchTool().run({"url": f"{server}/text"}, ctx)
    assert "plain ünïcode text" in text.content  # the declared charset is honoured
    data = await WebFetchTool().run({"url": f"{server}/data.json"}, ctx)
    assert data.content.endswith('{"a": 1}')


async def test_fetch_follows_redirects(server: str, ctx: ToolContext) -> None:
    result = await WebFetchTool().run({"url": f"{server}/redirect"}, ctx)
    assert f"Content of {server}/page (redirected from {server}/redirect)" in result.content


async def test_fetch_caps_the_download(server: str, ctx: ToolContext) -> None:
    result = await WebFetchTool().run({"url": f"{server}/big"}, ctx)
    assert "the download stopped at 2 MB" in result.content
    assert "the text was cut at" in result.content


async def test_fetch_time_cap(server: str) -> None:
    started = time.monotonic()
    with pytest.raises(ToolError, match=r"timed out after 0.3 s"):
        await fetch(f"{server}/slow", timeout_s=0.3)
    assert time.monotonic() - started < 1.5


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("file:///etc/passwd", "only http:// and https:// URLs"),
        ("ftp://example.com/x", "only http:// and https:// URLs"),
        ("not a url", "only http:// and https:// URLs"),
        ("http://", "it has no host"),
    ],
)
async def test_fetch_refuses_other_schemes(ctx: ToolContext, url: str, message: str) -> None:
    with pytest.raises(ToolError, match=message):
        await WebFetchTool().run({"url": url}, ctx)


async def test_fetch_http_errors_and_binary_content(server: str, ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="HTTP 404"):
        await WebFetchTool().run({"url": f"{server}/missing"}, ctx)
    with pytest.raises(ToolError, match="is image/png, not text"):
        await WebFetchTool().run({"url": f"{server}/image.png"}, ctx)


async def test_fetch_unreachable_host(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="Could not fetch"):
        await WebFetchTool().run({"url": "http://127.0.0.1:1/"}, ctx)


async def test_fetch_requires_url(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="Missing required parameter 'url'"):
        await WebFetchTool().run({}, ctx)


# ------------------------------------------------------------------ WebSearch


async def test_search_not_configured_says_how(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(ENV_URL, raising=False)
    with pytest.raises(ToolError, match=f"WebSearch is not configured: set {ENV_URL}"):
        await WebSearchTool().run({"query": "python"}, ctx)


async def test_search_through_the_url_template(
    server: str, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_URL, f"{server}/search?format=json&q={{query}}")
    result = await WebSearchTool().run({"query": "python docs"}, ctx)
    assert result.content.startswith('Web search results for "python docs":')
    assert "1. Python docs\n   https://docs.python.org/3/\n   Official" in result.content
    assert result.short_result == "Search 'python docs': 3 results"


async def test_search_domain_filters(
    server: str, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_URL, f"{server}/search?q={{query}}")
    blocked = await WebSearchTool().run({"query": "x", "blocked_domains": ["example.com"]}, ctx)
    assert "spam.example.com" not in blocked.content
    assert "pypi.org" in blocked.content
    allowed = await WebSearchTool().run({"query": "x", "allowed_domains": ["python.org"]}, ctx)
    assert [r["url"] for r in allowed.details["results"]] == ["https://docs.python.org/3/"]


async def test_search_service_that_is_not_json(
    server: str, ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_URL, f"{server}/notjson?q={{query}}")
    with pytest.raises(ToolError, match="did not return JSON"):
        await WebSearchTool().run({"query": "x"}, ctx)


class Provider:
    async def search(self, query: str) -> list[dict[str, Any]]:
        return [{"title": f"About {query}", "url": "https://a.org/", "snippet": "s"}]


async def test_search_prefers_the_session_provider(
    ctx: ToolContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(ENV_URL, "http://127.0.0.1:1/never?q={query}")
    ctx.services = replace(ctx.services, web_search=Provider())
    result = await WebSearchTool().run({"query": "wave"}, ctx)
    assert "1. About wave\n   https://a.org/" in result.content
