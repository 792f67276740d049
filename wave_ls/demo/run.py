"""``wave-ls demo``: real processes end to end, shown in the terminal.

The offline model server and ``wave-ls --stdio`` are started as subprocesses; this module is
the LSP client (pygls), the way an editor would be: it opens a session in a throwaway git
repo, sends the scripted messages, answers permission prompts, and renders the streamed
answer, every tool block and each subagent's ``$/progress`` live.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from lsprotocol import types
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
from wave_ls.server.protocol import WaveProtocol

MESSAGES = (FIX_MESSAGE, EXPLORE_MESSAGE, ISOLATED_MESSAGE, BACKGROUND_MESSAGE)


class DemoClient(LanguageClient):
    """An LSP client that renders what the server reports."""

    def __init__(self, console: Console) -> None:
        super().__init__("wave-demo", "1", protocol_cls=WaveProtocol)
        self.console = console
        self.streaming = False
        self.tool_calls = 0
        self.delegations: list[str] = []
        self.permissions: list[str] = []
        self.worktrees: list[str] = []
        self.notified = asyncio.Event()
        self.turns_ended = 0

        @self.feature("wave/session/update")
        def on_update(params: dict[str, Any]) -> None:
            self.render_update(params)

        @self.feature("wave/permission/request")
        def on_permission(params: dict[str, Any]) -> dict[str, Any]:
            self.end_stream()
            self.permissions.append(params["summary"])
            self.console.print(
                f"  [yellow]? allow {params['summary']}[/] → yes (the demo approves)"
            )
            return {"allowed": True}

        @self.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def on_create(params: types.WorkDoneProgressCreateParams) -> None:
            return None

        @self.feature(types.PROGRESS)
        def on_progress(params: types.ProgressParams) -> None:
            self.render_progress(params.value)

        @self.feature(types.WINDOW_SHOW_MESSAGE)
        def on_message(params: types.ShowMessageParams) -> None:
            self.console.print(f"[yellow]server: {escape(params.message)}[/]")

    def end_stream(self) -> None:
        if self.streaming:
            self.console.out("")
            self.streaming = False

    def render_update(self, update: dict[str, Any]) -> None:
        kind = update.get("kind")
        if kind == "assistantDelta":
            if not self.streaming:
                self.console.print("[bold magenta]wave ›[/] ", end="")
                self.streaming = True
            self.console.out(update["delta"], end="", highlight=False)
        elif kind == "toolBlock" and update["status"] in ("completed", "failed"):
            self.end_stream()
            self.tool_calls += 1
            mark = "[green]✓[/]" if update["status"] == "completed" else "[red]✗[/]"
            summary = update.get("shortResult") or first_line(update.get("result", ""))
            self.console.print(
                f"  {mark} [cyan]{update['name']}[/] {argument(update)}  [dim]{summary}[/]"
            )
        elif kind == "assistantMessage":
            self.end_stream()
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
        if kind == "toolBlock" and update["name"] == "Agent" and update["status"] == "completed":
            for line in (update.get("result") or "").splitlines():
                if line.startswith("Worktree"):
                    self.worktrees.append(line)
                    self.console.print(f"    [green]{escape(line)}[/]")

    def render_progress(self, value: Any) -> None:
        self.end_stream()
        fields = value if isinstance(value, dict) else vars(value)
        kind = fields.get("kind")
        if kind == "begin":
            self.delegations.append(fields["title"])
            self.console.print(f"  [bold blue]⇢ subagent {escape(fields['title'])}[/]")
        elif kind == "report":
            self.console.print(f"    [blue]│ {escape(fields.get('message') or '')}[/]")
        elif kind == "end":
            self.console.print(f"  [bold blue]⇠ {escape(fields.get('message') or '')}[/]")


def argument(update: dict[str, Any]) -> str:
    try:
        args = json.loads(update.get("arguments") or "{}")
    except json.JSONDecodeError:
        return ""
    for key in ("file_path", "pattern", "command", "description"):
        if isinstance(args.get(key), str):
            text = args[key]
            return text if len(text) < 70 else text[:69] + "…"
    return ""


def first_line(text: str) -> str:
    lines = text.strip().splitlines()
    return lines[0][:80] if lines else ""


async def start_fake_model(script_path: Path) -> tuple[asyncio.subprocess.Process, str]:
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
    )
    assert process.stdout is not None
    line = (await asyncio.wait_for(process.stdout.readline(), 20)).decode()
    return process, line.strip().split()[-1]


async def drain(stream: asyncio.StreamReader | None, sink: list[str]) -> None:
    while stream and (line := await stream.readline()):
        sink.append(line.decode(errors="replace"))


async def run_demo(console: Console) -> int:
    real_model = bool(os.environ.get("OPENAI_BASE_URL") and os.environ.get("WAVE_MODEL"))
    with tempfile.TemporaryDirectory(prefix="wave-demo-") as tmp:
        project, home = Path(tmp) / "project", Path(tmp) / "home"
        project.mkdir()
        home.mkdir()
        make_project(project)
        env = dict(os.environ, HOME=str(home))
        fake = None
        if not real_model:
            script = Path(tmp) / "script.json"
            script.write_text(json.dumps(demo_script()), encoding="utf-8")
            fake, url = await start_fake_model(script)
            env.update(
                OPENAI_BASE_URL=url, OPENAI_API_KEY="offline", WAVE_MODEL="wave-offline-demo"
            )
        console.print(
            Panel.fit(
                f"model: [bold]{env['WAVE_MODEL']}[/] at {env['OPENAI_BASE_URL']}"
                f"{' (offline, scripted)' if fake else ''}\n"
                f"project: {project} (a throwaway git repo)",
                title="wave-ls demo",
            )
        )
        client = DemoClient(console)
        stderr: list[str] = []
        await client.start_io(sys.executable, "-m", "wave_ls", "--stdio", env=env)
        stderr_task = asyncio.create_task(
            drain(client._server.stderr if client._server else None, stderr)
        )
        try:
            await client.initialize_async(
                types.InitializeParams(
                    capabilities=types.ClientCapabilities(
                        window=types.WindowClientCapabilities(work_done_progress=True),
                        experimental={"wave": {"permissionRequest": True}},
                    ),
                )
            )
            client.initialized(types.InitializedParams())
            agents = await client.protocol.send_request_async(
                "wave/agents/list", {"cwd": str(project)}
            )
            names = ", ".join(a["name"] for a in agents["agents"])
            console.print(f"[dim]subagents: {names}[/]")
            session = await client.protocol.send_request_async(
                "wave/session/new", {"cwd": str(project), "permissionMode": "default"}
            )
            results = []
            for text in MESSAGES:
                console.rule(f"[bold]you ›[/] {escape(text)}", align="left")
                result = await client.protocol.send_request_async(
                    "wave/chat/send", {"sessionId": session["sessionId"], "text": text}
                )
                await asyncio.sleep(0.1)  # let the last progress notifications arrive
                client.end_stream()
                results.append(result)
                if result["status"] != "completed":
                    console.print(f"[red]turn {result['status']}: {result.get('error', '')}[/]")
            # The background subagent ends on its own; the server then starts a turn so the
            # main agent can react to the notice.
            await asyncio.wait_for(client.notified.wait(), 60)
            client.end_stream()
            messages = await client.protocol.send_request_async(
                "wave/session/messages", {"sessionId": session["sessionId"]}
            )
            await client.shutdown_async(None)
            client.exit(None)
        finally:
            stderr_task.cancel()
            if client._server and client._server.returncode is None:
                await asyncio.wait_for(client._server.wait(), 10)
            if fake:
                fake.terminate()
                await fake.wait()
        diff = subprocess.run(
            ["git", "diff", "--stat"], cwd=project, capture_output=True, text=True
        ).stdout
        tokens = sum(r.get("usage", {}).get("total_tokens", 0) for r in results)
        console.print(
            Panel.fit(
                f"turns: {len(results)} ({', '.join(r['status'] for r in results)})\n"
                f"messages in the transcript: {len(messages['messages'])}\n"
                f"tool calls: {client.tool_calls}; permission prompts: {len(client.permissions)}\n"
                f"subagent delegations: {', '.join(client.delegations) or 'none'}\n"
                f"kept worktrees: {len(client.worktrees)}\n"
                f"tokens: {tokens}\n"
                f"git diff --stat:\n{diff.strip() or '(no changes)'}",
                title="what happened",
            )
        )
        return 0 if all(r["status"] == "completed" for r in results) else 1
