"""``wave-ls demo``: real processes end to end, shown in the terminal.

The offline model server and ``wave-ls --stdio`` are started as subprocesses; this module is
the LSP client (pygls), the way an editor would be: it opens a session in a throwaway git
repo, sends the scripted messages, answers permission prompts, and renders the streamed
answer, every tool block and each subagent's activity live, in the order the server sent
them (all from ``wave/session/update``: one stream, so nothing arrives out of order).

Offline (the default) the configured endpoint is ignored and the demo approves its own
script's prompts; ``--live`` uses the configured endpoint and asks the user at each prompt.
Both children run in process groups of their own, so Ctrl-C reaches only this process,
which then ends them (``cli/interrupt.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NotRequired, TextIO, TypedDict

from lsprotocol import types
from pygls.io_ import run_async
from pygls.lsp.client import LanguageClient
from rich.console import Console
from rich.markup import escape
from rich.panel import Panel

from wave_ls.demo.script import (
    BACKGROUND_MESSAGE,
    EXPLORE_MESSAGE,
    FIX_MESSAGE,
    ISOLATED_MESSAGE,
    demo_script,
    make_project,
)
from wave_ls.runtime.tool_names import WaveTool
from wave_ls.server.agent_progress import progress_title
from wave_ls.server.protocol import WaveProtocol

# Asks the person at the terminal one question; the answer, lower-cased (cli/terminal.py).
Ask = Callable[[str], Awaitable[str]]
MESSAGES = (FIX_MESSAGE, EXPLORE_MESSAGE, ISOLATED_MESSAGE, BACKGROUND_MESSAGE)
OFFLINE_MODEL = "wave-offline-demo"
# The model configuration of the user's environment, which the offline demo leaves out.
MODEL_ENV_PREFIXES = ("OPENAI_", "WAVE_MODEL", "WAVE_FAST_MODEL")


class TurnResult(TypedDict):
    """The answer to ``wave/chat/send`` (PROTOCOL.md)."""

    status: str
    text: str
    usage: NotRequired[dict[str, object]]
    error: NotRequired[str]


class Transcript(TypedDict):
    """The answer to ``wave/session/messages``."""

    messages: list[dict[str, object]]


@dataclass
class DelegationView:
    """What was printed of one ``Agent`` block, so each line is printed once."""

    begun: bool = False
    activity: str = ""
    ended: set[str] = field(default_factory=set)
    tokens: int = 0


class DemoClient(LanguageClient):
    """An LSP client that renders what the server reports."""

    def __init__(self, console: Console, *, live: bool, ask: Ask | None = None) -> None:
        super().__init__("wave-demo", "1", protocol_cls=WaveProtocol)
        self.console = console
        self.live = live
        self.ask = ask
        self.streaming = False
        self.tool_calls = 0
        self.delegations: list[str] = []
        self.views: dict[str, DelegationView] = {}
        self.permissions: list[str] = []
        self.worktrees: list[str] = []
        self.main_tokens = 0
        self.notified = asyncio.Event()
        self.turns_ended = 0
        self.quiet = False  # interrupted: what still arrives is not shown
        self.reading: asyncio.Task[None] | None = None  # the server's messages (start_server)

        @self.feature("wave/session/update")
        def on_update(params: dict[str, Any]) -> None:
            self.render_update(params)

        @self.feature("wave/permission/request")
        async def on_permission(params: dict[str, Any]) -> dict[str, object]:
            self.end_stream()
            self.permissions.append(params["summary"])
            return await self.answer_permission(params["summary"])

        @self.feature(types.WINDOW_SHOW_MESSAGE)
        def on_message(params: types.ShowMessageParams) -> None:
            self.console.print(f"[yellow]server: {escape(params.message)}[/]")

    async def start_server(self, env: dict[str, str]) -> asyncio.subprocess.Process:
        """Start ``wave-ls --stdio`` in its own process group and talk to it over its pipes
        (pygls's ``start_io`` keeps the process to itself; the demo reads its stderr, waits
        for it and stops it)."""
        server = await asyncio.create_subprocess_exec(
            *(sys.executable, "-m", "wave_ls", "--stdio"),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=env,
            start_new_session=True,
        )
        assert server.stdin is not None and server.stdout is not None
        self.protocol.set_writer(server.stdin)
        self.reading = asyncio.create_task(
            run_async(
                stop_event=threading.Event(),  # it ends with the server's output
                reader=server.stdout,
                protocol=self.protocol,
                error_handler=self.report_server_error,
            )
        )
        return server

    async def answer_permission(self, summary: str) -> dict[str, object]:
        if not self.live:  # the demo's own script, in its throwaway repository
            self.console.print(f"  [yellow]? allow {escape(summary)}[/] → yes (the demo approves)")
            return {"allowed": True}
        if self.ask is None or not sys.stdin.isatty():
            self.console.print(f"  [yellow]? allow {escape(summary)}[/] → no (no terminal to ask)")
            return {"allowed": False, "message": "No terminal to ask the user: denied."}
        answer = await self.ask(f"  ? allow {summary} [y/N] ")
        if answer in ("y", "yes"):
            return {"allowed": True}
        return {"allowed": False, "message": f"The user denied permission to {summary}."}

    def end_stream(self) -> None:
        if self.streaming:
            self.console.out("")
            self.streaming = False

    def render_update(self, update: dict[str, Any]) -> None:
        if self.quiet:
            return
        kind = update.get("kind")
        if kind == "assistantDelta":
            if not self.streaming:
                self.console.print("[bold magenta]wave ›[/] ", end="")
                self.streaming = True
            self.console.out(update["delta"], end="", highlight=False)
        elif kind == "toolBlock" and update["name"] == WaveTool.AGENT:
            self.render_delegation(update)
        elif kind == "toolBlock" and update["status"] in ("completed", "failed"):
            self.end_stream()
            self.tool_calls += 1
            mark = "[green]✓[/]" if update["status"] == "completed" else "[red]✗[/]"
            summary = update.get("shortResult") or first_line(update.get("result", ""))
            self.console.print(
                f"  {mark} [cyan]{update['name']}[/] {escape(argument(update))}  "
                f"[dim]{escape(summary)}[/]"
            )
        elif kind == "assistantMessage":
            self.end_stream()
        elif kind == "usage":
            self.main_tokens = int((update.get("total") or {}).get("total_tokens", 0))
        elif kind == "userMessage" and (update["message"].get("meta") or {}).get(
            "taskNotification"
        ):
            self.end_stream()
            task = update["message"]["meta"]["taskNotification"]
            self.console.print(f"[bold green]⇠ background task {task} ended: the agent is told[/]")
        elif kind == "turnEnded":
            self.turns_ended += 1
            if self.turns_ended > len(MESSAGES):
                self.notified.set()

    def render_delegation(self, update: dict[str, Any]) -> None:
        """An ``Agent`` block: its title once, each new activity once (the token count
        that changes beside it is not news), each end summary once. A background run has a
        block of its own (whose id is its task id), shown under the call that started it."""
        block_id = str(update.get("toolCallId"))
        view = self.views.setdefault(block_id, DelegationView())
        status, short = update.get("status"), update.get("shortResult") or ""
        details = update.get("details") or {}
        task_block = details.get("taskId") == block_id
        if not view.begun:
            view.begun = True
            if not task_block:
                self.end_stream()
                title = progress_title(update)
                self.delegations.append(title)
                self.console.print(f"  [bold blue]⇢ subagent {escape(title)}[/]")
        view.tokens = max(view.tokens, int(details.get("totalTokens") or 0))
        if status in ("completed", "failed"):
            summary = short or str(status)
            if summary in view.ended:
                return
            self.end_stream()
            if not view.ended and not task_block:
                self.tool_calls += 1
            view.ended.add(summary)
            mark = "[bold blue]⇠" if status == "completed" else "[bold red]✗"
            self.console.print(f"  {mark} {escape(summary)}[/]")
            for line in (update.get("result") or "").splitlines():
                if line.startswith("Worktree"):
                    self.worktrees.append(line)
                    self.console.print(f"    [green]{escape(kept_worktree(line))}[/]")
        elif short:
            activity = short.split(" · ")[0]
            # A background run's start was shown under the call that started it.
            restarted = task_block and not view.activity and activity.startswith("Starting")
            if activity != view.activity and not restarted:
                self.end_stream()
                view.activity = activity
                self.console.print(f"    [blue]│ {escape(activity)}[/]")

    @property
    def subagent_tokens(self) -> int:
        return sum(view.tokens for view in self.views.values())


def kept_worktree(line: str) -> str:
    """The server's "Worktree kept: ..." line without its advice to merge: the demo's
    repository is deleted when the demo ends."""
    where = line.split(". ", 1)[0]
    return f"{where} (in the demo's throwaway repository, deleted when the demo ends)"


def argument(update: dict[str, object]) -> str:
    """What the call works on: the block's ``target`` (from the tool's descriptor)."""
    target = update.get("target")
    text = target if isinstance(target, str) else ""
    return text if len(text) < 70 else text[:69] + "…"


def first_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0][:80] if lines else ""


def offline_env(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` without the user's model configuration (the offline demo never uses it)."""
    return {key: value for key, value in env.items() if not key.startswith(MODEL_ENV_PREFIXES)}


class Children:
    """The demo's processes, each in a process group of its own (a terminal's Ctrl-C
    reaches only the demo); ``kill`` ends whatever is left, for a forced exit."""

    def __init__(self) -> None:
        self.pids: list[int] = []

    def add(self, process: asyncio.subprocess.Process | None) -> None:
        if process is not None:
            self.pids.append(process.pid)

    def kill(self) -> None:
        for pid in self.pids:
            with contextlib.suppress(OSError):
                os.killpg(pid, signal.SIGKILL)


async def start_fake_model(
    script_path: Path, env: dict[str, str]
) -> tuple[asyncio.subprocess.Process, str]:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "wave_ls",
        "fake-model",
        "--port",
        "0",
        "--script",
        str(script_path),
        stdout=asyncio.subprocess.PIPE,
        stdin=asyncio.subprocess.DEVNULL,
        env=env,
        start_new_session=True,
    )
    assert process.stdout is not None
    line = (await asyncio.wait_for(process.stdout.readline(), 20)).decode()
    return process, line.strip().split()[-1]


async def drain(stream: asyncio.StreamReader | None, sink: list[str]) -> None:
    while stream and (line := await stream.readline()):
        sink.append(line.decode(errors="replace"))


async def stop(process: asyncio.subprocess.Process | None, grace: float) -> None:
    """End a child: it has ``grace`` seconds after SIGTERM, then SIGKILL."""
    if process is None or process.returncode is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        process.terminate()
    try:
        await asyncio.wait_for(process.wait(), grace)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()


def console_for(stream: TextIO | None = None) -> Console:
    """rich on a terminal; elsewhere (a pipe, a file) lines as long as they are, never
    cut or wrapped at 80 columns."""
    stream = stream or sys.stdout
    if stream.isatty():
        return Console(file=stream, highlight=False)
    return Console(file=stream, highlight=False, width=100_000, soft_wrap=True)


async def run_demo(
    console: Console,
    *,
    live: bool = False,
    children: Children | None = None,
    ask: Ask | None = None,
) -> int:
    """The demo; with ``live``, on the configured endpoint, asking ``ask`` at each prompt."""
    children = children or Children()
    if live and not live_endpoint_usable(console):
        return 2
    with tempfile.TemporaryDirectory(prefix="wave-demo-") as tmp:
        project, home = Path(tmp) / "project", Path(tmp) / "home"
        project.mkdir()
        home.mkdir()
        make_project(project)
        env = dict(os.environ if live else offline_env(os.environ), HOME=str(home))
        client = DemoClient(console, live=live, ask=ask)
        script = None if live else Path(tmp) / "script.json"
        results, transcript = await run_children(client, project, env, children, script)
        show_summary(console, client, project, results, transcript)
        return 0 if all(r["status"] == "completed" for r in results) else 1


def live_endpoint_usable(console: Console) -> bool:
    """Whether the configured endpoint can be used (said why not, else which it is)."""
    from wave_ls.runtime.settings import RuntimeSettings

    settings = RuntimeSettings.from_env()
    problem = settings.problem()
    if problem:
        console.print(f"wave-ls demo --live: {escape(problem)}")
        return False
    console.print(
        f"wave-ls demo --live: the model is {escape(settings.model or '')} at "
        f"{escape(settings.base_url or 'the OpenAI API')} (your endpoint, not the offline "
        "one); each permission prompt is asked here."
    )
    return True


async def run_children(
    client: DemoClient,
    project: Path,
    env: dict[str, str],
    children: Children,
    script: Path | None,
) -> tuple[list[TurnResult], Transcript]:
    """Start the offline model (when given its ``script``'s path) and the server, hold the
    conversation, and end them both, whatever happened."""
    console = client.console
    fake = None
    stderr: list[str] = []
    stderr_task: asyncio.Task[None] | None = None
    conversing: asyncio.Future[tuple[list[TurnResult], Transcript]] | None = None
    exited: asyncio.Future[int] | None = None
    server: asyncio.subprocess.Process | None = None
    try:
        if script is not None:
            fake = await start_offline_model(script, env, children)
        show_setup(console, env, project, offline=fake is not None)
        server = await client.start_server(env)
        children.add(server)
        stderr_task = asyncio.create_task(drain(server.stderr, stderr))
        conversing = asyncio.ensure_future(converse(client, console, project))
        exited = asyncio.ensure_future(server.wait())
        await asyncio.wait({conversing, exited}, return_when=asyncio.FIRST_COMPLETED)
        if not conversing.done():  # the answers it waits for will never come
            raise RuntimeError(
                f"Server process {server.pid} exited with return code: {server.returncode}"
            )
        outcome = conversing.result()
        await asyncio.wait_for(exited, 10)  # it was told to exit: let it settle
    except asyncio.CancelledError:
        # Ctrl-C: nothing more is shown, and answers to the requests given up on are
        # not errors (pygls logs each as one).
        client.quiet = True
        logging.getLogger("pygls").setLevel(logging.CRITICAL)
        raise
    finally:
        for task in (stderr_task, conversing, exited, client.reading):
            if task is not None:
                task.cancel()
        if server is not None and server.returncode is None:
            if server.stdin is not None:  # end of input: the server closes its sessions
                server.stdin.close()
            await stop_after(server, 0.4)
        await stop(fake, 0.2)
    return outcome


async def start_offline_model(
    script: Path, env: dict[str, str], children: Children
) -> asyncio.subprocess.Process:
    """The fake model serving the demo's script; ``env`` then points the server at it."""
    script.write_text(json.dumps(demo_script()), encoding="utf-8")
    fake, url = await start_fake_model(script, env)
    children.add(fake)
    env.update(OPENAI_BASE_URL=url, OPENAI_API_KEY="offline", WAVE_MODEL=OFFLINE_MODEL)
    return fake


def show_setup(console: Console, env: Mapping[str, str], project: Path, *, offline: bool) -> None:
    """The model the demo talks to and the project it works in."""
    console.print(
        Panel.fit(
            f"model: [bold]{escape(env['WAVE_MODEL'])}[/] at "
            f"{escape(env.get('OPENAI_BASE_URL') or 'the OpenAI API')}"
            f"{' (offline, scripted)' if offline else ' (live)'}\n"
            f"project: {project} (a throwaway git repo)",
            title="wave-ls demo",
        )
    )


def show_summary(
    console: Console,
    client: DemoClient,
    project: Path,
    results: list[TurnResult],
    transcript: Transcript,
) -> None:
    """What happened: the turns, the tools and subagents, the tokens and the diff."""
    diff = subprocess.run(
        ["git", "diff", "--stat"], cwd=project, capture_output=True, text=True
    ).stdout
    console.print(
        Panel.fit(
            f"turns: {len(results)} ({', '.join(r['status'] for r in results)})\n"
            f"messages in the transcript: {len(transcript['messages'])}\n"
            f"tool calls: {client.tool_calls}; permission prompts: {len(client.permissions)}\n"
            f"subagent delegations: {escape(', '.join(client.delegations)) or 'none'}\n"
            f"kept worktrees: {len(client.worktrees)} (deleted with the demo's repository)\n"
            f"tokens: {client.main_tokens + client.subagent_tokens:,} "
            f"(main agent {client.main_tokens:,}, subagents {client.subagent_tokens:,})\n"
            f"git diff --stat:\n{diff.strip() or '(no changes)'}",
            title="what happened",
        )
    )


async def stop_after(process: asyncio.subprocess.Process, wait: float) -> None:
    """Give a child ``wait`` seconds to end on its own, then stop it."""
    try:
        await asyncio.wait_for(process.wait(), wait)
    except TimeoutError:
        await stop(process, 0.2)


async def converse(
    client: DemoClient, console: Console, project: Path
) -> tuple[list[TurnResult], Transcript]:
    """The scripted conversation: each message, then the background run's notice."""
    await client.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(
                experimental={"wave": {"permissionRequest": True}},
            ),
        )
    )
    client.initialized(types.InitializedParams())
    agents = await client.protocol.send_request_async("wave/agents/list", {"cwd": str(project)})
    names = ", ".join(a["name"] for a in agents["agents"])
    console.print(f"[dim]subagents: {escape(names)}[/]")
    session = await client.protocol.send_request_async(
        "wave/session/new", {"cwd": str(project), "permissionMode": "default"}
    )
    results: list[TurnResult] = []
    for text in MESSAGES:
        you(console, text)
        result = await client.protocol.send_request_async(
            "wave/chat/send", {"sessionId": session["sessionId"], "text": text}
        )
        client.end_stream()
        results.append(result)
        if result["status"] != "completed":
            console.print(f"[red]turn {result['status']}: {escape(result.get('error', ''))}[/]")
    # The background subagent ends on its own; the server then starts a turn so the
    # main agent can react to the notice.
    await asyncio.wait_for(client.notified.wait(), 60)
    client.end_stream()
    messages = await client.protocol.send_request_async(
        "wave/session/messages", {"sessionId": session["sessionId"]}
    )
    await client.shutdown_async(None)
    client.exit(None)
    return results, messages


def you(console: Console, text: str) -> None:
    """The user's message: a rule on a terminal, a plain line elsewhere."""
    if console.is_terminal:
        console.rule(f"[bold]you ›[/] {escape(text)}", align="left")
    else:
        console.print(f"[bold]you ›[/] {escape(text)}")
