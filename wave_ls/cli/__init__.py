"""Command-line adapters over the runtime and the server."""
