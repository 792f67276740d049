"""Claude Code's model tiers: the mapping (settings layers, environment) and what a
``model`` value becomes (issue 24 point 3; PROTOCOL.md "Model tiers"). Real files in tmp
directories."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from wave_ls.agents.authoring import check_agent_text
from wave_ls.agents.discovery import AgentDir
from wave_ls.agents.model_tiers import (
    TierMap,
    load_tier_map,
    model_problems,
    resolve_model,
    tier_of,
)
from wave_ls.agents.parse import parse_agent_file


def settings(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")


@pytest.fixture
def places(tmp_path: Path) -> tuple[Path, Path]:
    home, project = tmp_path / "home", tmp_path / "project"
    home.mkdir()
    project.mkdir()
    return home, project


def test_local_over_project_over_user_and_the_environment_wins(
    places: tuple[Path, Path],
) -> None:
    home, project = places
    settings(home / ".wave" / "settings.json", {"models": {"sonnet": "u-s", "opus": "u-o"}})
    settings(project / ".wave" / "settings.json", {"models": {"sonnet": "p-s", "haiku": "p-h"}})
    settings(project / ".wave" / "settings.local.json", {"models": {"sonnet": "l-s"}})
    tiers = load_tier_map(project, home, env={})
    assert dict(tiers.models) == {
        "sonnet": ("l-s", "settings: models.sonnet"),
        "haiku": ("p-h", "settings: models.haiku"),
        "opus": ("u-o", "settings: models.opus"),
    }
    env = {"WAVE_MODEL_SONNET": "e-s", "WAVE_MODEL_OPUS": ""}  # an empty value is unset
    tiers = load_tier_map(project, home, env=env)
    assert tiers.models["sonnet"] == ("e-s", "env: WAVE_MODEL_SONNET")
    assert tiers.models["opus"] == ("u-o", "settings: models.opus")
    assert resolve_model("sonnet", tiers).model == "e-s"
    assert resolve_model("sonnet", tiers).note == "sonnet -> e-s (env: WAVE_MODEL_SONNET)"


def test_fast_model_is_haiku_only_when_nothing_else_maps_it(places: tuple[Path, Path]) -> None:
    home, project = places
    fast = {"WAVE_FAST_MODEL": "quick"}
    assert load_tier_map(project, home, env=fast).models == {
        "haiku": ("quick", "env: WAVE_FAST_MODEL")
    }
    settings(project / ".wave" / "settings.json", {"models": {"haiku": "from-settings"}})
    assert load_tier_map(project, home, env=fast).models["haiku"][0] == "from-settings"
    both = {**fast, "WAVE_MODEL_HAIKU": "from-env"}
    assert load_tier_map(project, home, env=both).models["haiku"][0] == "from-env"


def test_unmapped_tier_runs_on_the_sessions_model() -> None:
    choice = resolve_model("sonnet", TierMap())
    assert choice.model is None  # the session's model
    assert choice.note == "sonnet -> inherit: no model set for this tier"
    assert resolve_model("inherit", TierMap()).model is None
    assert resolve_model("inherit", TierMap()).note is None
    assert resolve_model("gpt-4o", TierMap()).model == "gpt-4o"
    assert resolve_model("gpt-4o", TierMap()).note is None


@pytest.mark.parametrize(
    ("model", "tier"),
    [
        ("claude-sonnet-4-5-20250929", "sonnet"),
        ("claude-sonnet-4-20250514", "sonnet"),
        ("claude-3-5-haiku-latest", "haiku"),
        ("claude-opus-4-1", "opus"),
        ("claude-instant-1", None),  # no tier in its name: an id like any other
        ("my-sonnet", None),  # not a claude-* id
        ("opus", "opus"),
    ],
)
def test_claude_ids_by_the_tier_their_name_contains(model: str, tier: str | None) -> None:
    assert tier_of(model) == tier
    assert tier_of(model, served=["gpt-4o"]) == tier


def test_a_claude_id_the_endpoint_lists_is_used_as_is() -> None:
    tiers = TierMap({"sonnet": ("gpt-4o", "settings: models.sonnet")})
    served = ["claude-sonnet-4-5-20250929", "gpt-4o"]
    listed = resolve_model("claude-sonnet-4-5-20250929", tiers, served)
    assert (listed.model, listed.note) == ("claude-sonnet-4-5-20250929", None)
    unlisted = resolve_model("claude-sonnet-4-20250514", tiers, served)
    assert unlisted.model == "gpt-4o"
    assert unlisted.note == "claude-sonnet-4-20250514 (sonnet) -> gpt-4o (settings: models.sonnet)"
    # The list unknown: by tier too.
    assert resolve_model("claude-sonnet-4-5-20250929", tiers).model == "gpt-4o"
    # The tier's own name is a tier even when the endpoint happens to list it.
    assert resolve_model("sonnet", tiers, ["sonnet"]).model == "gpt-4o"


def test_settings_values_that_cannot_be_used_are_warned_about(places: tuple[Path, Path]) -> None:
    home, project = places
    path = project / ".wave" / "settings.json"
    settings(path, {"models": {"sonnet": 4, "fast": "x", "opus": "ok"}})
    tiers = load_tier_map(project, home, env={})
    assert tiers.models == {"opus": ("ok", "settings: models.opus")}
    assert tiers.warnings == (
        f"{path}: models.sonnet must be a model id; ignored",
        f"{path}: models.fast is not a tier (haiku, sonnet, opus); ignored",
    )
    settings(path, {"models": ["sonnet"]})
    assert load_tier_map(project, home, env={}).warnings == (
        f"{path}: models must be an object of tier: model id; ignored",
    )


def agent(tmp_path: Path, model: str) -> Path:
    path = tmp_path / f"{model}.md"
    path.write_text(f"---\nname: a-{model}\ndescription: d\nmodel: {model}\n---\nBody\n")
    return path


def test_model_warnings_only_when_the_list_is_known(tmp_path: Path) -> None:
    definitions = []
    for model in ("fable", "sonnet", "opus", "inherit", "gpt-4o", "claude-3-5-haiku-latest"):
        path = agent(tmp_path, model)
        definition, _ = parse_agent_file(path, path.read_text(), "project")
        assert definition is not None
        definitions.append(definition)
    tiers = TierMap({"opus": ("gpt-9", "env: WAVE_MODEL_OPUS")})
    assert model_problems(definitions, tiers, None) == []
    problems = model_problems(definitions, tiers, ["gpt-4o"])
    assert [(p.path, p.line, p.severity) for p in problems] == [
        (str(tmp_path / "fable.md"), 4, "warning"),
        (str(tmp_path / "opus.md"), 4, "warning"),
    ]
    assert "'fable' is not a model the endpoint offers" in problems[0].message
    assert "opus -> gpt-9 (env: WAVE_MODEL_OPUS), which the endpoint does not offer" in (
        problems[1].message
    )


def test_the_editor_notes_what_a_tier_becomes(tmp_path: Path) -> None:
    agent_dir = AgentDir("project", tmp_path)

    def model_problems_of(
        model: str, models: list[str] | None = None, tiers: Callable[[], TierMap] | None = None
    ) -> list[tuple[str, str, str]]:
        text = f"---\nname: a\ndescription: d\nmodel: {model}\n---\n"
        result = check_agent_text(text, tmp_path / "a.md", agent_dir, (), models, tiers)
        return [(p.severity, p.code or "", p.message) for p in result.problems]

    mapped = TierMap({"sonnet": ("gpt-4o", "settings: models.sonnet")})
    assert model_problems_of("sonnet", models=["gpt-4o"], tiers=lambda: mapped) == [
        ("info", "model-tier", "model: sonnet -> gpt-4o (settings: models.sonnet)")
    ]
    [(severity, code, message)] = model_problems_of(
        "claude-opus-4-1", models=["gpt-4o"], tiers=TierMap
    )
    assert (severity, code) == ("info", "model-tier")
    assert message.startswith("model: claude-opus-4-1 (opus) -> inherit: no model set")
    assert "WAVE_MODEL_OPUS" in message
    # Without the mapping (the list unknown too): still a note, never an unknown model.
    [(severity, code, message)] = model_problems_of("haiku")
    assert (severity, code) == ("info", "model-tier") and "WAVE_MODEL_HAIKU" in message
    # A claude-* id the endpoint lists is a model like any other: nothing to say.
    assert model_problems_of("claude-opus-4-1", models=["claude-opus-4-1"]) == []
    [(severity, code, _)] = model_problems_of("sonet", models=["gpt-4o"])
    assert (severity, code) == ("warning", "unknown-model")
