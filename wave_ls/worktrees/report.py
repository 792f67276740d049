"""What a delegation's block says about where it ran: its worktree and its sandbox.

Typed, and on the wire exactly the ``details.worktree`` and ``details.sandbox`` of an
``Agent`` block (docs/protocol.md): ``WorktreeReport.to_json`` gives the worktree as made
(``name, path, branch, mainRepo, baseCommit, baseRef, isNew, hookCreated, notes``), at the
end with ``kept, changedFiles, commits, summary``, or ``{inPlace, path, summary}`` for a fork
that ran in place; ``SandboxReport.to_json`` gives ``{mechanism, writable, note?}``. Light on
purpose: the adapters read these back (``from_json``) without importing the isolation code.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wave_ls.runtime.sandbox import Confinement
    from wave_ls.worktrees.isolation import IsolatedWorktree, WorktreeOutcome


@dataclass(frozen=True)
class WorktreeEnd:
    """How a worktree ended (``WorktreeOutcome``'s fields the block shows); ``changed_files``
    and ``commits`` are None when they could not be determined."""

    kept: bool
    changed_files: int | None
    commits: int | None


@dataclass(frozen=True)
class WorktreeReport:
    """An isolated run's worktree as made (``end`` set once it ended), or the caller's
    folder for a fork that ran in place (``in_place``)."""

    path: str
    name: str = ""
    branch: str = ""
    main_repo: str = ""
    base_commit: str | None = None
    base_ref: str = ""
    is_new: bool = False
    hook_created: bool = False
    notes: tuple[str, ...] = ()
    in_place: bool = False
    end: WorktreeEnd | None = None
    summary: str | None = None  # the text the result gets: an end or the in-place note
    extra: dict[str, Any] = field(default_factory=dict)  # fields of newer writers, kept

    @classmethod
    def made(cls, wt: IsolatedWorktree) -> WorktreeReport:
        """The worktree as made (or as it will be: a plan's has no base commit yet)."""
        return cls(
            path=str(wt.path),
            name=wt.name,
            branch=wt.branch,
            main_repo=str(wt.main_repo),
            base_commit=wt.base_commit,
            base_ref=wt.base_ref,
            is_new=wt.is_new,
            hook_created=wt.hook_created,
            notes=tuple(wt.notes),
        )

    @classmethod
    def ended(cls, wt: IsolatedWorktree, outcome: WorktreeOutcome, summary: str) -> WorktreeReport:
        """``wt`` as it ended (``outcome``), with ``summary`` for the result."""
        end = WorktreeEnd(outcome.kept, outcome.changed_files, outcome.commits)
        made = cls.made(wt)
        return replace(
            made, path=str(outcome.path), branch=outcome.branch, end=end, summary=summary
        )

    @classmethod
    def ran_in_place(cls, path: Path, summary: str) -> WorktreeReport:
        """A fork that got no worktree and ran in ``path``."""
        return cls(path=str(path), in_place=True, summary=summary)

    def to_json(self) -> dict[str, Any]:
        """``details.worktree`` on the wire."""
        if self.in_place:
            return {**self.extra, "inPlace": True, "path": self.path, "summary": self.summary}
        out: dict[str, Any] = {
            **self.extra,
            "name": self.name,
            "path": self.path,
            "branch": self.branch,
            "mainRepo": self.main_repo,
            "baseCommit": self.base_commit,
            "baseRef": self.base_ref,
            "isNew": self.is_new,
            "hookCreated": self.hook_created,
            "notes": list(self.notes),
        }
        if self.end is not None:
            out.update(
                kept=self.end.kept, changedFiles=self.end.changed_files, commits=self.end.commits
            )
        if self.summary is not None:
            out["summary"] = self.summary
        return out

    @classmethod
    def from_json(cls, data: object) -> WorktreeReport | None:
        """A report read back from a block's details (tolerant: wrong types are empty)."""
        if not isinstance(data, dict):
            return None
        data = dict(data)
        summary = _text(data.pop("summary", None)) or None
        if data.pop("inPlace", False) is True:
            return cls(path=_text(data.pop("path", "")), in_place=True, summary=summary, extra=data)
        end = None
        if "kept" in data:
            end = WorktreeEnd(
                kept=bool(data.pop("kept")),
                changed_files=_count(data.pop("changedFiles", None)),
                commits=_count(data.pop("commits", None)),
            )
        notes = data.pop("notes", [])
        base_commit = data.pop("baseCommit", None)
        return cls(
            path=_text(data.pop("path", "")),
            name=_text(data.pop("name", "")),
            branch=_text(data.pop("branch", "")),
            main_repo=_text(data.pop("mainRepo", "")),
            base_commit=base_commit if isinstance(base_commit, str) else None,
            base_ref=_text(data.pop("baseRef", "")),
            is_new=bool(data.pop("isNew", False)),
            hook_created=bool(data.pop("hookCreated", False)),
            notes=tuple(str(note) for note in notes) if isinstance(notes, list) else (),
            end=end,
            summary=summary,
            extra=data,
        )


@dataclass(frozen=True)
class SandboxReport:
    """How an isolated run's commands are confined; ``note`` says why they are not."""

    mechanism: str
    writable: tuple[str, ...] = ()
    note: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # fields of newer writers, kept

    @classmethod
    def of(cls, sandbox: Confinement) -> SandboxReport:
        return cls(
            mechanism=sandbox.mechanism,
            writable=tuple(str(path) for path in sandbox.writable),
            note=sandbox.note if sandbox.note and not sandbox.confined else None,
        )

    def to_json(self) -> dict[str, Any]:
        """``details.sandbox`` on the wire."""
        out: dict[str, Any] = {**self.extra, "mechanism": self.mechanism}
        out["writable"] = list(self.writable)
        return {**out, "note": self.note} if self.note else out

    @classmethod
    def from_json(cls, data: object) -> SandboxReport | None:
        if not isinstance(data, dict):
            return None
        data = dict(data)
        writable = data.pop("writable", [])
        return cls(
            mechanism=_text(data.pop("mechanism", "")),
            writable=tuple(str(path) for path in writable) if isinstance(writable, list) else (),
            note=_text(data.pop("note", None)) or None,
            extra=data,
        )


@dataclass(frozen=True)
class WorkspaceReport:
    """Where a delegation ran: its worktree (None: in place, as its caller) and, for an
    isolated run once its worktree is made, its sandbox."""

    worktree: WorktreeReport | None = None
    sandbox: SandboxReport | None = None

    @property
    def summary(self) -> str | None:
        """What the result says about it: how the worktree ended, or why it ran in place."""
        return self.worktree.summary if self.worktree is not None else None


def _text(value: object) -> str:
    return value if isinstance(value, str) else ""


def _count(value: object) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None
