"""The ``LSP`` tool's way to the editor: the ``wave/editor/lsp`` server-to-client request.

The editor holds the language servers of the user's project; wave-ls is only its chat
server. A client that declares ``capabilities.experimental.wave.editorLsp: true`` answers
``wave/editor/lsp {sessionId, operation, params}`` with the plain LSP result of that
operation (e.g. VS Code runs ``vscode.executeDefinitionProvider``). Sessions of any other
client get no ``lsp`` service, and the tool says that code intelligence is not available.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from wave_ls.runtime.core import ToolError

if TYPE_CHECKING:
    from wave_ls.server.app import WaveServer

EDITOR_LSP_METHOD = "wave/editor/lsp"
CAPABILITY = "editorLsp"


class EditorLsp:
    """``ctx.services.lsp`` for the sessions of a client that offers it."""

    def __init__(self, server: WaveServer, session_id: str) -> None:
        self.server = server
        self.session_id = session_id

    async def request(self, operation: str, params: dict[str, Any]) -> Any:
        message = {"sessionId": self.session_id, "operation": operation, "params": params}
        try:
            return await self.server.protocol.send_request_async(EDITOR_LSP_METHOD, message)
        except Exception as exc:  # the editor's failure is the tool's error, not a crash
            raise ToolError(f"The editor could not answer {operation}: {exc}") from exc


def editor_lsp_for(server: WaveServer, session_id: str) -> EditorLsp | None:
    return EditorLsp(server, session_id) if server.client_experimental(CAPABILITY) else None
