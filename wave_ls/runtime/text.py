"""Text that can always be encoded: lone surrogates made readable.

A Python ``str`` may hold code points UTF-8 cannot encode: the lone surrogates. They come
from file names that are not UTF-8 (``os.fsdecode`` keeps each undecodable byte as
U+DC80..U+DCFF, "surrogateescape"), and from JSON text with an unpaired ``\\ud83d`` escape
(a client's chat text, a model's tool arguments). Writing one as UTF-8 raises
``UnicodeEncodeError``. ``readable`` replaces each with an escape a person and a model can
read: an undecodable byte ``0xff`` becomes the four characters ``\\xff``, any other lone
surrogate ``\\ud83d``; a high and a low surrogate in a row become the character they stand
for. ``unescape_path`` turns such a name back into the real one, so a path the model copies
from a tool's output still opens the file.

Everything that leaves the process as JSON (the LSP wire, model requests, transcripts)
goes through ``encodable`` or ``json_dumps``; a ``Message`` is made readable when created.
"""

from __future__ import annotations

import json
import re
from typing import Any

_SURROGATE = re.compile("[\ud800-\udbff][\udc00-\udfff]|[\ud800-\udfff]")
# Only bytes 0x80-0xff are ever escaped: lower ones are ASCII and decode as themselves.
_BYTE_ESCAPE = re.compile(r"\\x([89a-fA-F][0-9a-fA-F])")


def _escape(match: re.Match[str]) -> str:
    found = match.group()
    if len(found) == 2:  # a pair: the character it encodes in UTF-16
        return found.encode("utf-16-le", "surrogatepass").decode("utf-16-le")
    code = ord(found)
    if 0xDC80 <= code <= 0xDCFF:  # an undecodable byte kept by surrogateescape
        return f"\\x{code - 0xDC00:02x}"
    return f"\\u{code:04x}"


def readable(text: str) -> str:
    """``text`` with every lone surrogate escaped (see the module docstring)."""
    if _SURROGATE.search(text) is None:  # the common case costs one scan in C
        return text
    return _SURROGATE.sub(_escape, text)


def encodable(value: Any) -> Any:
    """``value`` (JSON-like: dicts, lists, strings, ...) with every string made ``readable``.

    Returns the same objects when nothing needed a change, so the common case allocates
    nothing. That case is found in C: the JSON text encodes as UTF-8 unless some string
    holds a lone surrogate (5x faster than visiting each string: a model request's body and
    tools took ~1 ms a round).
    """
    if isinstance(value, dict | list | tuple):
        try:
            json.dumps(value, ensure_ascii=False).encode("utf-8")
        except (TypeError, ValueError):  # a lone surrogate (UnicodeEncodeError), or not JSON
            pass
        else:
            return value
    return _encodable(value)


def _encodable(value: Any) -> Any:
    if isinstance(value, str):
        return readable(value)
    if isinstance(value, dict):
        changed = False
        out: dict[Any, Any] = {}
        for key, item in value.items():
            new_key = readable(key) if isinstance(key, str) else key
            new_item = _encodable(item)
            changed = changed or new_key is not key or new_item is not item
            out[new_key] = new_item
        return out if changed else value
    if isinstance(value, list | tuple):
        items = [_encodable(item) for item in value]
        if all(new is old for new, old in zip(items, value, strict=True)):
            return value
        return items if isinstance(value, list) else tuple(items)
    return value


def json_dumps(value: Any, **options: Any) -> str:
    """``json.dumps`` without ASCII escaping whose result always encodes as UTF-8."""
    return readable_json_text(json.dumps(value, ensure_ascii=False, **options))


def readable_json_text(text: str) -> str:
    """JSON text (maybe partial) with each raw surrogate replaced by its readable escape,
    JSON-escaped: raw surrogates can only stand inside JSON strings."""
    if _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub(lambda m: json.dumps(_escape(m))[1:-1], text)


def unescape_path(text: str) -> str | None:
    """The real name behind a path shown with ``\\xNN`` escapes, or None when it has none.

    ``readable("caf\\udce9")`` is ``"caf\\\\xe9"``; ``unescape_path`` of that is the
    original string again (a name ``os.fsencode`` turns into the bytes on disk).
    """
    if "\\x" not in text:
        return None
    return _BYTE_ESCAPE.sub(lambda m: chr(0xDC00 + int(m.group(1), 16)), text)
