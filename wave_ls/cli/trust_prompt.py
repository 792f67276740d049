"""``wave-ls run``'s workspace-trust step: ``--trust``, else ask once on a terminal, else
say on stderr what the folder's repository holds back (``runtime/trust.py``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TextIO

from wave_ls.runtime.trust import TrustStatus, set_trust, trust_status

PREFIX = "wave-ls run"


def settle_trust(
    cwd: Path,
    home: Path,
    *,
    trust: bool,
    stdin: TextIO | None = None,
    stderr: TextIO | None = None,
) -> TrustStatus:
    """The folder's status after this step: trusted with ``trust``; asked (y/N) when it
    needs a decision and stdin is a terminal; otherwise unchanged, with one stderr line
    when something is held back."""
    stdin = stdin or sys.stdin
    stderr = stderr or sys.stderr
    if trust:
        return set_trust(cwd, home, True)
    status = trust_status(cwd, home)
    if status.needs_decision and stdin.isatty():
        stderr.write(f"{PREFIX}: {held_back_line(status)}\n")
        stderr.write(f"Trust {status.root}? [y/N] ")
        stderr.flush()
        answer = stdin.readline().strip().lower()
        return set_trust(cwd, home, answer in ("y", "yes"))
    if status.held_back and not status.trusted:
        stderr.write(
            f"{PREFIX}: {held_back_line(status)}; to let them apply, trust the folder: "
            f"rerun with --trust\n"
        )
    return status


def held_back_line(status: TrustStatus) -> str:
    """One line: what the repository of the folder holds back until it is trusted."""
    kinds = ", ".join(dict.fromkeys(item.kind for item in status.held_back))
    return f"{status.root} is not trusted: held back from its repository: {kinds}"
