"""Logging set-up shared by every entry point: stderr or a file, never stdout."""

from __future__ import annotations

import logging
import os
import sys

NOISY_LOGGERS = ("pygls", "httpx", "httpx2", "httpcore", "openai", "asyncio")


def setup_logging(level: str | None = None, log_file: str | None = None) -> None:
    """Send our logs to ``log_file`` (or stderr); keep library loggers at WARNING.

    ``WAVE_LOG_LEVEL`` and ``WAVE_LOG_FILE`` are read when the arguments are not given.
    """
    level_name = (level or os.environ.get("WAVE_LOG_LEVEL") or "WARNING").upper()
    path = log_file or os.environ.get("WAVE_LOG_FILE")
    handler: logging.Handler = (
        logging.FileHandler(path, encoding="utf-8") if path else logging.StreamHandler(sys.stderr)
    )
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(getattr(logging, level_name, logging.WARNING))
    for name in NOISY_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
