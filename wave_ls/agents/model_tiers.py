"""Claude Code's model tiers (``haiku``, ``sonnet``, ``opus``) and the ids they stand for.

A subagent's ``model`` is a tier when it is a tier's name, or a ``claude-*`` id the
endpoint does not list (or whose list is unknown) that contains a tier's name
(``claude-sonnet-4-5-20250929`` is ``sonnet``). A tier maps to an endpoint's model through,
first found wins: ``WAVE_MODEL_<TIER>`` in the environment, ``{"models": {"<tier>": "<id>"}}``
in ``.wave/settings.local.json``, ``.wave/settings.json``, ``$HOME/.wave/settings.json``,
and for ``haiku`` only ``WAVE_FAST_MODEL``. An unmapped tier runs on the session's model.
Pure, apart from reading the settings files (``load_tier_map``).
"""

from __future__ import annotations

import os
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from wave_ls.agents.definition import AgentDefinition, Problem
from wave_ls.runtime.project_settings import load_layers

TIERS: tuple[str, ...] = ("haiku", "sonnet", "opus")
INHERIT = "inherit"
FAST_MODEL_ENV = "WAVE_FAST_MODEL"
SETTINGS_KEY = "models"
UNMAPPED = "inherit: no model set for this tier"


def tier_env(tier: str) -> str:
    """``WAVE_MODEL_SONNET`` for ``sonnet``."""
    return f"WAVE_MODEL_{tier.upper()}"


@dataclass(frozen=True)
class TierMap:
    """Each mapped tier's model id and where it was set (``settings: models.sonnet``,
    ``env: WAVE_MODEL_SONNET``); ``warnings`` for values of the settings that are ignored."""

    models: Mapping[str, tuple[str, str]] = field(default_factory=dict)
    warnings: tuple[str, ...] = ()


@dataclass(frozen=True)
class ModelChoice:
    """What a ``model`` value became: ``model`` the id to send (None: the session's model)
    and ``note`` what a tier became (None when the value is not a tier)."""

    model: str | None
    note: str | None = None
    tier: str | None = None


def load_tier_map(
    project_dir: Path | None, home: Path | None, env: Mapping[str, str] | None = None
) -> TierMap:
    """The tiers' mapping for a session in ``project_dir`` (the environment wins over the
    settings files; local over project over user)."""
    env = os.environ if env is None else env
    layers, _broken = load_layers(project_dir, home)  # broken files: the settings' own report
    models: dict[str, tuple[str, str]] = {}
    warnings: list[str] = []
    for layer in reversed(layers):  # least specific first: a later layer overrides
        for tier, model in _layer_tiers(layer.path, layer.data, warnings).items():
            models[tier] = (model, f"settings: {SETTINGS_KEY}.{tier}")
    for tier in TIERS:
        if env.get(tier_env(tier)):
            models[tier] = (env[tier_env(tier)], f"env: {tier_env(tier)}")
    if "haiku" not in models and env.get(FAST_MODEL_ENV):
        models["haiku"] = (env[FAST_MODEL_ENV], f"env: {FAST_MODEL_ENV}")
    return TierMap(models, tuple(warnings))


def _layer_tiers(path: Path, data: Mapping[str, object], warnings: list[str]) -> dict[str, str]:
    """The tiers one settings file maps; a warning per value it cannot use."""
    section = data.get(SETTINGS_KEY)
    if section is None:
        return {}
    if not isinstance(section, dict):
        warnings.append(f"{path}: {SETTINGS_KEY} must be an object of tier: model id; ignored")
        return {}
    found: dict[str, str] = {}
    for key, value in section.items():
        if key not in TIERS:
            warnings.append(
                f"{path}: {SETTINGS_KEY}.{key} is not a tier ({', '.join(TIERS)}); ignored"
            )
        elif not isinstance(value, str) or not value.strip():
            warnings.append(f"{path}: {SETTINGS_KEY}.{key} must be a model id; ignored")
        else:
            found[key] = value.strip()
    return found


def tier_of(model: str, served: Collection[str] | None = None) -> str | None:
    """The tier ``model`` stands for, or None: a tier's name, or a ``claude-*`` id that
    ``served`` (the endpoint's ids, None when unknown) does not list, by the tier its name
    contains."""
    if model in TIERS:
        return model
    if not model.startswith("claude-") or (served is not None and model in served):
        return None
    return next((tier for tier in TIERS if tier in model), None)


def resolve_model(model: str, tiers: TierMap, served: Collection[str] | None = None) -> ModelChoice:
    """What a subagent's ``model`` value is sent as, with a note when it is a tier:
    ``sonnet -> gpt-4o-mini (settings: models.sonnet)``,
    ``sonnet -> inherit: no model set for this tier``."""
    if model == INHERIT or not model:
        return ModelChoice(None)
    tier = tier_of(model, served)
    if tier is None:
        return ModelChoice(model)
    named = tier if model == tier else f"{model} ({tier})"
    mapped = tiers.models.get(tier)
    if mapped is None:
        return ModelChoice(None, f"{named} -> {UNMAPPED}", tier)
    return ModelChoice(mapped[0], f"{named} -> {mapped[0]} ({mapped[1]})", tier)


def unknown_model(model: str, served: Collection[str] | None) -> bool:
    """True when ``model`` is neither ``inherit``, a tier nor an id of ``served`` (a known
    list): a delegation to it would fail."""
    if served is None or model in (INHERIT, "") or model in served:
        return False
    return tier_of(model, served) is None


def model_problems(
    agents: Sequence[AgentDefinition], tiers: TierMap, served: Collection[str] | None
) -> list[Problem]:
    """A warning per agent whose delegations would fail on the endpoint whose ids are
    ``served`` (nothing when the list is unknown): a ``model`` that is neither ``inherit``,
    a tier nor a listed id, or a tier mapped to an id the endpoint does not list."""
    if served is None:
        return []
    found: list[Problem] = []
    for agent in agents:
        choice = resolve_model(agent.model, tiers, served)
        if unknown_model(agent.model, served):
            message = (
                f"model: '{agent.model}' is not a model the endpoint offers, nor '{INHERIT}' "
                f"or a tier ({', '.join(TIERS)}): a delegation to '{agent.name}' fails"
            )
        elif choice.note and choice.model is not None and choice.model not in served:
            message = (
                f"model: {choice.note}, which the endpoint does not offer: a delegation to "
                f"'{agent.name}' fails"
            )
        else:
            continue
        path = agent.path
        where = str(path) if path is not None else agent.name
        found.append(Problem(where, model_line(path), message, "warning"))
    return found


def model_line(path: Path | None) -> int | None:
    """The 1-based line of the ``model:`` key in the file's frontmatter, when found."""
    if path is None:
        return None
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeDecodeError):
        return None
    for number, line in enumerate(lines[1:], start=2):
        if line.startswith("---"):
            break
        if line.startswith("model:"):
            return number
    return None
