"""The model a subagent runs on: its definition's ``model`` with tiers resolved
(``wave_ls.agents.model_tiers``) for the session that delegates."""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from wave_ls.agents import AgentDefinition
from wave_ls.agents.model_tiers import load_tier_map, resolve_model

if TYPE_CHECKING:
    from wave_ls.subagents.runner import SubagentHost


class SubagentModel(NamedTuple):
    model: str
    note: str | None


def subagent_model(host: SubagentHost, definition: AgentDefinition) -> SubagentModel:
    """The id the subagent's requests carry (the session's model for ``inherit`` and an
    unmapped tier) and, for a tier, the note saying what it became. The settings are read
    at each delegation: an edit counts from the next one."""
    tiers = load_tier_map(host.memory_cwd, host.home)
    choice = resolve_model(definition.model, tiers, host.served_models())
    return SubagentModel(choice.model or host.parent_config().model, choice.note)
