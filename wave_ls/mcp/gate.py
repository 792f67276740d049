"""Whether a defined server may start: its definition, the user's answer, workspace trust.

- a definition that cannot be used: ``failed`` with the reason;
- the user said no (``wave/mcp/approve`` with ``approved: false``): ``disabled``;
- a server that asks first (a project's ``.mcp.json``, a committed
  ``.wave/settings.local.json``, an inline server of a project agent file): while the folder
  is not trusted and git tracks the file it came from, ``disabled`` (code from the
  repository never starts before the user trusts the folder); else it starts once approved
  (``wave/mcp/approve``, or ``mcp.enableProjectServers`` in the user's own settings) and is
  ``needs-approval`` until then;
- anything else (the user's, local, ACP-given, a user agent's) starts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from wave_ls.mcp import approvals
from wave_ls.mcp.config import FolderConfig, ServerSpec

Verdict = Literal["allowed", "failed", "disabled", "needs-approval"]

NOT_TRUSTED = (
    "held back: {source} comes with the repository and this folder is not trusted "
    "(trust it first: wave/workspace/trust)"
)
REFUSED = "turned off by the user (wave/mcp/approve)"
ASK = "a project's server: it starts once approved (wave/mcp/approve)"


@dataclass(frozen=True)
class Gate:
    verdict: Verdict
    reason: str = ""


def gate(spec: ServerSpec, config: FolderConfig, home: Path, trusted: Callable[[], bool]) -> Gate:
    """What ``spec`` may do in ``config.folder`` now (``trusted`` is asked only when the
    answer depends on it)."""
    if spec.problem:
        return Gate("failed", spec.problem)
    kept = approvals.answer(home, config.folder, spec.name, spec.definition_hash)
    if kept is False:
        return Gate("disabled", REFUSED)
    if not spec.ask_first:
        return Gate("allowed")
    if spec.from_repository and not trusted():
        return Gate("disabled", NOT_TRUSTED.format(source=spec.source or "its file"))
    enabled = config.enabled_project
    if kept is True or enabled is True or (not isinstance(enabled, bool) and spec.name in enabled):
        return Gate("allowed")
    return Gate("needs-approval", ASK)
