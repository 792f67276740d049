"""The chat input's `@` mentions: reading them from a message, and completing them.

- `mentions`: the one mention regex, the agents/files a message names, the reminders.
- `query`: the `@` word under the cursor.
- `completion`: candidates (subagents, then files) for a query.
- `file_index`, `workspace_files`: the workspace's files, listed and searchable.
"""
