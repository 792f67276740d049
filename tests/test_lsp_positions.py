"""Position encodings: the server takes the client's first choice among utf-8, utf-16 and
utf-32, says so in ``initialize``, and counts the ``cursor`` of ``wave/chatInput/completion``
in it (Neovim 0.11 negotiates UTF-8, VS Code uses UTF-16)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types
from pygls.exceptions import JsonRpcException

from tests.support.background import wave_client
from tests.support.lsp import capabilities, server_env

TEXT = "héllo 😀 @Exp"  # é: 2 UTF-8 bytes; 😀: 4 UTF-8 bytes, 2 UTF-16 units, 1 code point
END = {"utf-8": len(TEXT.encode()), "utf-16": len(TEXT) + 1, "utf-32": len(TEXT)}


@pytest.mark.parametrize(
    ("offered", "chosen"),
    [
        (["utf-8", "utf-16"], "utf-8"),
        (["utf-32"], "utf-32"),
        (["utf-16", "utf-8"], "utf-16"),
        (None, "utf-16"),
    ],
)
async def test_cursor_counts_in_the_negotiated_encoding(
    offered: list[str] | None, chosen: str, home: Path, project: Path
) -> None:
    caps = capabilities()
    caps.general = types.GeneralClientCapabilities(
        position_encodings=[types.PositionEncodingKind(e) for e in offered] if offered else None
    )
    async with wave_client(server_env(home), caps=caps, root=project) as client:
        assert client.init_result is not None
        assert client.init_result.capabilities.position_encoding == chosen
        end = END[chosen]
        items = await client.request("wave/chatInput/completion", {"text": TEXT, "cursor": end})
        assert items["items"][0]["label"] == "Explore"
        # One unit back is "@Ex" in every encoding ("p" is one unit in all three).
        fewer = await client.request("wave/chatInput/completion", {"text": TEXT, "cursor": end - 1})
        assert fewer["items"][0]["label"] == "Explore"
        # Right after the emoji: not in an `@` word.
        emoji_end = {"utf-8": 11, "utf-16": 8, "utf-32": 7}[chosen]
        none = await client.request(
            "wave/chatInput/completion", {"text": TEXT, "cursor": emoji_end}
        )
        assert none["items"] == []
        with pytest.raises(JsonRpcException) as caught:
            await client.request("wave/chatInput/completion", {"text": TEXT, "cursor": end + 1})
        assert caught.value.code == -32602 and chosen in str(caught.value)
