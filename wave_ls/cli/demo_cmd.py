"""``wave-ls demo``: the offline demo, or with ``--live`` the configured endpoint."""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.description = (
        "Start the offline model and `wave-ls --stdio`, connect as an LSP client and run a "
        "short scripted conversation in a throwaway git repo. The offline model is always "
        "used (OPENAI_BASE_URL and WAVE_MODEL are ignored) unless --live is given."
    )
    parser.add_argument(
        "--live",
        action="store_true",
        help=(
            "use the configured endpoint (OPENAI_BASE_URL, WAVE_MODEL, OPENAI_API_KEY) "
            "instead of the offline model, and ask at each permission prompt"
        ),
    )


def run(args: argparse.Namespace) -> int:
    from wave_ls.cli.interrupt import EXIT_INTERRUPTED, Interrupted, run_interruptible
    from wave_ls.cli.terminal import read_answer
    from wave_ls.demo.run import Children, console_for, run_demo

    children = Children()
    try:
        return run_interruptible(
            run_demo(console_for(), live=args.live, children=children, ask=read_answer),
            notice="wave-ls demo: interrupted: stopping (Ctrl-C again to quit at once)",
            force=children.kill,
        )
    except Interrupted:
        return EXIT_INTERRUPTED
