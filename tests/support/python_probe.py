"""Run a short Python script in a fresh interpreter: what a test needs when the answer
depends on what one process imported or did from its start (``sys.modules``, exit paths)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Mapping


def run_python(
    script: str, env: Mapping[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """``python -c script`` with this interpreter; its output captured as text, never
    raising on a non-zero exit (the test asserts on it)."""
    return subprocess.run(
        [sys.executable, "-c", script],
        env=None if env is None else dict(env),
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
