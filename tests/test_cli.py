"""The command-line adapters in real subprocesses: ``wave-ls run``, ``wave-ls demo``."""

from __future__ import annotations

import gc
import itertools
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests.support.fake_model import FakeModelServer, call, reply, route
from tests.support.lsp import server_env
from tests.support.python_probe import run_python


def stray_processes_of(done: subprocess.CompletedProcess[str]) -> list[str]:
    """Processes of the temporary demo folder that still run (it made them, it ends them)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if "wave-demo-" in cmdline and "fake-model" in cmdline:
            found.append(cmdline)
    return found


def wave_ls(
    *args: str, env: dict[str, str], cwd: Path | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "wave_ls", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def test_run_answers_on_stdout_with_progress_on_stderr(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(
        {
            "routes": [
                route(
                    "what does answer return",
                    reply("", call("Read", {"file_path": "src/app.py"})),
                    reply("It returns 41."),
                )
            ]
        }
    )
    done = wave_ls(
        "run",
        "what does answer return?",
        "--cwd",
        str(project),
        env=server_env(home, fake_model.base_url),
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "It returns 41.\n"
    assert "Read" in done.stderr and "src/app.py" in done.stderr
    assert "tokens" in done.stderr
    assert "return 41" in str(fake_model.chat_bodies()[1]["messages"])


def test_run_leaves_a_complete_transcript_after_its_fast_exit(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # The process skips the interpreter's teardown once the turn has settled: everything
    # the session wrote must already be on disk, and the session listed.
    fake_model.set_script({"routes": [route("hello", reply("Hi there."))]})
    done = wave_ls("run", "hello", "--cwd", str(project), env=server_env(home, fake_model.base_url))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Hi there.\n"
    [transcript] = (home / ".wave" / "sessions").glob("*.jsonl")
    records = [json.loads(line) for line in transcript.read_text().splitlines()]
    assert records[0]["type"] == "session"
    said = [r["message"] for r in records if r["type"] == "message"]
    assert [m["role"] for m in said][-2:] == ["user", "assistant"]
    assert said[-1]["content"] == "Hi there."
    index = json.loads((home / ".wave" / "sessions" / "index.json").read_text())
    assert transcript.stem in json.dumps(index)


def test_the_fast_exit_passes_over_a_worktree_module_still_being_imported() -> None:
    # The isolation loader's thread (worktrees.workspace.load_isolation_soon) may still be
    # importing the worktree records module when a short run ends: the module is then in
    # sys.modules with its body not yet run, and has written nothing to wait for.
    script = (
        "import sys, types\n"
        "name = 'wave_ls.worktrees.registry_file'\n"
        "sys.modules[name] = types.ModuleType(name)\n"
        "from wave_ls.cli.main import exit_settled\n"
        "print('settled', flush=True)\n"
        "exit_settled(0)\n"
    )
    done = run_python(script)
    assert (done.returncode, done.stdout, done.stderr) == (0, "settled\n", "")


def test_run_with_an_agent_mention_reminds_the_model(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # MENTION-4 from the CLI spelling
    fake_model.set_script({"routes": [route("find the tests", reply("ok"))]})
    done = wave_ls(
        "run",
        "@agent:Explore find the tests",
        "--cwd",
        str(project),
        env=server_env(home, fake_model.base_url),
    )
    assert done.returncode == 0, done.stderr
    users = [m["content"] for m in fake_model.chat_bodies()[0]["messages"] if m["role"] == "user"]
    assert any("<system-reminder>" in u and "subagent_type" in u and "Explore" in u for u in users)


def test_run_without_an_endpoint_says_what_to_set(home: Path, project: Path) -> None:
    done = wave_ls("run", "hi", "--cwd", str(project), env=server_env(home))
    assert done.returncode == 2
    assert "OPENAI_BASE_URL" in done.stderr and "WAVE_MODEL" in done.stderr
    assert done.stdout == ""


def test_run_fails_with_a_clear_message(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script({"routes": [route("hi", reply("x", fault={"status": 401}))]})
    done = wave_ls("run", "hi", "--cwd", str(project), env=server_env(home, fake_model.base_url))
    assert done.returncode == 1
    assert fake_model.base_url in done.stderr and "test-model" in done.stderr
    # Once, and in the words of the command line (issue 28 point 8).
    assert done.stderr.count("rejected the API key") == 1, done.stderr
    assert "Set OPENAI_API_KEY to a key this endpoint accepts." in done.stderr
    assert "initialization option" not in done.stderr


def test_run_says_exactly_that_the_model_is_missing(home: Path, project: Path) -> None:
    env = {**server_env(home), "OPENAI_BASE_URL": "http://127.0.0.1:9/v1"}
    done = wave_ls("run", "hi", "--cwd", str(project), env=env)
    assert done.returncode == 2
    assert "WAVE_MODEL is not set" in done.stderr and "http://127.0.0.1:9/v1" in done.stderr
    assert "No model endpoint is configured" not in done.stderr


def test_run_worktree_flag_before_the_prompt_keeps_the_prompt(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script({"routes": [route("fix it", reply("Fixed."))]})
    env = server_env(home, fake_model.base_url)
    done = wave_ls("run", "-w", "fix it", "--cwd", str(project), env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "Fixed.\n"
    [line] = [line for line in done.stderr.splitlines() if "in worktree" in line]
    assert f"{project}/.wave/worktrees/" in line and "fix it" not in line
    # A name is still given as -w NAME before the prompt, or --worktree=NAME.
    for spelled in (["-w", "named"], ["--worktree=named"]):
        done = wave_ls("run", *spelled, "fix it", "--cwd", str(project), env=env)
        assert done.returncode == 0, done.stderr
        assert f"{project}/.wave/worktrees/named " in done.stderr
    no_prompt = wave_ls("run", "--cwd", str(project), env=env)
    assert no_prompt.returncode == 2 and "no prompt" in no_prompt.stderr


def test_run_refuses_edits_without_a_terminal_in_default_mode(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    fake_model.set_script(
        {
            "routes": [
                route(
                    "write it",
                    reply("", call("Write", {"file_path": "n.txt", "content": "x"})),
                    reply("could not"),
                )
            ]
        }
    )
    env = server_env(home, fake_model.base_url)
    done = wave_ls("run", "write it", "--cwd", str(project), env=env)
    # Exit 3: the turn ended, but what it was asked to do was refused (issue 28 point 8).
    assert done.returncode == 3 and not (project / "n.txt").exists()
    assert "--permission-mode" in str(fake_model.chat_bodies()[-1]["messages"])
    [line] = [line for line in done.stderr.splitlines() if line.startswith("wave-ls run: denied")]
    assert "denied Write n.txt: no terminal to ask" in line
    assert "--permission-mode acceptEdits" in line
    fake_model.reset()
    done = wave_ls(
        "run", "write it", "--cwd", str(project), "--permission-mode", "acceptEdits", env=env
    )
    assert done.returncode == 0 and (project / "n.txt").read_text() == "x"


def test_version_and_module_entry_point(home: Path) -> None:
    done = wave_ls("--version", env=server_env(home))
    assert done.returncode == 0 and done.stdout.strip()
    help_text = wave_ls("--help", env=server_env(home)).stdout
    for command in ("agents", "run", "fake-model", "demo", "--stdio", "--tcp"):
        assert command in help_text


def test_each_subcommand_parses_its_own_arguments_and_serving_imports_none(
    home: Path,
) -> None:
    # The server's start only builds the command line: no subcommand module is imported.
    probe = (
        "import sys; from wave_ls.cli.main import build_parser; "
        "args = build_parser(['--log-level', 'run', '--stdio']).parse_args("
        "['--log-level', 'run', '--stdio']); "
        "print(args.command, args.log_level, sorted(m for m in sys.modules if '_cmd' in m))"
    )
    done = run_python(probe, env=server_env(home))
    assert done.stdout.split() == ["None", "run", "[]"], done.stderr
    # A subcommand still gets its own options, and its help lists them.
    run_help = wave_ls("run", "--help", env=server_env(home)).stdout
    assert "--permission-mode" in run_help and "--worktree" in run_help
    bad = wave_ls("run", "hi", "--permission-mode", "sideways", env=server_env(home))
    assert bad.returncode == 2 and "invalid choice: 'sideways'" in bad.stderr
    assert "fake-model" in wave_ls("--port", "1", "--help", env=server_env(home)).stdout
    # How editors start it (`wave-ls` or `wave-ls --stdio`) builds no parser at all.
    for plain in ([], ["--stdio"]):
        served = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "wave_ls", *plain],
            env=server_env(home),
            stdin=subprocess.DEVNULL,  # end of input at once: the server stops
            capture_output=True,
            text=True,
            timeout=60,
        )
        imported = {line.rsplit("|", 1)[-1].strip() for line in served.stderr.splitlines()}
        assert "wave_ls.server.app" in imported, served.stderr[-2000:]
        assert "argparse" not in imported


def test_demo_runs_offline_and_delegates(home: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "WAVE_"))}
    # A configured endpoint where nothing listens: the offline demo never uses it.
    env.update(HOME=str(home), OPENAI_BASE_URL="http://127.0.0.1:9/v1", WAVE_MODEL="real")
    done = wave_ls("demo", env=env, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "offline, scripted" in out and "127.0.0.1:9/" not in out
    assert "Edit calc.py" in out and "allow" in out  # tools, permission prompts
    assert "subagent Explore: Find calculator tests" in out  # the delegation's progress
    assert "calc.py | 2" in out  # the fix is on disk
    assert "turns: 4 (completed, completed, completed, completed)" in out
    assert "Worktree kept:" in out and "kept worktrees: 1" in out  # the isolated delegation
    assert "ended: the agent is told" in out  # the background run's notice
    assert "The background test run finished" in out  # ... and the turn it started
    # Issue 28 point 9: each line once and in order, one way of counting tokens, lines not
    # cut at 80 columns off a terminal, no advice to merge in the repository it deletes.
    lines = out.splitlines()
    activity = [line for line in lines if line.startswith(("    │", "  ⇢", "  ⇠"))]
    assert all(one != next_one for one, next_one in itertools.pairwise(activity)), activity
    assert not any("tokens" in line for line in activity if "│" in line)  # only news
    begun = [line for line in activity if "⇢" in line]
    assert len(begun) == len(set(begun)) == 3, begun
    explore = [line.strip() for line in lines if "Find calculator tests" in line]
    assert explore[0] == "⇢ subagent Explore: Find calculator tests"
    assert lines.index("    │ Glob **/test_*.py") < lines.index("    │ Read test_calc.py")
    assert re.search(r"tokens: [\d,]+ \(main agent [\d,]+, subagents [\d,]+\)", out)
    counts = " ".join(line for line in lines if "token" in line)
    assert not re.search(r"\d{4}", counts), counts  # no 76840 beside 13,436
    assert (
        "you › The add function in calc.py is broken. Please find the bug, fix it and check it.\n"
        in out
    )
    assert "merge" not in out.lower()
    assert stray_processes_of(done) == []


def test_run_waits_for_background_work_and_answers_after_it(
    fake_model: FakeModelServer, home: Path, project: Path
) -> None:
    # BG-1 / FAIL-4 in print mode: the run ends only after the agent heard back.
    fake_model.set_script(
        {
            "routes": [
                route(
                    "count in the background",
                    reply(
                        "",
                        call(
                            "Agent",
                            {
                                "description": "Count files",
                                "prompt": "COUNT TASK",
                                "subagent_type": "general-purpose",
                                "run_in_background": True,
                            },
                        ),
                    ),
                    reply("Started."),
                ),
                route("COUNT TASK", reply("There are 2 files.", delay=0.5)),
                route("There are 2 files.", reply("The background count says 2 files.")),
            ]
        }
    )
    prompt = "count in the background"
    done = wave_ls("run", prompt, "--cwd", str(project), env=server_env(home, fake_model.base_url))
    assert done.returncode == 0, done.stderr
    assert done.stdout == "The background count says 2 files.\n"
    notices = [
        m["content"]
        for m in fake_model.chat_bodies()[-1]["messages"]
        if m["role"] == "user" and "<task-notification>" in m["content"]
    ]
    assert len(notices) == 1 and "There are 2 files." in notices[0]


def test_run_turns_the_collector_back_on_at_the_first_answer() -> None:
    """``wave-ls run`` starts with the garbage collector off (its start-up allocations live
    to the end); the first event of the model's first answer turns it back on."""
    from wave_ls.cli.run_cmd import CollectorBackAtFirstAnswer
    from wave_ls.runtime.core import (
        AssistantContentDelta,
        Event,
        Message,
        MessagesChanged,
        UserMessageAdded,
    )

    seen: list[Event] = []

    class Recorder:
        def emit(self, event: Event) -> None:
            seen.append(event)

    sink = CollectorBackAtFirstAnswer(Recorder())
    user = Message(role="user", content="hi")
    before: list[Event] = [UserMessageAdded(user), MessagesChanged([user])]
    answer = AssistantContentDelta("Hel")
    gc.disable()
    try:
        for event in before:
            sink.emit(event)
        assert not gc.isenabled()  # the request is still being built
        sink.emit(answer)
        assert gc.isenabled()
        assert gc.get_freeze_count() > 0
    finally:
        gc.enable()
        gc.unfreeze()
    assert seen == [*before, answer]  # every event passed on, in order
