"""``wave-ls acp``: serve the Agent Client Protocol on stdin/stdout (what an ACP client such
as Zed or JetBrains AI Assistant starts)."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """No options: the model comes from the environment, as for the language server."""


def run(args: argparse.Namespace) -> int:
    import asyncio
    import os
    from pathlib import Path

    from wave_ls.acp.stdio import serve
    from wave_ls.runtime.settings import RuntimeSettings

    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    asyncio.run(serve(Path.home(), RuntimeSettings.from_env()))
    return 0
