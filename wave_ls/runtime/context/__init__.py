"""The context window of a conversation: how large it is, how much of it is in use, and
compaction (a summary in place of the oldest messages) when it fills up.

- ``window``: the window's size (a setting, else what the endpoint says, else a default);
- ``tokens``: what the next request costs (the endpoint's reported usage, plus an estimate
  of only what it has not seen yet);
- ``refusal``: a request the endpoint refused for its length, in each server's words;
- ``compaction``: what is summarised, what is kept, and the summary message;
- ``tool_output``: a single tool output too large for the window, cut with a note;
- ``policy``: the one object a conversation holds (``AgentConfig.context``).
"""
