"""Server-sent events, decoded as the HTML standard says ("event stream interpretation").

Lines are fed one by one (without their line end); an event is complete at a blank line.
Its ``data`` is every ``data:`` field of the event joined with newlines (one space after
the colon is dropped); comments (``:``) and other fields are ignored, and an event left
incomplete at the end of the stream is discarded, as the openai SDK does.
"""

from __future__ import annotations


class SseDecoder:
    def __init__(self) -> None:
        self._data: list[str] = []

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
