"""What each agent's ``model`` becomes, for ``wave-ls agents`` and ``wave-ls doctor``: the
tier notes, and a warning per agent whose delegations would fail on the endpoint."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from wave_ls.agents import AgentCatalog, Problem
    from wave_ls.agents.model_tiers import TierMap


@dataclass(frozen=True)
class AgentModels:
    """``notes`` by agent name (tiers only); ``problems`` the model warnings; ``served`` the
    endpoint's ids (None when not asked or it could not be asked)."""

    notes: dict[str, str]
    problems: list[Problem]
    tiers: TierMap
    served: tuple[str, ...] | None


def agent_models(catalog: AgentCatalog, cwd: Path, home: Path | None = None) -> AgentModels:
    from wave_ls.agents.model_tiers import load_tier_map, model_problems, resolve_model

    tiers = load_tier_map(cwd, home)
    served = endpoint_models(catalog)
    notes: dict[str, str] = {}
    for agent in catalog.agents:
        note = resolve_model(agent.model, tiers, served).note
        if note is not None:
            notes[agent.name] = note
    return AgentModels(notes, model_problems(catalog.agents, tiers, served), tiers, served)


def endpoint_models(catalog: AgentCatalog) -> tuple[str, ...] | None:
    """The configured endpoint's model ids (``GET /models``, 3 s at most), asked only when
    an agent names a model; None without an endpoint or when it does not answer."""
    import http.client

    from wave_ls.runtime.model_list import ModelList, fetch_model_ids
    from wave_ls.runtime.settings import RuntimeSettings

    settings = RuntimeSettings.from_env()
    endpoint = ModelList.endpoint(settings.base_url, settings.api_key)
    if endpoint is None or all(agent.model == "inherit" for agent in catalog.agents):
        return None
    try:
        return tuple(fetch_model_ids(*endpoint))
    except (OSError, ValueError, http.client.HTTPException):
        return None
