"""``wave-ls demo``: the offline demo (or a real model when one is configured)."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Start the offline model and `wave-ls --stdio`, connect as an LSP client and run a "
        "short scripted conversation in a throwaway git repo. With OPENAI_BASE_URL and "
        "WAVE_MODEL set, the real model is used instead."
    )


def run(args: argparse.Namespace) -> int:
    import asyncio

    from rich.console import Console

    from wave_ls.demo.run import run_demo

    return asyncio.run(run_demo(Console(highlight=False)))
