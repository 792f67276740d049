"""``WebSearch``: search the web through a pluggable provider.

The provider is ``ctx.services.web_search`` (any object with
``async search(query) -> list[{"title", "url", "snippet"}]``), or else, when the environment
sets ``WAVE_WEB_SEARCH_URL``, a URL template returning JSON, e.g. a SearxNG instance:
``https://searx.example/search?format=json&q={query}``. ``{query}`` is replaced by the
URL-encoded query. The JSON may be ``{"results": [...]}`` or a plain list; each item's
``title``, ``url`` (or ``link``/``href``) and ``snippet`` (or ``content``/``description``/``body``)
are used.
"""

from __future__ import annotations

import json
import os
from typing import Any
from urllib.parse import quote_plus, urlsplit

from wave_ls.runtime.core import Effect, ToolContext, ToolError, ToolKind, ToolResult
from wave_ls.runtime.services import SearchProvider
from wave_ls.runtime.tool_names import WaveTool
from wave_ls.runtime.tools.args import optional_str_list, require_str
from wave_ls.runtime.tools.web_fetch import check_url, fetch

ENV_URL = "WAVE_WEB_SEARCH_URL"
MAX_RESULTS = 10

DESCRIPTION = """\
Searches the web and returns result titles, URLs and snippets.

Usage:
- Use it for information beyond your knowledge: recent events, current documentation, \
versions released lately.
- allowed_domains keeps only results from those domains (and their subdomains); \
blocked_domains drops results from them.
- Fetch a result with WebFetch to read it in full.
- After answering from search results, list the sources you used as Markdown links."""


def _first(item: dict[str, Any], *keys: str) -> str:
    for key in keys:
        value = item.get(key)
        if isinstance(value, str) and value.strip():
            return value.strip()
    return ""


def parse_results(data: Any) -> list[dict[str, str]]:
    """Normalise a provider's JSON to ``[{"title", "url", "snippet"}]``."""
    items = data.get("results", []) if isinstance(data, dict) else data
    if not isinstance(items, list):
        return []
    results = []
    for item in items:
        if not isinstance(item, dict):
            continue
        url = _first(item, "url", "link", "href")
        if url:
            results.append(
                {
                    "title": _first(item, "title", "name") or url,
                    "url": url,
                    "snippet": _first(item, "snippet", "content", "description", "body"),
                }
            )
    return results


class UrlTemplateSearch:
    """A provider that GETs a URL template with ``{query}`` and reads JSON results."""

    def __init__(self, template: str) -> None:
        if "{query}" not in template:
            raise ToolError(f"{ENV_URL} must contain {{query}}, got {template!r}")
        self.template = template

    async def search(self, query: str) -> list[dict[str, Any]]:
        url = check_url(self.template.replace("{query}", quote_plus(query)))
        page = await fetch(url)
        if page.status >= 400:
            raise ToolError(f"The search service answered HTTP {page.status} for {url}")
        try:
            data = json.loads(page.body.decode(page.encoding, errors="replace"))
        except ValueError as error:
            raise ToolError(f"The search service at {url} did not return JSON") from error
        return parse_results(data)


def provider_for(ctx: ToolContext) -> SearchProvider | None:
    """The session's provider, else one from ``WAVE_WEB_SEARCH_URL``, else None."""
    provider = ctx.services.web_search
    if provider is not None:
        return provider
    template = os.environ.get(ENV_URL, "").strip()
    return UrlTemplateSearch(template) if template else None


def _host_in(url: str, domains: list[str]) -> bool:
    host = (urlsplit(url).hostname or "").lower()
    for domain in domains:
        domain = domain.lower().strip().removeprefix("*.").strip(".")
        if domain and (host == domain or host.endswith("." + domain)):
            return True
    return False


def filter_results(
    results: list[dict[str, str]], allowed: list[str], blocked: list[str]
) -> list[dict[str, str]]:
    return [
        item
        for item in results
        if (not allowed or _host_in(item["url"], allowed)) and not _host_in(item["url"], blocked)
    ]


PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "query": {"type": "string", "minLength": 2, "description": "The search query"},
        "allowed_domains": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Only include results from these domains",
        },
        "blocked_domains": {
            "type": "array",
            "items": {"type": "string"},
            "description": "Never include results from these domains",
        },
    },
    "required": ["query"],
    "additionalProperties": False,
}


class WebSearchTool:
    """Searches the web (see ``DESCRIPTION``)."""

    name = WaveTool.WEB_SEARCH.value
    description = DESCRIPTION
    effect: Effect = "read"
    kind: ToolKind = "fetch"
    key_argument: str | None = "query"
    concurrency_safe = True
    parameters = PARAMETERS

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        query = require_str(args, "query", allow_empty=False)
        allowed = optional_str_list(args, "allowed_domains")
        blocked = optional_str_list(args, "blocked_domains")
        provider = provider_for(ctx)
        if provider is None:
            raise ToolError(
                f"WebSearch is not configured: set {ENV_URL} to a search URL template "
                "returning JSON (e.g. a SearxNG instance: "
                "https://searx.example/search?format=json&q={query}). "
                "Meanwhile, use WebFetch on a URL you know."
            )
        raw = parse_results(await provider.search(query))
        results = filter_results(raw, allowed, blocked)[:MAX_RESULTS]
        label = f"Search {query!r}"
        if not results:
            return ToolResult(f'No results for "{query}".', short_result=f"{label}: no results")
        lines = [f'Web search results for "{query}":', ""]
        for number, item in enumerate(results, start=1):
            lines.append(f"{number}. {item['title']}\n   {item['url']}")
            if item["snippet"]:
                lines.append(f"   {item['snippet']}")
        lines += ["", "Cite the sources you use as Markdown links."]
        plural = "result" if len(results) == 1 else "results"
        return ToolResult(
            "\n".join(lines),
            short_result=f"{label}: {len(results)} {plural}",
            details={"results": results},
        )
