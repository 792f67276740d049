"""The Agent Client Protocol adapter (``wave-ls acp``): a second thin adapter over the same
runtime as the language server, for ACP clients (JetBrains AI Assistant, Zed,
CodeCompanion, agent-shell).

- ``agent``: the ACP methods (initialize, session/new, load, list, prompt, cancel, set_mode);
- ``updates``: runtime events -> ``session/update`` (message chunks, tool calls, plan);
- ``tool_calls``: a tool call's title, kind, locations and content;
- ``permissions``: ``session/request_permission``;
- ``mcp_servers``: the client's MCP servers, a project server's approval, status notices;
- ``commands``: the subagents as ``available_commands_update``;
- ``prompt``: ACP content blocks -> the chat message and its mentions;
- ``history``: a saved session replayed on ``session/load``;
- ``outbox``: the ordered stream of updates;
- ``stdio``: the process's stdin/stdout, kept for JSON-RPC alone.
"""
