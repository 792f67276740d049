"""The command line on a real terminal (a pseudo-terminal, as a person at a shell): Ctrl-C in
``wave-ls run`` and ``wave-ls demo``, ``wave-ls demo --live``'s prompts, and what a bare
``wave-ls`` says there (issue 28 points 5, 6 and 8)."""

from __future__ import annotations

import json
import time
from pathlib import Path

from tests.support.fake_model import FakeModelServer, call, reply, route
from tests.support.lsp import server_env
from tests.support.terminal import Terminal, alive, descendants
from tests.support.waiting import until_blocking
from wave_ls.demo.script import demo_script

# Ctrl-C ends the process within a second (cli/interrupt.py: 0.8 s at most for settling);
# the margin is for a loaded test machine.
PROMPT_EXIT_S = 1.5


def offline_env(home: Path) -> dict[str, str]:
    # A configured endpoint where nothing listens: the offline demo must not use it.
    return server_env(home, "http://127.0.0.1:9/v1")


def wait_for_process(pid: int, argv_part: str, timeout: float = 30) -> int:
    """The pid of a process below ``pid`` whose command line contains ``argv_part``."""
    seen: list[int] = []

    def found() -> bool:
        for child in descendants(pid):
            try:
                cmdline = Path(f"/proc/{child}/cmdline").read_bytes().replace(b"\0", b" ")
            except OSError:
                continue
            if argv_part.encode() in cmdline:
                seen.append(child)
                return True
        return False

    until_blocking(found, timeout, f"{argv_part!r} below {pid}")
    return seen[0]


def test_ctrl_c_in_run_cancels_the_turn_ends_its_command_and_exits_130(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(
        {
            "routes": [
                route(
                    "wait for it",
                    reply("", call("Bash", {"command": "sleep 60", "description": "Wait"})),
                    reply("never reached"),
                )
            ]
        }
    )
    args = ["run", "wait for it", "--cwd", str(project), "--permission-mode", "bypassPermissions"]
    with Terminal(args, env=server_env(home, fake_model.base_url)) as terminal:
        sleep = wait_for_process(terminal.pid, "sleep 60")
        started = descendants(terminal.pid)
        pressed = terminal.interrupt()
        code = terminal.wait(10)
        took = time.monotonic() - pressed
    assert code == 130, terminal.text
    assert took < PROMPT_EXIT_S, took
    assert "Traceback" not in terminal.text
    assert terminal.text.count("interrupted") == 1
    assert "wave-ls run: interrupted: cancelling the turn" in terminal.text
    assert sleep in started and not alive(started, within=3), "left running"
    # The turn was cancelled: its transcript says so, and the model was not asked again.
    assert len(fake_model.chat_bodies()) == 1


def test_ctrl_c_at_a_permission_prompt_and_again_exits_at_once(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(
        {
            "routes": [
                route(
                    "write it",
                    reply("", call("Write", {"file_path": "n.txt", "content": "x"})),
                    reply("done"),
                )
            ]
        }
    )
    args = ["run", "write it", "--cwd", str(project)]
    with Terminal(args, env=server_env(home, fake_model.base_url)) as terminal:
        terminal.expect("Allow Write n.txt? [y/N]")
        pressed = terminal.interrupt()
        terminal.interrupt()
        code = terminal.wait(10)
        took = time.monotonic() - pressed
    assert code == 130 and took < PROMPT_EXIT_S, (took, terminal.text)
    assert "Traceback" not in terminal.text
    assert not (project / "n.txt").exists()


def test_ctrl_c_in_the_demo_stops_it_and_its_processes(home: Path) -> None:
    with Terminal(["demo"], env=offline_env(home)) as terminal:
        terminal.expect("wave ›")
        children = descendants(terminal.pid)
        assert len(children) >= 2  # the offline model and the server (and their helpers)
        pressed = terminal.interrupt()
        code = terminal.wait(10)
        took = time.monotonic() - pressed
    assert code == 130, terminal.text
    assert took < PROMPT_EXIT_S, took
    assert "Traceback" not in terminal.text
    assert terminal.text.count("interrupted") == 1
    assert not alive(children, within=3), "the demo left processes running"


def test_demo_live_says_so_first_and_asks_at_each_prompt(
    fake_model: FakeModelServer, home: Path
) -> None:
    fake_model.set_script(demo_script())
    with Terminal(["demo", "--live"], env=server_env(home, fake_model.base_url)) as terminal:
        shown = terminal.expect("allow Edit calc.py [y/N]")
        said = f"wave-ls demo --live: the model is test-model at {fake_model.base_url}"
        assert shown.index(said) < shown.index("wave-ls demo ─") < shown.index("allow Edit")
        terminal.type("n\n")
        terminal.expect("allow Bash")
        terminal.interrupt()
        assert terminal.wait(10) == 130
    assert "Traceback" not in terminal.text
    assert "the demo approves" not in terminal.text
    denied = json.dumps(fake_model.chat_bodies()[-1]["messages"])
    assert "The user denied permission to Edit calc.py" in denied


def test_bare_wave_ls_on_a_terminal_says_what_it_does_and_serves(home: Path) -> None:
    with Terminal([], env=server_env(home), stdout_pipe=True, raw=True) as terminal:
        shown = terminal.expect("wave-ls run")
        assert "serving the Language Server Protocol on stdin/stdout" in shown
        assert len(shown.strip().splitlines()) == 1
        body = json.dumps(
            {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}
        )
        terminal.type(f"Content-Length: {len(body)}\r\n\r\n{body}")
        stdout = terminal.process.stdout
        assert stdout is not None
        header = stdout.readline()
        assert header.startswith(b"Content-Length:"), header
        while stdout.readline().strip():
            pass
        answer = json.loads(stdout.read(int(header.split(b":")[1])))
        assert answer["id"] == 1 and "capabilities" in answer["result"]
