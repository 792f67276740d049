"""``ContextPolicy``: what one conversation knows of its window, and the settings behind it.

Settings (``{"context": {...}}`` in the settings files, most specific file first, key by
key): ``windowTokens`` (the window, tokens), ``autoCompact`` (default true), ``threshold``
(the share of the window a request may fill before the conversation is compacted first,
default 0.8). The window may also come from ``initializationOptions.contextWindow`` and
``WAVE_CONTEXT_WINDOW`` (the settings files win, then the option, then the variable).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from wave_ls.runtime.context.window import WINDOW_RULE, Window, check_window
from wave_ls.runtime.project_settings import load_layers

WINDOW_ENV = "WAVE_CONTEXT_WINDOW"
DEFAULT_THRESHOLD = 0.8
MIN_THRESHOLD = 0.1
# ``max_tokens`` when no setting gives one: enough for a long answer or a file written at
# once, and a quarter of a small window at most (the rest is for the prompt).
DEFAULT_MAX_TOKENS = 8_192
MIN_MAX_TOKENS = 256
# The share of the window the verbatim tail after a compaction may take.
KEEP_SHARE = 0.25


@dataclass(frozen=True)
class ContextSettings:
    """The ``context`` settings in force; ``problems``: values that were ignored."""

    window_tokens: int | None = None
    window_source: str = ""
    auto_compact: bool = True
    threshold: float = DEFAULT_THRESHOLD
    problems: tuple[str, ...] = ()


def load_context_settings(
    cwd: Path,
    home: Path | None,
    *,
    option_window: int | None = None,
    env: Mapping[str, str] | None = None,
) -> ContextSettings:
    """The ``context`` settings of a project (``option_window``: the client's
    ``initializationOptions.contextWindow``)."""
    env = os.environ if env is None else env
    layers, _warnings = load_layers(cwd, home)
    problems: list[str] = []
    found: dict[str, tuple[object, Path]] = {}
    for layer in layers:  # most specific first: the first file that sets a key wins
        section = layer.data.get("context")
        if not isinstance(section, dict):
            continue
        for key in ("windowTokens", "autoCompact", "threshold"):
            if key in section and key not in found:
                found[key] = (section[key], layer.path)
    window, source = None, ""
    if "windowTokens" in found:
        value, path = found["windowTokens"]
        window = check_window(value)
        if window is None:
            problems.append(f"{path}: context.windowTokens {value!r} is not {WINDOW_RULE}")
        source = f"{path} context.windowTokens"
    if window is None and option_window is not None:
        window, source = option_window, "initializationOptions.contextWindow"
    if window is None and env.get(WINDOW_ENV):
        text = env[WINDOW_ENV]
        window = check_window(int(text)) if text.strip().isdigit() else None
        if window is None:
            problems.append(f"{WINDOW_ENV}={text!r} is not {WINDOW_RULE}")
        source = WINDOW_ENV
    auto = True
    if "autoCompact" in found:
        value, path = found["autoCompact"]
        if isinstance(value, bool):
            auto = value
        else:
            problems.append(f"{path}: context.autoCompact must be true or false")
    threshold = DEFAULT_THRESHOLD
    if "threshold" in found:
        value, path = found["threshold"]
        if (
            isinstance(value, int | float)
            and not isinstance(value, bool)
            and MIN_THRESHOLD <= value <= 1
        ):
            threshold = float(value)
        else:
            problems.append(f"{path}: context.threshold must be a number from 0.1 to 1")
    return ContextSettings(window, source if window else "", auto, threshold, tuple(problems))


@dataclass
class ContextPolicy:
    """What a conversation needs to keep within its window.

    ``window`` is shared by a session and its subagents (same endpoint); ``state`` says
    what the summary must mention besides the conversation (background tasks, worktrees);
    ``keep_dir`` is where a cut tool output is kept whole (None: nowhere).
    """

    window: Window = field(default_factory=Window)
    auto_compact: bool = True
    threshold: float = DEFAULT_THRESHOLD
    state: Callable[[], str] = lambda: ""
    keep_dir: Path | None = None

    @classmethod
    def from_settings(
        cls,
        settings: ContextSettings,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        state: Callable[[], str] = lambda: "",
        keep_dir: Path | None = None,
    ) -> ContextPolicy:
        if settings.window_tokens is not None:
            window = Window(settings.window_tokens, settings.window_source, explicit=True)
        else:
            window = Window(base_url=base_url, api_key=api_key)
        return cls(window, settings.auto_compact, settings.threshold, state, keep_dir)

    def for_subagent(self, keep_dir: Path | None = None) -> ContextPolicy:
        """A subagent's: the same window and rules, its own conversation to summarize."""
        return dataclasses.replace(self, state=lambda: "", keep_dir=keep_dir or self.keep_dir)

    def max_tokens(self) -> int:
        """``max_tokens`` when no setting gives one."""
        return max(MIN_MAX_TOKENS, min(DEFAULT_MAX_TOKENS, self.window.tokens // 4))

    def limit(self, max_tokens: int | None) -> int:
        """The most tokens a request may hold before it is compacted first: the threshold's
        share of the window, and room for the answer."""
        room = self.window.tokens - (max_tokens or 0)
        return max(MIN_MAX_TOKENS, min(int(self.window.tokens * self.threshold), room))

    def summary_tokens(self) -> int:
        """``max_tokens`` of a summary request."""
        return max(512, min(4_096, self.window.tokens // 8))
