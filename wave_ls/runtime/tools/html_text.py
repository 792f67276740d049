"""HTML to readable, Markdown-flavoured text with the standard library's parser."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from urllib.parse import urljoin

DROPPED = frozenset({"script", "style", "noscript", "template", "svg", "head", "iframe", "canvas"})
BLOCKS = frozenset(
    {
        "address", "article", "aside", "blockquote", "body", "dd", "details", "div", "dl",
        "dt", "figcaption", "figure", "footer", "form", "header", "hr", "html", "main", "nav",
        "ol", "p", "section", "summary", "table", "tbody", "thead", "tfoot", "tr", "ul",
    }
)  # fmt: skip
VOID = frozenset({"br", "hr", "img", "input", "meta", "link", "area", "base", "col", "wbr"})


class _TextBuilder(HTMLParser):
    def __init__(self, base_url: str) -> None:
        super().__init__(convert_charrefs=True)
        self.base_url = base_url
        self.parts: list[str] = []
        self.pre_parts: set[int] = set()  # indices of parts inside <pre>, kept verbatim
        self.title = ""
        self._in_title = False
        self._dropped = 0  # depth inside elements whose text is not shown
        self._pre = 0
        self._links: list[str | None] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "title":
            self._in_title = True
        if tag in DROPPED:
            if tag not in VOID:
                self._dropped += 1
            return
        if self._dropped:
            return
        if tag in BLOCKS:
            self.parts.append("\n\n")
        elif tag == "br":
            self.parts.append("\n")
        elif tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self.parts.append("\n\n" + "#" * int(tag[1]) + " ")
        elif tag == "li":
            self.parts.append("\n- ")
        elif tag in ("td", "th"):
            self.parts.append(" | ")
        elif tag == "pre":
            self._pre += 1
            self.parts.append("\n\n```\n")
        elif tag == "code" and not self._pre:
            self.parts.append("`")
        elif tag == "a":
            href = dict(attrs).get("href")
            self._links.append(urljoin(self.base_url, href) if href else None)
            self.parts.append("[" if href else "")

    def handle_endtag(self, tag: str) -> None:
        if tag == "title":
            self._in_title = False
        if tag in DROPPED:
            self._dropped = max(self._dropped - 1, 0)
            return
        if self._dropped:
            return
        if tag in BLOCKS or tag in ("h1", "h2", "h3", "h4", "h5", "h6"):
            self.parts.append("\n\n")
        elif tag == "pre":
            self._pre = max(self._pre - 1, 0)
            self.parts.append("\n```\n\n")
        elif tag == "code" and not self._pre:
            self.parts.append("`")
        elif tag == "a" and self._links:
            href = self._links.pop()
            if href:
                self.parts.append(f"]({href})")

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        if self._dropped:
            return
        if self._pre:
            self.pre_parts.add(len(self.parts))
            self.parts.append(data)
        else:
            self.parts.append(re.sub(r"\s+", " ", data))


def html_to_text(html: str, base_url: str = "") -> str:
    """Readable text of an HTML page: headings, lists, links and code kept as Markdown;
    scripts, styles and the head dropped."""
    builder = _TextBuilder(base_url)
    builder.feed(html)
    builder.close()
    out: list[str] = []
    run: list[str] = []
    for index, part in enumerate(builder.parts):
        if index in builder.pre_parts:
            out.append(_tidy("".join(run)))
            run = []
            out.append(part)
        else:
            run.append(part)
    out.append(_tidy("".join(run)))
    text = "".join(out).strip()
    title = re.sub(r"\s+", " ", builder.title).strip()
    return f"# {title}\n\n{text}" if title and title not in text[:200] else text


def _tidy(text: str) -> str:
    text = re.sub(r"[ \t]*\n[ \t]*", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text)
