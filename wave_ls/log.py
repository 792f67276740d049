"""Logging set-up shared by every entry point: stderr or a file, never stdout."""

from __future__ import annotations

import logging
import os
import sys

NOISY_LOGGERS = ("pygls", "httpx", "httpx2", "httpcore", "openai", "asyncio")
LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")
DEFAULT_LEVEL = "WARNING"


def setup_logging(level: str | None = None, log_file: str | None = None) -> list[str]:
    """Send our logs to ``log_file`` (or stderr); keep library loggers at WARNING.

    ``WAVE_LOG_LEVEL`` and ``WAVE_LOG_FILE`` are read when the arguments are not given. A
    bad value never stops the caller: it falls back (WARNING, stderr) and the returned
    messages say what was ignored, for the user to see.
    """
    problems: list[str] = []
    level_name = (level or os.environ.get("WAVE_LOG_LEVEL") or DEFAULT_LEVEL).upper()
    if level_name not in LEVELS:
        problems.append(
            f"log level {level_name!r} is not one of {', '.join(LEVELS)}; using {DEFAULT_LEVEL}"
        )
        level_name = DEFAULT_LEVEL
    path = log_file or os.environ.get("WAVE_LOG_FILE")
    handler: logging.Handler = logging.StreamHandler(sys.stderr)
    if path:
        try:
            handler = logging.FileHandler(path, encoding="utf-8")
        except (OSError, ValueError) as error:
            reason = getattr(error, "strerror", None) or str(error)
            problems.append(f"cannot write the log file {path!r} ({reason}); logging to stderr")
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    for old in root.handlers:
        if old is not handler:
            old.close()
    root.handlers[:] = [handler]
    root.setLevel(level_name)
    for name in NOISY_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    for problem in problems:
        logging.getLogger("wave_ls").warning("%s", problem)
    return problems
