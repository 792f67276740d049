"""What the benchmarks share: printed figures, the offline model in its own process, a real
``wave-ls`` server driven by a plain pygls client, and generated repositories and agents.

Everything listens on and talks to 127.0.0.1 only. Figures go to stdout, one line each::

    completion p99 over LSP (1,000 agents, 20,000 files): 6.1 ms  (target <= 15 ms)  OK

Not a test module: nothing here is collected by pytest.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import io
import json
import math
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager, suppress
from pathlib import Path
from types import TracebackType
from typing import Any

from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.uris import from_fs_path

from wave_ls.server.protocol import WaveProtocol

PYTHON = sys.executable


def ensure_bytecode() -> None:
    """Compile wave_ls to ``__pycache__`` first, as an install does: with
    ``PYTHONDONTWRITEBYTECODE`` set (it is on these machines) an editable install would
    otherwise compile every module at every start, which no user's install does."""
    import compileall

    import wave_ls

    compileall.compile_dir(Path(wave_ls.__file__).parent, quiet=1, workers=1)


ensure_bytecode()
HOST = "127.0.0.1"
MODEL = "bench-model"
API_KEY = "bench-key"
UPDATE = "wave/session/update"
GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.com",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.com",
}

# --------------------------------------------------------------------------- figures


def _number(value: float, unit: str) -> str:
    if unit == "x":
        return f"{value:.2f}x"
    if value == int(value) and abs(value) < 1e15:
        return f"{int(value):,} {unit}".rstrip()
    digits = 0 if abs(value) >= 100 else 1 if abs(value) >= 1 else 2
    return f"{value:,.{digits}f} {unit}".rstrip()


def figure(
    label: str,
    value: float,
    unit: str,
    target: float | None = None,
    *,
    at_least: bool = False,
    note: str = "",
) -> bool:
    """Print ``label: value unit  (target <= t unit)  OK|MISS``; True when the target is met.

    Without ``target`` the line is informational and always "met".
    """
    text = f"{label}: {_number(value, unit)}"
    met = True
    if target is not None:
        met = value >= target if at_least else value <= target
        text += f"  (target {'>=' if at_least else '<='} {_number(target, unit)})"
        text += "  OK" if met else "  MISS"
    if note:
        text += f"  [{note}]"
    print(text, flush=True)
    return met


def paired_ratio(ours: Sequence[float], reference: Sequence[float]) -> float:
    """The median of ``ours[i] / reference[i]``: runs measured one right after the other,
    round by round, share the machine's load, and the median of their ratios is decided
    by no single lucky or unlucky run (the ratio of the two best runs was: one reference
    run 18 % under its own median made a 1.02x ratio of medians read 1.12x)."""
    return statistics.median(o / r for o, r in zip(ours, reference, strict=True))


def check(label: str, passed: bool, detail: str = "") -> bool:
    """Print a yes/no requirement as ``label: yes|no  OK|MISS``."""
    text = f"{label}: {'yes' if passed else 'no'}  {'OK' if passed else 'MISS'}"
    if detail:
        text += f"  [{detail}]"
    print(text, flush=True)
    return passed


def note(text: str) -> None:
    """An indented line of context under a figure (sizes, set-up times, causes)."""
    print(f"  {text}", flush=True)


def heading(text: str) -> None:
    print(f"\n== {text}", flush=True)


def percentile(values: Sequence[float], p: float) -> float:
    """The ``p``-th percentile (0..100), linear between closest ranks."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    rank = (len(ordered) - 1) * p / 100
    low, high = math.floor(rank), math.ceil(rank)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


def max_in_window(times: Sequence[float], window: float = 1.0) -> int:
    """The largest number of ``times`` inside any interval ``[t, t + window)``."""
    ordered = sorted(times)
    best = start = 0
    for end, moment in enumerate(ordered):
        while moment - ordered[start] >= window:
            start += 1
        best = max(best, end - start + 1)
    return best


def parse_options(doc: str | None, *, profile: bool = False) -> argparse.Namespace:
    """``--quick`` (smaller sizes), and ``--profile`` where a benchmark offers it."""
    parser = argparse.ArgumentParser(
        description=(doc or "").strip().splitlines()[0] if doc else None
    )
    parser.add_argument("--quick", action="store_true", help="smaller sizes, a quick look")
    if profile:
        parser.add_argument(
            "--profile",
            action="store_true",
            help="also profile the measured work in-process (cProfile) and print the top",
        )
    return parser.parse_args()


def print_profile(
    profiler: cProfile.Profile | Path, limit: int = 20, sort: str = "cumulative"
) -> None:
    """The top of a cProfile run (or its saved file), indented under the figures."""
    out = io.StringIO()
    source = str(profiler) if isinstance(profiler, Path) else profiler
    pstats.Stats(source, stream=out).sort_stats(sort).print_stats(limit)
    for line in out.getvalue().splitlines():
        if line.strip():
            note(line.rstrip())


# Where the time of a profiled run goes, by (file part, function name); the cumulative time
# of a function's outermost calls, as a share of the whole run.
SDK_PARTS = {
    "openai SDK: request transform (params -> JSON-able dicts)": (
        "openai/_utils/_transform.py",
        "async_maybe_transform",
    ),
    "openai SDK: stream chunks -> pydantic models": ("openai/_models.py", "construct_type"),
}


def print_shares(profiler: cProfile.Profile, parts: dict[str, tuple[str, str]]) -> None:
    """Print each part's share of a profiled run, and the own time spent in wave_ls code."""
    stats = pstats.Stats(profiler)
    total = stats.total_tt  # type: ignore[attr-defined]
    table = stats.stats  # type: ignore[attr-defined]
    for label, (file_part, function) in parts.items():
        cumulative = max(
            (
                row[3]
                for (path, _line, name), row in table.items()
                if name == function and file_part in path
            ),
            default=0.0,
        )
        note(f"{cumulative / total:4.0%}  {label}")
    own = sum(row[2] for (path, _line, _name), row in table.items() if "/wave_ls/" in path)
    note(f"{own / total:4.0%}  own time in wave_ls modules")


# --------------------------------------------------------------------------- offline model


class FakeModelProcess:
    """``wave-ls fake-model`` in its own process, so its work never shares our GIL.

    ``with FakeModelProcess(script) as model: model.base_url``; ``records()`` are the
    recorded chat requests ``{time, body, ...}`` (``time`` is the server's ``time.time()`` when
    the request body had been read).
    """

    def __init__(self, script: Any) -> None:
        self.script = script
        self.base_url = ""
        self._process: subprocess.Popen[str] | None = None
        self._dir = tempfile.TemporaryDirectory(prefix="wave-bench-model-")
        # Never route 127.0.0.1 through a proxy from the environment.
        self._opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def __enter__(self) -> FakeModelProcess:
        path = Path(self._dir.name) / "script.json"
        path.write_text(json.dumps(self.script), encoding="utf-8")
        command = [PYTHON, "-m", "wave_ls", "fake-model", "--host", HOST, "--port", "0"]
        self._process = subprocess.Popen(
            [*command, "--script", str(path)],
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        assert self._process.stdout is not None
        line = self._process.stdout.readline().strip()
        if not line.startswith("listening on "):
            self.__exit__(None, None, None)
            raise RuntimeError(f"the fake model did not start: {line!r}")
        self.base_url = line.split()[-1]
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._process is not None and self._process.poll() is None:
            self._process.terminate()
            try:
                self._process.wait(5)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._dir.cleanup()

    @property
    def pid(self) -> int:
        assert self._process is not None
        return self._process.pid

    @property
    def root_url(self) -> str:
        return self.base_url.removesuffix("/v1")

    def _call(self, method: str, path: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.root_url + path,
            data=data,
            method=method,
            headers={"Content-Type": "application/json"},
        )
        with self._opener.open(request, timeout=30) as response:
            return json.loads(response.read())

    def set_script(self, script: Any) -> None:
        self._call("POST", "/_script", script)

    def reset(self) -> None:
        self._call("POST", "/_reset", {})

    def records(self) -> list[dict[str, Any]]:
        """Recorded chat completion requests, in arrival order."""
        return [
            r
            for r in self._call("GET", "/_requests")
            if r["method"] == "POST" and isinstance(r.get("body"), dict)
        ]

    def env(self) -> dict[str, str]:
        """Environment variables pointing ``wave-ls`` at this model."""
        return {"OPENAI_BASE_URL": self.base_url, "OPENAI_API_KEY": API_KEY, "WAVE_MODEL": MODEL}


def model_script(routes: list[dict[str, Any]], **options: Any) -> dict[str, Any]:
    """A fake-model script for ``MODEL`` and ``API_KEY`` with these routes."""
    return {"models": [MODEL], "api_key": API_KEY, "routes": routes, **options}


def system_of(body: dict[str, Any]) -> str:
    """The system prompt of a recorded request body."""
    return "\n".join(
        str(m.get("content") or "") for m in body["messages"] if m.get("role") == "system"
    )


# --------------------------------------------------------------------------- LSP client


class BenchClient(LanguageClient):
    """A plain pygls client (like ``wave_ls/demo/run.py``) that timestamps what it receives."""

    def __init__(self) -> None:
        super().__init__("wave-bench", "1", protocol_cls=WaveProtocol)
        # (perf_counter at receipt, params)
        self.updates: list[tuple[float, dict[str, Any]]] = []
        # (perf_counter at receipt, token, value as a dict)
        self.progress_events: list[tuple[float, str, dict[str, Any]]] = []
        self.stderr: list[str] = []
        self.init_seconds = math.nan

        @self.feature(UPDATE)
        def on_update(params: dict[str, Any]) -> None:
            self.updates.append((time.perf_counter(), params))

        @self.feature(types.WINDOW_WORK_DONE_PROGRESS_CREATE)
        def on_create(params: types.WorkDoneProgressCreateParams) -> None:
            return None

        @self.feature(types.PROGRESS)
        def on_progress(params: types.ProgressParams) -> None:
            value = params.value
            fields = value if isinstance(value, dict) else dict(vars(value))
            self.progress_events.append((time.perf_counter(), str(params.token), fields))

        @self.feature("wave/permission/request")
        def on_permission(params: dict[str, Any]) -> dict[str, Any]:
            return {"allowed": True}

        @self.feature(types.WINDOW_SHOW_MESSAGE)
        def on_message(params: types.ShowMessageParams) -> None:
            print(f"  (server says: {params.message})", file=sys.stderr)

    @property
    def pid(self) -> int:
        assert self._server is not None
        return int(self._server.pid)

    async def request(self, method: str, params: Any) -> Any:
        return await self.protocol.send_request_async(method, params)

    def clear(self) -> None:
        self.updates.clear()
        self.progress_events.clear()


def server_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a ``wave-ls`` process: our own, minus any model settings."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "WAVE_"))}
    env.update(HOME=str(home), NO_PROXY="127.0.0.1,localhost", no_proxy="127.0.0.1,localhost")
    env.update(extra)
    return env


async def _drain(stream: asyncio.StreamReader | None, sink: list[str]) -> None:
    while stream is not None and (line := await stream.readline()):
        sink.append(line.decode(errors="replace"))


@asynccontextmanager
async def wave_server(
    env: dict[str, str],
    *,
    root: Path | None = None,
    progress: bool = True,
    profile_to: Path | None = None,
    command: Sequence[str] = ("-m", "wave_ls", "--stdio"),
) -> AsyncIterator[BenchClient]:
    """A ``wave-ls --stdio`` subprocess (or the Python ``command`` given), initialized;
    ``client.init_seconds`` is the time from spawning it to the ``initialize`` result. With
    ``profile_to`` the server runs under cProfile and writes its statistics there when it
    exits."""
    client = BenchClient()
    profiler = ["-m", "cProfile", "-o", str(profile_to)] if profile_to else []
    started = time.perf_counter()
    await client.start_io(PYTHON, *profiler, *command, env=env)
    assert client._server is not None
    drain = asyncio.create_task(_drain(client._server.stderr, client.stderr))
    try:
        await asyncio.wait_for(
            client.initialize_async(
                types.InitializeParams(
                    capabilities=types.ClientCapabilities(
                        window=types.WindowClientCapabilities(work_done_progress=progress),
                        experimental={"wave": {"permissionRequest": True}},
                    ),
                    root_uri=from_fs_path(str(root)) if root else None,
                )
            ),
            60,
        )
        client.init_seconds = time.perf_counter() - started
        client.initialized(types.InitializedParams())
        yield client
        with suppress(Exception):
            await asyncio.wait_for(client.shutdown_async(None), 10)
            client.exit(None)
    except BaseException:
        if client.stderr:
            print("".join(client.stderr[-30:]), file=sys.stderr)
        raise
    finally:
        server = client._server
        with suppress(Exception):
            await asyncio.wait_for(server.wait(), 5)
        if server.returncode is None:
            server.kill()
            await server.wait()
        with suppress(Exception):
            await client.stop()
        drain.cancel()


def rss_mb(pid: int) -> float:
    """The resident set size of a process in MB (``VmRSS`` of ``/proc/<pid>/status``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return math.nan


def cpu_seconds(pid: int) -> float:
    """User + system CPU time a process has used so far (``/proc/<pid>/stat``, 10 ms ticks)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def listen_overflows() -> int:
    """The kernel's count of full listen queues (``TcpExt: ListenOverflows``), or -1.

    The offline model listens with Python's default backlog of 5: when more connections
    arrive at once than it accepts, one SYN is dropped and retried a second later, which
    says nothing about wave-ls. Benchmarks that open many connections at once check this.
    """
    try:
        lines = Path("/proc/net/netstat").read_text().splitlines()
    except OSError:
        return -1
    for names, values in zip(lines[::2], lines[1::2], strict=False):
        if names.startswith("TcpExt:"):
            table = dict(zip(names.split(), values.split(), strict=False))
            return int(table.get("ListenOverflows", -1))
    return -1


# --------------------------------------------------------------------------- workspaces


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env={**os.environ, **GIT_ENV},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout


def make_git_repo(root: Path, files: int, *, per_dir: int = 100) -> None:
    """A committed repository of ``files`` small source files, 100 per directory."""
    root.mkdir(parents=True, exist_ok=True)
    git(root, "init", "-q", "-b", "main")
    (root / ".gitignore").write_text("build/\n*.log\n")
    (root / "README.md").write_text("# bench\n")
    for index in range(files):
        folder = root / "src" / f"pkg{index // per_dir // 20}" / f"mod{index // per_dir}"
        if index % per_dir == 0:
            folder.mkdir(parents=True, exist_ok=True)
        (folder / f"file{index}.py").write_text(f"VALUE = {index}\n")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init")


AREAS = ("test", "review", "docs", "db", "api", "ui", "build", "perf", "security", "infra")
ROLES = ("runner", "writer", "checker", "fixer", "planner")


def agent_name(index: int) -> str:
    return f"{AREAS[index % len(AREAS)]}-{ROLES[index // len(AREAS) % len(ROLES)]}-{index:04d}"


def write_agents(folder: Path, count: int, *, tools: str = "Read, Grep, Glob, Bash") -> None:
    """``count`` realistic subagent files (folded description, tool list, a body)."""
    folder.mkdir(parents=True, exist_ok=True)
    for index in range(count):
        name = agent_name(index)
        area, role = name.split("-")[:2]
        (folder / f"{name}.md").write_text(
            f"""---
name: {name}
description: >-
  Use PROACTIVELY for {area} work ({role}) in area {index}: knows that part of
  the code and reports back with paths and line numbers.
tools: {tools}
model: inherit
---
You are the {role} for {area} area {index}. Read the relevant files first, then report
what you found with absolute paths and the lines that matter.
""",
            encoding="utf-8",
        )


def age_tree(root: Path, seconds: float = 3600, pattern: str = "*.md") -> None:
    """Move the mtimes of matching files into the past: files not edited lately, the steady
    state (a file written in the last two seconds is re-read on every agent load)."""
    past = time.time() - seconds
    for path in root.rglob(pattern):
        os.utime(path, (past, past))


def write_agent(folder: Path, name: str, description: str, body: str, tools: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{name}.md").write_text(
        f"---\nname: {name}\ndescription: {description}\ntools: {tools}\n"
        f"model: inherit\nomitAgentsMd: true\n---\n{body}\n",
        encoding="utf-8",
    )


def run_async(main: Any) -> None:
    """Run a benchmark's ``async main()`` and exit with its code."""
    code = asyncio.run(main)
    raise SystemExit(code or 0)
