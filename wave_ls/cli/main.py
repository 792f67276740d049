"""``wave-ls``: serve LSP (default) or run one of the subcommands.

Each subcommand lives in its own module with ``add_arguments(parser)`` and ``run(args)``;
those modules import their heavy dependencies inside ``run`` so start-up stays fast.
"""

from __future__ import annotations

import importlib
import logging
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, NoReturn

if TYPE_CHECKING:
    import argparse

# subcommand -> (module, one-line help)
SUBCOMMANDS: dict[str, tuple[str, str]] = {
    "agents": ("wave_ls.cli.agents_cmd", "list the subagents of a workspace and their problems"),
    "run": ("wave_ls.cli.run_cmd", "run one agent turn and print the answer"),
    "fake-model": ("wave_ls.cli.fake_model_cmd", "serve the offline, scriptable model"),
    "demo": ("wave_ls.cli.demo_cmd", "run the offline demo: a real server, a real client"),
    "acp": ("wave_ls.cli.acp_cmd", "serve the Agent Client Protocol on stdin/stdout"),
    "doctor": ("wave_ls.cli.doctor_cmd", "check the sandbox, git, ripgrep, endpoint and agents"),
}


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The command line of ``wave-ls``. Only the subcommand ``argv`` names gets its module
    imported for its arguments (importing all six cost the server's start ~15-30 ms); the
    others are listed with their help line."""
    import argparse

    chosen = chosen_subcommand(sys.argv[1:] if argv is None else argv)
    parser = argparse.ArgumentParser(
        prog="wave-ls", description="Language server with a coding-agent runtime and subagents."
    )
    parser.add_argument("--stdio", action="store_true", help="serve LSP on stdin/stdout (default)")
    parser.add_argument("--tcp", action="store_true", help="serve LSP over TCP")
    parser.add_argument("--host", default="127.0.0.1", help="TCP host (with --tcp)")
    parser.add_argument("--port", type=int, default=2087, help="TCP port (with --tcp)")
    parser.add_argument("--log-file", help="write logs to this file instead of stderr")
    parser.add_argument("--log-level", help="DEBUG, INFO, WARNING (default) or ERROR")
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, help_text) in SUBCOMMANDS.items():
        sub = commands.add_parser(name, help=help_text, description=help_text)
        if name == chosen:
            importlib.import_module(module_name).add_arguments(sub)
    return parser


# The top-level options that take a value (the value never names a subcommand).
VALUE_OPTIONS = frozenset({"--host", "--port", "--log-file", "--log-level"})


def chosen_subcommand(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` runs: its first positional argument, when it is one."""
    tokens = iter(argv)
    for token in tokens:
        if token in VALUE_OPTIONS:
            next(tokens, None)
        elif not token.startswith("-"):
            return token if token in SUBCOMMANDS else None
    return None


# How editors start the server: nothing to parse, so no parser is built (argparse's help
# formatter alone imports shutil, lzma, bz2, gettext and locale: ~5 ms of the server's start).
PLAIN_SERVE: tuple[list[str], ...] = ([], ["--stdio"])


# How long a thread may hold the GIL while another waits (Python's default: 5 ms). Our
# threads (the agent sweep, parsing, git inspection) run CPU work beside the event loop; a
# request that arrives meanwhile waited up to 5 ms per hand-over: @ completion's p99 while an
# agent file was saved every 200 ms was 17-27 ms, and 9-12 ms with 0.5 ms (issue 30).
GIL_SWITCH_SECONDS = 0.0005


def main(argv: list[str] | None = None) -> int:
    from wave_ls.log import setup_logging

    sys.setswitchinterval(GIL_SWITCH_SECONDS)
    arguments = sys.argv[1:] if argv is None else argv
    if arguments in PLAIN_SERVE:
        setup_logging()
        if os.isatty(0):  # a person, not an editor, started it: say what it is doing
            sys.stderr.write(ON_A_TERMINAL)
            sys.stderr.flush()
        return serve()
    args = build_parser(arguments).parse_args(arguments)
    setup_logging(args.log_level, args.log_file)
    if args.version:
        from wave_ls import __version__

        print(__version__)
        return 0
    if args.command:
        exit_settled(run_subcommand(args))
    return serve(tcp=args.tcp, host=args.host, port=args.port)


ON_A_TERMINAL = (
    "wave-ls: serving the Language Server Protocol on stdin/stdout (editors start it this "
    'way); to ask the agent from a terminal: wave-ls run "<prompt>" (wave-ls --help)\n'
)
EXIT_BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a writer whose reader left


def run_subcommand(args: argparse.Namespace) -> int:
    """The subcommand's exit code. Ctrl-C outside an event loop (a y/N question, imports)
    and a reader that stopped reading (``wave-ls doctor | head -1``) end it quietly."""
    module_name = SUBCOMMANDS[args.command][0]
    try:
        return int(importlib.import_module(module_name).run(args) or 0)
    except KeyboardInterrupt:
        from wave_ls.cli.interrupt import EXIT_INTERRUPTED

        sys.stderr.write(f"\nwave-ls {args.command}: interrupted\n")
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        return quiet_stdout(EXIT_BROKEN_PIPE)


def quiet_stdout(code: int) -> int:
    """Point stdout at /dev/null (what is still buffered for the closed pipe is dropped
    instead of failing again at exit) and pass ``code`` on."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return code


def serve(tcp: bool = False, host: str = "127.0.0.1", port: int = 2087) -> int:
    """Serve LSP on stdin/stdout, or over TCP."""
    import gc

    gc.disable()  # until `initialize` is answered: server.app.after_initialize_answer
    from wave_ls.server import app

    return app.serve(tcp=tcp, host=host, port=port)


def exit_settled(code: int) -> NoReturn:
    """End the process once a subcommand has settled everything (its event loop has
    finished, which closed its transcripts, worktrees and processes, and shut down the
    loop's worker threads): flush, then skip the interpreter's teardown, which after the
    openai SDK's import spends 150-300 ms on garbage collection that nobody waits for."""
    # Worktree records written in the background. The module is never imported here: it is
    # absent, loaded, or still being loaded by the isolation loader's thread
    # (worktrees.workspace.load_isolation_soon), and then has written nothing.
    registry = sys.modules.get("wave_ls.worktrees.registry_file")
    settle = getattr(registry, "settle", None)
    if settle is not None:
        settle()
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BrokenPipeError:  # the reader left (`| head -1`): not worth a word
            code = code or EXIT_BROKEN_PIPE
        except (OSError, ValueError):  # a closed pipe: nothing more can reach it anyway
            code = code or 1
    os._exit(code)


if __name__ == "__main__":
    sys.exit(main())
