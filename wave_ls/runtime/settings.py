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

# The model request's patience: seconds to wait for the next bytes, and how many times a
# request that timed out before its first byte (or got 408/409/429/5xx) is sent again.
TIMEOUT_ENV = "WAVE_MODEL_TIMEOUT"
RETRIES_ENV = "WAVE_MODEL_RETRIES"
DEFAULT_MODEL_TIMEOUT = 120.0
DEFAULT_MODEL_RETRIES = 2
MAX_MODEL_TIMEOUT = 3600.0
MAX_MODEL_RETRIES = 10
TIMEOUT_RULE = f"a number of seconds above 0 and at most {MAX_MODEL_TIMEOUT:g}"
RETRIES_RULE = f"a whole number from 0 to {MAX_MODEL_RETRIES}"

NO_ENDPOINT_HELP = (
    "No model endpoint is configured. Set OPENAI_BASE_URL (an OpenAI-compatible endpoint, "
    "e.g. http://localhost:11434/v1) and WAVE_MODEL (the model id), plus OPENAI_API_KEY if "
    "the endpoint needs one. To try wave-ls offline, run `wave-ls demo`."
)
NO_MODEL_HELP = (
    "WAVE_MODEL is not set: set it to the id of a model that {url} serves "
    "(`wave-ls doctor` lists them)."
)

# The model a session records while none is configured; never sent to an endpoint.
UNCONFIGURED_MODEL = "unconfigured"

# WAVE_SANDBOX's values; anything else is a typo, and the sandbox is chosen automatically.
SANDBOX_ENV = "WAVE_SANDBOX"
SANDBOX_CHOICES = ("landlock", "bubblewrap", "none")


@dataclass(frozen=True)
class SettingNames:
    """How the adapter's user sets each value, for the messages that tell them to."""

    api_key: str = "OPENAI_API_KEY"
    model_timeout: str = TIMEOUT_ENV
    model_retries: str = RETRIES_ENV


# The language server's clients can also set them in initializationOptions.
LSP_SETTING_NAMES = SettingNames(
    api_key="OPENAI_API_KEY (or the apiKey initialization option)",
    model_timeout=f"{TIMEOUT_ENV} (or the modelTimeout initialization option)",
    model_retries=f"{RETRIES_ENV} (or the modelRetries initialization option)",
)


@dataclass(frozen=True)
class RuntimeSettings:
    """The endpoint, model and defaults a session runs with.

    ``problems`` says which environment values were ignored (not a number, ...), for the
    adapter to show.
    """

    base_url: str | None = None
    api_key: str | None = None
    model: str | None = None
    fast_model: str | None = None
    permission_mode: PermissionMode = "default"
    model_timeout: float = DEFAULT_MODEL_TIMEOUT
    model_retries: int = DEFAULT_MODEL_RETRIES
    problems: tuple[str, ...] = ()
    names: SettingNames = SettingNames()

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> RuntimeSettings:
        env = os.environ if env is None else env
        problems: list[str] = []
        return cls(
            base_url=env.get("OPENAI_BASE_URL") or None,
            api_key=env.get("OPENAI_API_KEY") or None,
            model=env.get("WAVE_MODEL") or None,
            fast_model=env.get("WAVE_FAST_MODEL") or None,
            model_timeout=_number_from_env(env, TIMEOUT_ENV, DEFAULT_MODEL_TIMEOUT, problems),
            model_retries=int(_number_from_env(env, RETRIES_ENV, DEFAULT_MODEL_RETRIES, problems)),
            problems=(*problems, *sandbox_env_problems(env)),
        )

    def override(self, **values: object) -> RuntimeSettings:
        """A copy with the given non-empty values replaced."""
        return replace(self, **{k: v for k, v in values.items() if v not in (None, "")})  # type: ignore[arg-type]

    def problem(self) -> str | None:
        """What the user must set before a model can be called, or None."""
        if self.base_url and not self.model:
            return NO_MODEL_HELP.format(url=self.base_url)
        if not self.model or not (self.base_url or self.api_key):
            return NO_ENDPOINT_HELP
        return None


def session_model(*candidates: str | None) -> str:
    """The model a session runs with: the first candidate given (a client's choice, a
    saved session's, the configured one) that is not the placeholder a session saved while
    no model was configured; the placeholder when there is none."""
    for model in candidates:
        if model and model != UNCONFIGURED_MODEL:
            return model
    return UNCONFIGURED_MODEL


def sandbox_env_problems(env: Mapping[str, str]) -> tuple[str, ...]:
    """A ``WAVE_SANDBOX`` value that names no mechanism: it is ignored (the sandbox is
    chosen automatically, ``runtime/sandbox``), and the user is told."""
    value = env.get(SANDBOX_ENV, "").strip().lower()
    if not value or value in SANDBOX_CHOICES:
        return ()
    choices = ", ".join(SANDBOX_CHOICES)
    return (f"{SANDBOX_ENV}={value!r} is not one of {choices}: chosen automatically",)


def check_timeout(value: object) -> float | None:
    """A model timeout in seconds (a number > 0), or None when ``value`` is not one."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if 0 < value <= MAX_MODEL_TIMEOUT else None


def check_retries(value: object) -> int | None:
    """A retry count (an integer 0-10), or None when ``value`` is not one."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if 0 <= value <= MAX_MODEL_RETRIES else None


def _number_from_env(
    env: Mapping[str, str], name: str, default: float, problems: list[str]
) -> float:
    text = env.get(name)
    if not text:
        return default
    try:
        number: float | None = float(text) if name == TIMEOUT_ENV else int(text)
    except ValueError:
        number = None
    checked = check_timeout(number) if name == TIMEOUT_ENV else check_retries(number)
    if checked is None:
        rule = TIMEOUT_RULE if name == TIMEOUT_ENV else RETRIES_RULE
        problems.append(f"{name}={text!r} is not {rule}; using {default:g}")
        return default
    return checked


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

    return OpenAIModelClient(
        settings.base_url,
        settings.api_key,
        read_timeout=settings.model_timeout,
        max_retries=settings.model_retries,
        names=settings.names,
    )
