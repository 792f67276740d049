"""wave-ls: a language server holding a coding-agent runtime with subagents."""

__version__ = "0.1.0"
