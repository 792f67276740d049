"""``wave-ls run "<prompt>"``: one agent turn in a folder; answer on stdout.

Exit codes: 0 done; 1 the turn failed (the model endpoint's error, printed once on
stderr); 2 nothing could start (no model configured, a bad ``--cwd`` or worktree, no
prompt); 3 the turn ended but a permission it asked for was denied (on the terminal, or
because there was no terminal to ask: stderr says what and how to allow it); 130
interrupted (Ctrl-C: the turn is cancelled, see ``cli/interrupt.py``).
"""

from __future__ import annotations

import argparse
import gc
from typing import TYPE_CHECKING

from wave_ls.runtime.core import (
    PERMISSION_MODES,
    Event,
    EventSink,
    MessagesChanged,
    UserMessageAdded,
)

if TYPE_CHECKING:  # imported in ``run``: the packages a turn needs load beside the TLS set-up
    from pathlib import Path

    from wave_ls.cli.terminal import TerminalAsker
    from wave_ls.runtime.loop import TurnResult
    from wave_ls.runtime.settings import RuntimeSettings
    from wave_ls.session import AgentSession


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "prompt", nargs="?", help="what to ask the agent (may contain @agent:<name>)"
    )
    parser.add_argument("--cwd", default=".", help="the folder the agent works in")
    parser.add_argument("--model", help="model id (default: $WAVE_MODEL)")
    parser.add_argument(
        "--permission-mode",
        choices=PERMISSION_MODES,
        default="default",
        help="default asks on the terminal before edits and commands",
    )
    parser.add_argument(
        "-w",
        "--worktree",
        nargs="?",
        const="",
        metavar="NAME",
        help=(
            "work in a git worktree .wave/worktrees/NAME: -w NAME PROMPT or --worktree=NAME "
            "PROMPT; a generated name with -w alone (-w PROMPT: the lone value is the prompt)"
        ),
    )
    parser.add_argument(
        "--trust",
        action="store_true",
        help="trust the folder: its repository's hooks, sandbox and permission settings apply",
    )


class CollectorBackAtFirstAnswer:
    """An ``EventSink`` that passes every event on and turns the garbage collector back on
    at the first event the model's first answer brings (``run`` starts with it off)."""

    BEFORE_THE_FIRST_REQUEST = (UserMessageAdded, MessagesChanged)

    def __init__(self, sink: EventSink) -> None:
        self.sink = sink

    def emit(self, event: Event) -> None:
        if not gc.isenabled() and not isinstance(event, self.BEFORE_THE_FIRST_REQUEST):
            gc.freeze()  # start-up's objects: full passes never walk them again
            gc.enable()
        self.sink.emit(event)


EXIT_FAILED = 1
EXIT_USAGE = 2
EXIT_DENIED = 3


def prompt_and_worktree(args: argparse.Namespace) -> tuple[str | None, str | None]:
    """The prompt and the worktree name ("" for a generated one, None for none). A value
    after ``-w`` with no prompt after it is the prompt (``wave-ls run -w "fix it"``)."""
    if args.prompt is None and args.worktree:
        return args.worktree, ""
    return args.prompt, args.worktree


def run(args: argparse.Namespace) -> int:
    """One agent turn on the prompt in ``args``; the exit code (see the module text)."""
    # Until the first request is out, nearly everything allocated (the openai SDK, our
    # modules, the agent catalog) lives to the end: a collection then is wasted, ~40 ms.
    gc.disable()
    from wave_ls.runtime import tls_context

    tls_context.prepare()  # beside the imports below, which take longer

    import sys

    from wave_ls.cli.interrupt import EXIT_INTERRUPTED, Interrupted, run_interruptible
    from wave_ls.cli.terminal import TerminalAsker
    from wave_ls.worktrees.model import IsolationError

    prompt, worktree = prompt_and_worktree(args)
    if not prompt:
        print('wave-ls run: no prompt: wave-ls run "<what to ask>"', file=sys.stderr)
        return EXIT_USAGE
    settings = usable_settings(args.model)
    cwd = working_folder(args.cwd)
    if settings is None or cwd is None:
        return EXIT_USAGE
    asker = TerminalAsker()
    session = open_session(args, settings, cwd, asker)
    try:
        result = run_interruptible(
            one_turn(session, prompt, worktree),
            notice="wave-ls run: interrupted: cancelling the turn (Ctrl-C again to quit at once)",
        )
    except Interrupted:
        return EXIT_INTERRUPTED
    except IsolationError as exc:
        print(f"wave-ls run: {exc}", file=sys.stderr)
        return EXIT_USAGE
    return report(result, denied=bool(asker.denied))


def usable_settings(model: str | None) -> RuntimeSettings | None:
    """The environment's settings with ``--model``; None (said why on stderr) when no model
    can be reached with them. Their warnings go to stderr either way."""
    import sys

    from wave_ls.runtime.settings import RuntimeSettings

    settings = RuntimeSettings.from_env().override(model=model)
    for warning in settings.problems:
        print(f"wave-ls run: {warning}", file=sys.stderr)
    problem = settings.problem()
    if problem:
        print(f"wave-ls run: {problem}", file=sys.stderr)
        return None
    return settings


def working_folder(text: str) -> Path | None:
    """``--cwd`` resolved; None (said on stderr) when it is not a directory."""
    import sys
    from pathlib import Path

    cwd = Path(text).expanduser().resolve()
    if not cwd.is_dir():
        print(f"wave-ls run: not a directory: {cwd}", file=sys.stderr)
        return None
    return cwd


def open_session(
    args: argparse.Namespace, settings: RuntimeSettings, cwd: Path, asker: TerminalAsker
) -> AgentSession:
    """The session the turn runs in, once the folder's trust is settled: progress on the
    terminal, permissions asked there."""
    from pathlib import Path

    from wave_ls.agents import AgentRegistry
    from wave_ls.cli.terminal import TerminalProgress
    from wave_ls.cli.trust_prompt import settle_trust
    from wave_ls.runtime.settings import model_client_for
    from wave_ls.session import AgentSession

    home = Path.home()
    settle_trust(cwd, home, trust=args.trust)
    registry = AgentRegistry(home)
    return AgentSession(
        cwd=cwd,
        home=home,
        model=settings.model or "",
        client=model_client_for(settings),
        permission_mode=args.permission_mode,
        sink=CollectorBackAtFirstAnswer(TerminalProgress()),
        asker=asker,
        catalog=lambda: registry.load(cwd),
    )


async def one_turn(session: AgentSession, prompt: str, worktree: str | None) -> TurnResult:
    """The turn (in the worktree when one is asked for), then the background runs it
    started; the session is closed after."""
    import dataclasses
    import sys

    from wave_ls.runtime.loop import last_assistant_text

    try:
        if worktree is not None:
            entered = await session.worktrees.enter(worktree or None)
            print(f"wave-ls run: in worktree {entered.path} ({entered.branch})", file=sys.stderr)
        result = await session.send(prompt)
        # Background runs go on after the turn: wait for them and for the agent's
        # answer to their notices, which is then the final answer.
        await session.wait_idle()
        last = last_assistant_text(session.messages)
        return dataclasses.replace(result, text=last) if last else result
    finally:
        await session.close()


def report(result: TurnResult, *, denied: bool) -> int:
    """The answer on stdout, a failure on stderr; the exit code."""
    import sys

    if result.text:
        print(result.text)
    if result.status != "completed":
        print(f"wave-ls run: {result.error or result.status}", file=sys.stderr)
        return EXIT_FAILED
    return EXIT_DENIED if denied else 0
