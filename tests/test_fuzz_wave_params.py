"""Fuzzing every ``wave/*`` request's params against one real server (issue 12).

Whatever the params (junk JSON, lone surrogates, huge numbers, real ids and paths mixed in),
each request is answered within a few seconds with a result or a JSON-RPC error that is not
an internal error (-32603), and the server keeps answering. Bounded: a fixed number of
examples per method, no deadline per example (a loaded CI machine must not fail it).
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pygls.exceptions import JsonRpcException

from tests.support.lsp import WaveClient, server_env, wave_client

EXAMPLES = 100  # each example sends every method once: 1,300 requests, ~10 s here

# Each method with the keys it reads, so that fuzzed objects hit real fields.
METHOD_KEYS = {
    "wave/session/new": ["cwd", "model", "permissionMode", "worktree", "sessionId"],
    "wave/chat/send": ["sessionId", "text"],
    "wave/session/messages": ["sessionId"],
    "wave/session/list": ["cwd"],
    "wave/session/close": ["sessionId"],
    "wave/session/configure": ["sessionId", "permissionMode", "model"],
    "wave/chatInput/completion": ["sessionId", "text", "cursor"],
    "wave/agents/list": ["cwd"],
    "wave/tasks/list": ["sessionId"],
    "wave/tasks/stop": ["taskId"],
    "wave/worktrees/list": ["cwd"],
    "wave/worktrees/diff": ["path"],
    "wave/worktrees/remove": ["path", "force"],
}
KEYS = sorted({key for keys in METHOD_KEYS.values() for key in keys})


@dataclass
class Target:
    client: WaveClient
    project: Path
    session_id: str


@pytest.fixture
async def target(home: Path, project: Path) -> AsyncIterator[Target]:
    async with wave_client(server_env(home), root=project) as client:
        created = await client.request("wave/session/new", {"cwd": str(project)})
        yield Target(client, project, created["sessionId"])


# Text with what breaks naive code: lone surrogates, NULs, line ends, long runs, paths
# that no system call takes.
HOSTILE = [
    "",
    "@",
    "@Ex",
    "/",
    "~",
    "..",
    "relative/dir",
    "\0",
    "/tmp/\0x",
    "\ud83d",
    "a\udcffb",
    "/" + "x" * 300,
    "/" + "d/" * 3000,
    "@" + "x" * 300,
    "\r\n\t",
    "/proc/self/fd/0",
    "/dev/null",
    "~no-such-user-0/x",  # expanduser raises for an unknown user (found by the fuzz test)
]
TEXT = st.one_of(
    st.text(st.characters(codec=None, categories=None), max_size=40),
    st.sampled_from(HOSTILE),
    st.integers(0, 5000).map(lambda n: "@" + "y" * n),
    st.text(st.characters(codec=None, categories=None), max_size=12).map(lambda t: "/tmp/" + t),
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=False),
    TEXT,
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.sampled_from(KEYS), inner, max_size=4)
    ),
    max_leaves=12,
)


def params_strategy(method: str, real: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Mostly objects with the method's keys (hostile, junk or real values), sometimes
    anything at all."""
    hostile = st.sampled_from(HOSTILE)
    value = st.one_of(hostile, hostile, real, TEXT, SCALARS, JSON)
    fields = st.fixed_dictionaries({}, optional={key: value for key in METHOD_KEYS[method]})
    return st.one_of(fields, fields, fields, JSON)


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
async def test_any_params_get_an_answer_that_is_not_an_internal_error(
    data: st.DataObject, target: Target
) -> None:
    real = st.sampled_from(
        [
            str(target.project),
            target.session_id,
            "default",
            "plan",
            str(target.project / ".wave" / "worktrees" / "x"),
        ]
    )
    for method in METHOD_KEYS:
        params = data.draw(params_strategy(method, real), label=method)
        try:
            await asyncio.wait_for(target.client.request(method, params), 20)
        except JsonRpcException as error:
            assert error.code != -32603, f"{method} {params!r}: {error}"
    # the server still answers
    listed = await asyncio.wait_for(target.client.request("wave/agents/list", {}), 20)
    assert listed["agents"]


CORPUS = [
    (method, {key: value})
    for method, keys in METHOD_KEYS.items()
    for key in keys
    for value in [*HOSTILE, None, True, -1, 2**70, 1.5, [], {}, ["x"], {"a": 1}]
]


async def test_each_hostile_value_in_each_field_gets_a_proper_answer(target: Target) -> None:
    # The corpus: every hostile value in every field of every method, deterministically.
    internal = []
    for method, params in CORPUS:
        try:
            await asyncio.wait_for(target.client.request(method, params), 20)
        except JsonRpcException as error:
            if error.code == -32603:
                internal.append(f"{method} {str(params)[:80]}: {str(error)[:120]}")
    assert internal == []
    assert (await target.client.request("wave/agents/list", {}))["agents"]
