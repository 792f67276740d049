"""``WebFetch``: fetch a URL (http/https) and return its content as readable text."""

from __future__ import annotations

import asyncio
import importlib
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from wave_ls.runtime.core import Effect, ToolContext, ToolError, ToolKind, ToolResult
from wave_ls.runtime.tool_names import WaveTool
from wave_ls.runtime.tools.args import optional_str, require_str

MAX_BYTES = 2 * 1024 * 1024
TIMEOUT_S = 30.0
MAX_TEXT_CHARS = 100_000
USER_AGENT = "wave-ls/0.1 (WebFetch)"
TEXT_TYPES = ("text/", "application/json", "application/xml", "application/xhtml", "+json", "+xml")

DESCRIPTION = f"""\
Fetches content from a URL and returns it as readable text.

Usage:
- url must be a fully-formed http:// or https:// URL.
- HTML pages are converted to Markdown-like text (scripts and styles removed); plain text, \
JSON and XML are returned as they are. Other content types (images, PDFs, archives) are refused.
- prompt: what you want to learn from the page; it is returned with the content to guide \
your reading.
- Limits: {MAX_BYTES // (1024 * 1024)} MB downloaded, {TIMEOUT_S:g} seconds, \
{MAX_TEXT_CHARS} characters of text returned.
- Redirects are followed. This tool is read-only and does not modify any files.
- For GitHub content prefer the `gh` CLI through Bash when it is available."""


@dataclass
class Page:
    url: str  # after redirects
    status: int
    content_type: str
    body: bytes
    truncated: bool
    encoding: str


def check_url(url: str) -> str:
    """Only absolute http(s) URLs with a host."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https"):
        raise ToolError(
            f"Unsupported URL scheme {parts.scheme or '(none)'!r} in {url!r}: "
            "only http:// and https:// URLs can be fetched"
        )
    if not parts.hostname:
        raise ToolError(f"Invalid URL {url!r}: it has no host")
    return url.strip()


def _http() -> Any:
    """httpx2 (the openai SDK's HTTP client), or httpx (older SDKs; the same API)."""
    try:
        return importlib.import_module("httpx2")
    except ImportError:
        return importlib.import_module("httpx")


async def fetch(url: str, max_bytes: int = MAX_BYTES, timeout_s: float = TIMEOUT_S) -> Page:
    """GET ``url`` following redirects, reading at most ``max_bytes`` within ``timeout_s``."""
    http = _http()
    try:
        async with asyncio.timeout(timeout_s):
            async with (
                http.AsyncClient(
                    follow_redirects=True,
                    max_redirects=10,
                    timeout=timeout_s,
                    headers={
                        "User-Agent": USER_AGENT,
                        "Accept": "text/html, text/*;q=0.9, */*;q=0.5",
                    },
                ) as client,
                client.stream("GET", url) as response,
            ):
                body = bytearray()
                truncated = False
                async for chunk in response.aiter_bytes():
                    body += chunk
                    if len(body) >= max_bytes:
                        del body[max_bytes:]
                        truncated = True
                        break
                return Page(
                    str(response.url),
                    response.status_code,
                    response.headers.get("content-type", ""),
                    bytes(body),
                    truncated,
                    response.charset_encoding or "utf-8",
                )
    except TimeoutError as error:
        raise ToolError(f"Fetching {url} timed out after {timeout_s:g} s") from error
    except (http.HTTPError, http.InvalidURL) as error:
        raise ToolError(f"Could not fetch {url}: {error or type(error).__name__}") from error


def page_text(page: Page) -> str:
    kind = page.content_type.split(";")[0].strip().lower()
    if kind and not any(marker in kind for marker in TEXT_TYPES):
        raise ToolError(
            f"{page.url} is {kind}, not text; WebFetch returns only HTML, text, JSON or XML"
        )
    try:
        text = page.body.decode(page.encoding, errors="replace")
    except LookupError:
        text = page.body.decode("utf-8", errors="replace")
    looks_html = kind in ("text/html", "application/xhtml+xml") or (
        not kind and text.lstrip()[:15].lower().startswith(("<!doctype html", "<html"))
    )
    if not looks_html:
        return text
    from wave_ls.runtime.tools.html_text import html_to_text  # html.parser: only when needed

    return html_to_text(text, page.url)


PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "url": {"type": "string", "format": "uri", "description": "The URL to fetch"},
        "prompt": {
            "type": "string",
            "description": "What to look for in the fetched content",
        },
    },
    "required": ["url"],
    "additionalProperties": False,
}


class WebFetchTool:
    """Fetches a web page as text (see ``DESCRIPTION``)."""

    name = WaveTool.WEB_FETCH.value
    description = DESCRIPTION
    effect: Effect = "read"
    kind: ToolKind = "fetch"
    key_argument: str | None = "url"
    concurrency_safe = True
    parameters = PARAMETERS

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        url = check_url(require_str(args, "url", allow_empty=False))
        prompt = optional_str(args, "prompt")
        page = await fetch(url)
        if page.status >= 400:
            raise ToolError(f"HTTP {page.status} fetching {page.url}")
        text = page_text(page)
        notes = []
        if page.truncated:
            notes.append(f"the download stopped at {MAX_BYTES // (1024 * 1024)} MB")
        if len(text) > MAX_TEXT_CHARS:
            text = text[:MAX_TEXT_CHARS]
            notes.append(f"the text was cut at {MAX_TEXT_CHARS} characters")
        header = f"Content of {page.url}"
        if page.url != url:
            header += f" (redirected from {url})"
        content = header + ":\n\n" + text
        if notes:
            content += "\n\n(Truncated: " + "; ".join(notes) + ".)"
        if prompt:
            content += f"\n\nUse this content to answer: {prompt}"
        size = (
            f"{len(page.body) / 1024:.0f} KB" if len(page.body) >= 1024 else f"{len(page.body)} B"
        )
        return ToolResult(
            content,
            short_result=f"Fetched {page.url} ({page.status}, {size})",
            details={"url": page.url, "status": page.status, "contentType": page.content_type},
        )
