"""Server-sent events, decoded as the HTML standard says ("event stream interpretation").

Bytes are fed as they arrive (``feed_bytes``), or lines one by one without their line end
(``feed``); an event is complete at a blank line. Its ``data`` is every ``data:`` field of
the event joined with newlines (one space after the colon is dropped); comments (``:``) and
other fields are ignored, and an event left incomplete at the end of the stream is
discarded, as the openai SDK does. Lines end in LF, CRLF or CR; the text is UTF-8.
"""

from __future__ import annotations


class SseDecoder:
    def __init__(self) -> None:
        self._data: list[str] = []
        self._tail = b""  # the start of a line whose end has not arrived

    def feed_bytes(self, chunk: bytes) -> list[str]:
        """The data of every event these bytes complete.

        Lines are split as bytes and decoded whole, so a character split between two
        pieces of the stream arrives whole (a line end is never part of a UTF-8 sequence).
        """
        if self._tail:
            chunk = self._tail + chunk
        if b"\r" in chunk:
            if chunk.endswith(b"\r"):  # may be the first half of a CRLF
                chunk, self._tail = chunk[:-1], b"\r"
            else:
                self._tail = b""
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
            if self._tail:
                *lines, rest = chunk.split(b"\n")
                self._tail = rest + b"\r"
                return self._lines(lines)
        *lines, self._tail = chunk.split(b"\n")
        return self._lines(lines)

    def _lines(self, lines: list[bytes]) -> list[str]:
        events: list[str] = []
        for line in lines:
            data = self.feed(line.decode("utf-8", "replace"))
            if data is not None:
                events.append(data)
        return events

    def feed(self, line: str) -> str | None:
        """The data of the event this line completes, or None."""
        if not line:
            if not self._data:
                return None
            data, self._data = "\n".join(self._data), []
            return data
        if line.startswith(":"):
            return None
        name, _, value = line.partition(":")
        if name == "data":
            self._data.append(value[1:] if value.startswith(" ") else value)
        return None
