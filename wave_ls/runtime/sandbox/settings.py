"""``sandbox`` in ``.wave/settings.json``: the opt-in sandbox for every command of a session.

```json
{"sandbox": {"enabled": true, "allowWrite": ["~/.cache/pip", "../shared-build"]}}
```

``read_sandbox_settings`` reads the settings layers (``runtime/project_settings.py``);
``parse_sandbox_settings`` is the pure part: parsed files (most specific first) in, what
they say out.
``enabled`` comes from the most specific file that sets it; ``allowWrite`` entries of every
file are used (each once). ``~`` is the home folder; a relative path is relative to the
project folder. An entry that would open the whole machine or the home folder itself
(``/``, ``~``, or a folder above the home folder) is refused with a warning: it would make
the sandbox meaningless; so is an entry outside the project in the project's committed
``.wave/settings.json`` or in a git-tracked ``.wave/settings.local.json`` (a repository must
not open the user's files to commands that run without asking: only ``~/.wave/settings.json``
and an untracked ``.wave/settings.local.json`` can). Before the user trusts the folder, a
tracked file's ``sandbox`` does not reach here at all (``load_layers``).
Wrong shapes give a warning and are ignored.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wave_ls.runtime.project_settings import load_layers

log = logging.getLogger(__name__)


@dataclass
class SandboxSettings:
    enabled: bool = False
    allow_write: list[Path] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def read_sandbox_settings(project_dir: Path, home: Path) -> SandboxSettings:
    """The ``sandbox`` settings of ``project_dir`` and ``home`` (problems logged and kept in
    ``warnings``)."""
    layers, problems = load_layers(project_dir, home)
    parsed = [(layer.path, layer.data) for layer in layers]
    committed = [layer.path for layer in layers if layer.from_repository]
    settings = parse_sandbox_settings(parsed, project_dir, home, committed)
    settings.warnings[:0] = problems
    for warning in settings.warnings:
        log.warning("%s", warning)
    return settings


def parse_sandbox_settings(
    layers: Sequence[tuple[Path, dict[str, Any]]],
    project_dir: Path,
    home: Path,
    committed: Sequence[Path] = (),
) -> SandboxSettings:
    """Merge the ``sandbox`` objects of parsed settings files, most specific first;
    ``committed``: the files git tracks (a trusted repository's), besides the project's
    ``.wave/settings.json``."""
    settings = SandboxSettings()
    enabled: bool | None = None
    home_real = Path(os.path.realpath(home))
    project_real = Path(os.path.realpath(project_dir))
    # The files a repository brings with it: they may not open writes outside itself.
    repository_files = {project_dir / ".wave" / "settings.json", *committed}
    for path, data in layers:
        section = data.get("sandbox")
        if section is None:
            continue
        if not isinstance(section, dict):
            settings.warnings.append(f"{path}: 'sandbox' must be an object; ignored")
            continue
        value = section.get("enabled")
        if value is not None and enabled is None:
            if isinstance(value, bool):
                enabled = value
            else:
                settings.warnings.append(f"{path}: sandbox.enabled must be true or false; ignored")
        entries = section.get("allowWrite", [])
        if not isinstance(entries, list):
            settings.warnings.append(f"{path}: sandbox.allowWrite must be a list of paths; ignored")
            continue
        for entry in entries:
            if not isinstance(entry, str) or not entry.strip():
                settings.warnings.append(
                    f"{path}: sandbox.allowWrite entries must be non-empty strings; "
                    f"{entry!r} ignored"
                )
                continue
            target = _resolve(entry.strip(), project_dir, home)
            if path in repository_files and not _inside(target, project_real):
                settings.warnings.append(
                    f"{path}: sandbox.allowWrite {entry!r} is outside the project; a "
                    "repository's own settings cannot open it (put it in ~/.wave/settings.json "
                    "or .wave/settings.local.json); ignored"
                )
                continue
            if target == home_real or target in home_real.parents:
                settings.warnings.append(
                    f"{path}: sandbox.allowWrite {entry!r} would allow writing the whole home "
                    "folder or more; ignored"
                )
                continue
            if target not in settings.allow_write:
                settings.allow_write.append(target)
    settings.enabled = bool(enabled)
    return settings


def _resolve(entry: str, project_dir: Path, home: Path) -> Path:
    if entry == "~" or entry.startswith("~/"):
        path = home / entry[2:]
    else:
        path = Path(entry)
        if not path.is_absolute():
            path = project_dir / path
    return Path(os.path.realpath(path))


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents
