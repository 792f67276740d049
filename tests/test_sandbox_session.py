"""The opt-in session sandbox (issue 17, item 2): ``{"sandbox": {"enabled": true,
"allowWrite": [...]}}`` in ``.wave/settings.json`` confines every command of the main agent
to the project folder, temp and the listed paths; Bash then needs no permission prompt in
``default`` mode, while plan mode and read-only agents keep their rules. End to end over
LSP with a real ``wave-ls``, plus the settings rules and the permission table."""

from __future__ import annotations

import json
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_model import FakeModelServer, call, reply, route
from tests.support.git_repos import IDENTITY, git
from tests.support.lsp import capabilities, server_env, wave_client
from tests.test_lsp_worktrees import last_results
from tests.test_runtime_session import session
from wave_ls.runtime.core import PermissionDecision, PermissionRequest
from wave_ls.runtime.permissions import decide
from wave_ls.runtime.sandbox.landlock import abi_version
from wave_ls.runtime.sandbox.settings import parse_sandbox_settings
from wave_ls.runtime.trust import set_trust
from wave_ls.worktrees.sandboxing import load_sandbox_settings, session_writable

needs_landlock = pytest.mark.skipif(abi_version() < 1, reason="no Landlock")
HINT = "ran in the session's sandbox"


@pytest.fixture
def beyond_temp() -> Iterator[Path]:
    """A folder outside the temporary directory (which a sandboxed session may write)."""
    if not Path("/var/tmp").is_dir():
        pytest.skip("needs /var/tmp")
    path = Path(tempfile.mkdtemp(prefix="wave-test-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def settings_file(project: Path, data: dict[str, Any], name: str = "settings.json") -> None:
    folder = project / ".wave"
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(json.dumps(data))


def test_settings_layers_and_paths(tmp_path: Path) -> None:
    project, home = tmp_path / "p", tmp_path / "home"
    local, shared, user = Path("/x/.wave/settings.local.json"), Path("/x/s.json"), Path("/h/s")
    parsed = parse_sandbox_settings(
        [
            (local, {"sandbox": {"enabled": False, "allowWrite": ["build", "~/.cache/pip"]}}),
            (shared, {"sandbox": {"enabled": True, "allowWrite": ["/opt/out", "build"]}}),
            (user, {"sandbox": {"allowWrite": ["~", "/", "..", 3, ""]}}),
        ],
        project,
        home,
    )
    # The most specific "enabled" wins; allowWrite entries of every file, each once.
    assert parsed.enabled is False
    assert parsed.allow_write == [project / "build", home / ".cache" / "pip", Path("/opt/out")]
    # The home folder itself and folders above it are refused ("~", "/", and ".." which is
    # the home's parent here); bad shapes too.
    assert sum("whole home folder" in w for w in parsed.warnings) == 3
    assert sum("non-empty strings" in w for w in parsed.warnings) == 2
    wrong = parse_sandbox_settings(
        [(shared, {"sandbox": {"enabled": "yes", "allowWrite": "build"}}), (user, {"sandbox": 1})],
        project,
        home,
    )
    assert not wrong.enabled and wrong.allow_write == [] and len(wrong.warnings) == 3


def test_session_writable_is_the_project_its_git_dirs_temp_and_allow_write(
    tmp_path: Path, project: Path
) -> None:
    home = tmp_path / "home"
    # The repository's own file turns the sandbox on, but cannot open writes outside it;
    # the user's local file can.
    settings_file(project, {"sandbox": {"enabled": True, "allowWrite": ["../elsewhere"]}})
    settings_file(project, {"sandbox": {"allowWrite": ["../shared"]}}, "settings.local.json")
    settings = load_sandbox_settings(project / "src", home)  # from a subfolder too
    assert settings.enabled
    assert any("outside the project" in w and "../elsewhere" in w for w in settings.warnings)
    trees = session_writable(project / "src", settings)
    assert trees[0] == project.resolve() and tmp_path.resolve() / "shared" in trees
    assert tmp_path.resolve() / "elsewhere" not in trees
    assert Path("/tmp") in trees


def test_permissions_with_the_session_sandbox() -> None:
    args = {"command": "rm -rf build && npm test"}
    for mode in ("default", "acceptEdits"):
        assert decide(mode, "Bash", args, effect="execute").action == "ask"
        assert decide(mode, "Bash", args, effect="execute", sandboxed=True).action == "allow"
    # Plan mode and read-only agents keep their rules; edits are still asked for.
    assert decide("plan", "Bash", args, effect="execute", sandboxed=True).action == "deny"
    read_only = decide(
        "default", "Bash", args, effect="execute", read_only_bash=True, sandboxed=True
    )
    assert read_only.action == "deny" and "This agent is read-only" in read_only.message
    edit = {"file_path": "a.py", "old_string": "a", "new_string": "b"}
    assert decide("default", "Edit", edit, effect="edit", sandboxed=True).action == "ask"


@needs_landlock
async def test_sandboxed_session_over_lsp(
    fake_model: FakeModelServer, project: Path, beyond_temp: Path
) -> None:
    # The project and ../shared are in the temp dir (writable anyway); outside and HOME not.
    shared, outside, home = project.parent / "shared", beyond_temp / "outside", beyond_temp / "h"
    for folder in (shared, outside, home):
        folder.mkdir()
    settings_file(project, {"sandbox": {"enabled": True}})
    settings_file(project, {"sandbox": {"allowWrite": ["../shared"]}}, "settings.local.json")
    git(project, "add", "-A")
    git(project, "commit", "-qm", "settings")
    set_trust(project, home, True)  # committed settings apply once the user trusts the folder
    commands = [
        "echo a > in-project.txt && git add in-project.txt && git commit -qm a && echo committed",
        f"echo b > {shared}/s.txt && echo shared-ok",
        'f=$(mktemp) && echo c > "$f" && echo temp-ok',
        f"echo d > {outside}/o.txt",
        f"echo e > {home}/.bashrc",
    ]
    fake_model.set_script(
        {
            "routes": [
                route(
                    "work in the sandbox",
                    reply(
                        "",
                        *(call("Bash", {"command": c}) for c in commands),
                        call(
                            "Bash",
                            {"command": f"echo f > {outside}/bg.txt", "run_in_background": True},
                        ),
                    ),
                    reply("worked"),
                ),
                route(
                    "plan it",
                    reply("", call("Bash", {"command": "touch planned.txt"})),
                    reply("no"),
                ),
            ]
        }
    )
    env = server_env(home, fake_model.base_url, **IDENTITY)
    async with wave_client(env, caps=capabilities(permission=True)) as client:
        sid = (await client.request("wave/session/new", {"cwd": str(project)}))["sessionId"]
        done = await client.request(
            "wave/chat/send", {"sessionId": sid, "text": "work in the sandbox"}
        )
        assert done["status"] == "completed"
        plan = await client.request(
            "wave/session/new", {"cwd": str(project), "permissionMode": "plan"}
        )
        await client.request("wave/chat/send", {"sessionId": plan["sessionId"], "text": "plan it"})
        # In default mode, nobody was asked about any of those commands.
        assert client.permission_requests == []

    committed, shared_ok, temp_ok, refused, bashrc, background = last_results(
        fake_model.chat_bodies()[1]
    )
    assert (
        committed.strip() == "committed" and git(project, "log", "-1", "--format=%s").strip() == "a"
    )
    assert shared_ok.strip() == "shared-ok" and (shared / "s.txt").read_text() == "b\n"
    assert temp_ok.strip() == "temp-ok"
    for text in (refused, bashrc):
        assert "Permission denied" in text and HINT in text and "sandbox.allowWrite" in text
    assert not (outside / "o.txt").exists() and not (home / ".bashrc").exists()
    assert "started in the background" in background
    assert not (outside / "bg.txt").exists()
    # The first session's background command may end (and be told) after the plan session.
    plan_rounds = [
        body
        for body in fake_model.chat_bodies()
        if any(m["role"] == "user" and m["content"] == "plan it" for m in body["messages"])
    ]
    [planned] = last_results(plan_rounds[-1])
    assert "Plan mode is active" in planned and not (project / "planned.txt").exists()


async def test_without_a_mechanism_the_session_asks_and_says_so_once(
    fake_model: FakeModelServer, home: Path, project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WAVE_SANDBOX", "none")
    settings_file(project, {"sandbox": {"enabled": True}})
    asked: list[PermissionRequest] = []

    class Allow:
        async def ask(self, request: PermissionRequest) -> PermissionDecision:
            asked.append(request)
            return PermissionDecision(True)

    fake_model.set_script(
        {
            "routes": [
                route(
                    "twice",
                    reply(
                        "",
                        call("Bash", {"command": "touch a"}),
                        call("Bash", {"command": "touch b"}),
                    ),
                    reply("ok"),
                )
            ]
        }
    )
    agent = session(fake_model, project, home, asker=Allow(), persist=False)
    await agent.send("twice")
    await agent.close()
    first, second = (m.content for m in agent.messages if m.role == "tool")
    assert "WITHOUT a sandbox" in first and "WITHOUT a sandbox" not in second
    assert [r.summary for r in asked] == ["Bash: touch a", "Bash: touch b"]
