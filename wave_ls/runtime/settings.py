"""Where the model endpoint and defaults come from (environment, then overrides)."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace

from wave_ls.runtime.core import (
    ModelClient,
    ModelError,
    ModelRequest,
    ModelResponse,
    PermissionMode,
)

NO_ENDPOINT_HELP = (
    "No model endpoint is configured. Set OPENAI_BASE_URL (an OpenAI-compatible endpoint, "
    "e.g. http://localhost:11434/v1) and WAVE_MODEL (the model id), plus OPENAI_API_KEY if "
    "the endpoint needs one. To try wave-ls offline, run `wave-ls demo`."
)


@dataclass(frozen=True)
class RuntimeSettings:
    """The endpoint, model and defaults a session runs with."""

    base_url: str | None = None
    api_key: str | None = None
    model: str | None = None
    fast_model: str | None = None
    permission_mode: PermissionMode = "default"

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> RuntimeSettings:
        env = os.environ if env is None else env
        return cls(
            base_url=env.get("OPENAI_BASE_URL") or None,
            api_key=env.get("OPENAI_API_KEY") or None,
            model=env.get("WAVE_MODEL") or None,
            fast_model=env.get("WAVE_FAST_MODEL") or None,
        )

    def override(self, **values: object) -> RuntimeSettings:
        """A copy with the given non-empty values replaced."""
        return replace(self, **{k: v for k, v in values.items() if v not in (None, "")})  # type: ignore[arg-type]

    def problem(self) -> str | None:
        """What the user must set before a model can be called, or None."""
        if not self.model or not (self.base_url or self.api_key):
            return NO_ENDPOINT_HELP
        return None


class UnconfiguredModelClient:
    """Stands in for a model when no endpoint is set: every round fails with what to set."""

    def __init__(self, message: str = NO_ENDPOINT_HELP) -> None:
        self.message = message

    async def complete(
        self, request: ModelRequest, on_delta: Callable[[str], None] | None = None
    ) -> ModelResponse:
        raise ModelError(self.message)


def model_client_for(settings: RuntimeSettings) -> ModelClient:
    """The client of the configured endpoint, or one whose every round says what to set
    (a session can be opened before the endpoint is configured)."""
    problem = settings.problem()
    if problem:
        return UnconfiguredModelClient(problem)
    from wave_ls.runtime.model_client import OpenAIModelClient  # the openai SDK: on first use

    return OpenAIModelClient(settings.base_url, settings.api_key)
