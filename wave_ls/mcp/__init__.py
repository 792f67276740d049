"""MCP servers for the agents (docs/mcp.md): their definitions (``config``), who may start
them (``gate``, ``approvals``), one live server (``connection``, over the ``mcp`` SDK), their
tools (``tools``) and the process's servers shared by the sessions of a folder
(``manager``). The runtime's side only: nothing here knows LSP or ACP.
"""
