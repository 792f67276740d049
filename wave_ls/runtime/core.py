"""The runtime's few core types and protocols, in one place.

Everything else in the runtime is a swappable part behind one of these:

- ``ModelClient``: streams one model round (any OpenAI-compatible endpoint, or a test double).
- ``Tool``: one capability the model can call, run inside a ``ToolContext``.
- ``EventSink``: where every change of a conversation is announced (adapters subscribe).
- ``PermissionAsker``: answers "may this tool call run?" when the policy needs a human.

Messages are kept in the OpenAI Chat Completions shape (``Message.to_openai``) so that a
conversation is exactly what the model sees, and a transcript line is one message.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, runtime_checkable

from wave_ls.runtime.services import Services
from wave_ls.runtime.text import readable, readable_json_text, unescape_path

if TYPE_CHECKING:
    from wave_ls.runtime.sandbox import Confinement

Role = Literal["system", "user", "assistant", "tool"]


@dataclass
class ToolCall:
    """One tool call requested by the model; ``arguments`` is the raw JSON text."""

    id: str
    name: str
    arguments: str

    def __post_init__(self) -> None:
        self.arguments = readable_json_text(self.arguments)

    def to_openai(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


def parsed_arguments(arguments: str) -> dict[str, Any]:
    """A tool call's JSON arguments as a dict (empty when they are not a JSON object): for
    showing a call, never for running it (the loop reports bad arguments to the model)."""
    try:
        args = json.loads(arguments) if arguments.strip() else {}
    except json.JSONDecodeError:
        return {}
    return args if isinstance(args, dict) else {}


@dataclass
class Usage:
    """Token counts of one model round (or a sum of rounds)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.total_tokens + other.total_tokens,
        )

    def to_json(self) -> dict[str, int]:
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class RunUsage:
    """What one run of an agent (a subagent, a background task) cost: its tokens, how many
    tools it called, and how long it took. The one shape of a run's usage."""

    tokens: Usage = field(default_factory=Usage)
    tool_calls: int = 0
    duration_ms: int = 0

    def to_json(self) -> dict[str, int]:
        """As task notices and ``wave/tasks/list`` carry it (Claude Code's names)."""
        return {
            "total_tokens": self.tokens.total_tokens,
            "tool_uses": self.tool_calls,
            "duration_ms": self.duration_ms,
        }


@dataclass
class Message:
    """One message of a conversation.

    ``meta`` carries what the client needs but the model does not see as a field of its own
    (``{"reminder": True}`` for injected reminders, ``{"isMeta": True}`` for memory, ...).
    Its text is made ``readable`` when it is created: a message can always be written,
    sent to the model and shown (``wave_ls.runtime.text``).
    """

    role: Role
    content: str = ""
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.content = readable(self.content)

    def to_openai(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [call.to_openai() for call in self.tool_calls]
            if not self.content:
                out["content"] = None
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        return out

    def to_json(self) -> dict[str, Any]:
        """The message as stored in a transcript and shown to clients."""
        out = self.to_openai()
        if out.get("content") is None:
            out["content"] = ""
        if self.name is not None:
            out["name"] = self.name
        if self.meta:
            out["meta"] = self.meta
        return out

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Message:
        calls = [
            ToolCall(c["id"], c["function"]["name"], c["function"].get("arguments") or "")
            for c in data.get("tool_calls") or []
        ]
        return cls(
            role=data["role"],
            content=data.get("content") or "",
            tool_calls=calls,
            tool_call_id=data.get("tool_call_id"),
            name=data.get("name"),
            meta=dict(data.get("meta") or {}),
        )


# --------------------------------------------------------------------------- model


@dataclass
class ModelRequest:
    """Everything one model round needs."""

    model: str
    messages: list[dict[str, Any]]
    tools: list[dict[str, Any]] = field(default_factory=list)
    # Extra sampling parameters (temperature, reasoning_effort, ...) passed through verbatim,
    # so that ``model: inherit`` can reuse exactly the session's parameters.
    params: dict[str, Any] = field(default_factory=dict)
    # Gets each piece of the model's reasoning (``reasoning_content`` deltas): shown as
    # thinking, never part of the answer. None: reasoning is dropped.
    on_thinking: Callable[[str], None] | None = field(default=None, repr=False, compare=False)


@dataclass
class ModelResponse:
    content: str
    tool_calls: list[ToolCall]
    usage: Usage
    finish_reason: str | None = None
    thinking: str = ""  # the round's reasoning, if the endpoint streamed any


class ModelError(Exception):
    """A model round failed; ``str(error)`` is the one message a person reads."""


class ContextLengthError(ModelError):
    """The endpoint refused the request for its length (``window``: the window it named)."""

    def __init__(self, message: str, window: int | None = None) -> None:
        super().__init__(message)
        self.window = window


@runtime_checkable
class ModelClient(Protocol):
    """Streams one round; ``on_delta`` gets each piece of assistant text as it arrives."""

    async def complete(
        self, request: ModelRequest, on_delta: Callable[[str], None] | None = None
    ) -> ModelResponse: ...


# --------------------------------------------------------------------------- events


@dataclass
class UserMessageAdded:
    message: Message


@dataclass
class AssistantContentDelta:
    """New assistant text of the current round (only the new part: a stream of deltas
    costs linear time; the whole text arrives with ``AssistantMessageAdded``)."""

    delta: str


@dataclass
class AssistantThinkingDelta:
    """New reasoning of the current round (``reasoning_content``): thinking shown to the
    user, never the answer; the whole text is kept in the message's ``meta.thinking``."""

    delta: str


@dataclass
class AssistantMessageAdded:
    message: Message


@dataclass
class ToolBlockUpdated:
    """A tool call's block changed: started, progressed (``short_result``) or finished."""

    tool_call_id: str
    name: str
    arguments: str
    status: Literal["pending", "running", "completed", "failed"]
    short_result: str = ""
    result: str | None = None
    # Anything the adapter may show besides (subagent type, task id, worktree, ...).
    details: dict[str, Any] = field(default_factory=dict)
    # What the call works on (its key argument on one line) and the tool's kind, from the
    # tool's descriptor (``runtime/tools/descriptor.py``): renderers read them, never a table.
    target: str = ""
    kind: ToolKind = "other"


@dataclass
class MessagesChanged:
    messages: list[Message]


@dataclass
class UsageUpdated:
    round_usage: Usage
    total: Usage


@dataclass
class ContextCompacted:
    """The conversation was compacted: ``message`` is its ``compacted`` message."""

    tokens_before: int
    tokens_after: int
    message: Message


@dataclass
class ContextUsage:
    """How much of the context window the conversation's next request fills."""

    tokens: int
    window_tokens: int


@dataclass
class Notice:
    """Something the user should know about the session (not a message of it)."""

    level: Literal["info", "warning"]
    text: str


@dataclass
class TurnEnded:
    status: Literal["completed", "cancelled", "failed"]
    text: str
    error: str | None = None


Event = (
    UserMessageAdded
    | AssistantContentDelta
    | AssistantThinkingDelta
    | AssistantMessageAdded
    | ToolBlockUpdated
    | MessagesChanged
    | UsageUpdated
    | ContextCompacted
    | ContextUsage
    | Notice
    | TurnEnded
)


class EventSink(Protocol):
    """Receives every change of a conversation. Must not block: queue or coalesce."""

    def emit(self, event: Event) -> None: ...


class NullSink:
    def emit(self, event: Event) -> None:
        pass


# --------------------------------------------------------------------------- permissions

# ``dontAsk`` (never prompt: what would need a prompt is denied) is a subagent's mode only,
# from its definition's ``permissionMode``; a session's modes are ``PERMISSION_MODES``.
PermissionMode = Literal["default", "acceptEdits", "bypassPermissions", "plan", "dontAsk"]
PERMISSION_MODES: tuple[PermissionMode, ...] = (
    "default",
    "acceptEdits",
    "bypassPermissions",
    "plan",
)


Effect = Literal["read", "edit", "execute", "worktree", "session", "other"]
"""What a tool does, which is what the permission policy reads (``runtime/permissions``):

- ``read``: reads the project or the web and changes nothing (Read, Grep, WebFetch, ...);
- ``edit``: changes files (Write, Edit);
- ``execute``: runs commands (Bash: each command is judged on its own);
- ``worktree``: creates or removes git worktrees (EnterWorktree, ExitWorktree);
- ``session``: acts on the session itself, never on the project (Agent, the task list,
  TaskOutput/TaskStop, Artifact, ExitPlanMode);
- ``other``: anything else (asked for: the safe default for a tool we do not know).
"""

ToolKind = Literal[
    "read", "edit", "delete", "move", "search", "execute", "think", "fetch", "switch_mode", "other"
]
"""How a tool call is shown (ACP's ``ToolKind``: a client picks an icon and a layout from
it); declared by each tool beside its ``effect``, which is what the policy reads."""


@dataclass
class PermissionRequest:
    """One "may this run?" question.

    ``cwd`` is the calling agent's working directory (relative paths in ``arguments`` are
    relative to it); ``preview`` shows what the call would change (``{path, diff}`` for
    Write and Edit: the file's absolute path and the unified diff); ``tool_call_id`` is the
    id of the tool call that asks (its block in the events), when there is one;
    ``parent_tool_call_id``, for a subagent's request, is the block of the delegation it
    runs in (the ``Agent`` call, or the background run) in its session's events.
    """

    tool_name: str
    arguments: dict[str, Any]
    summary: str  # one line a person reads: "Edit src/app.py", "Bash: rm -rf build"
    effect: Effect = "other"
    cwd: Path | None = None
    preview: dict[str, str] | None = None
    tool_call_id: str = ""
    parent_tool_call_id: str = ""


@dataclass
class PermissionDecision:
    allowed: bool
    message: str = ""  # shown to the model when denied
    # Allow calls of the same kind for the rest of the session (see ``runtime/allowances``).
    remember: bool = False
    # The session rule this decision made or used ("allowed for this session: ..."), shown
    # with the tool call in the transcript.
    rule: str = ""


class PermissionAsker(Protocol):
    async def ask(self, request: PermissionRequest) -> PermissionDecision: ...


# --------------------------------------------------------------------------- tools


@dataclass
class ToolResult:
    """What a tool returns to the model (``content``) and to the UI (``short_result``)."""

    content: str
    is_error: bool = False
    short_result: str = ""
    details: dict[str, Any] = field(default_factory=dict)


class ToolError(Exception):
    """Raised by a tool for an expected failure; becomes an error result the model reads."""


@dataclass
class ToolContext:
    """Where and for whom a tool runs. Tools never use the process's cwd.

    ``cwd`` is the agent's working directory (a worktree for an isolated subagent);
    ``write_root``, when set, is the only tree Write/Edit may touch (worktree safety);
    ``services`` holds the session's collaborators (``runtime/services.py``: background
    tasks, the task list, the editor's LSP, ...), typed, so adapters plug in without the
    tools knowing them;
    ``report(text, details=None)`` updates the tool block's ``short_result`` (and details)
    while the tool runs; ``sandbox``, when set, confines every command the agent starts
    (Bash, background Bash) to the trees it may write (``docs/sandbox.md``).
    """

    cwd: Path
    home: Path
    session_id: str = ""
    tool_call_id: str = ""
    write_root: Path | None = None
    services: Services = field(default_factory=Services)
    sandbox: Confinement | None = None
    report: Callable[..., None] = lambda _text, _details=None: None

    def resolve(self, path: str) -> Path:
        """An absolute path, or one relative to the agent's working directory.

        A name that tools showed with ``\\xNN`` escapes (not UTF-8 on disk) resolves to
        the real file when no file has the escaped name itself.
        """
        candidate = self._absolute(path)
        real = unescape_path(path)
        if real is not None and not os.path.lexists(candidate):
            unescaped = self._absolute(real)
            if os.path.lexists(unescaped):
                return unescaped
        return candidate

    def _absolute(self, path: str) -> Path:
        candidate = expanded(path)
        return candidate if candidate.is_absolute() else (self.cwd / candidate)


def expanded(path: str | Path) -> Path:
    """``path`` with a leading ``~`` expanded; as written when it names a user this system
    does not know (``~nobody/x`` is then an ordinary relative path, not an error)."""
    try:
        return Path(path).expanduser()
    except RuntimeError:
        return Path(path)


@runtime_checkable
class Tool(Protocol):
    """One tool. ``parameters`` is a JSON schema; ``effect`` says what it does (and so what
    the permission policy allows); ``concurrency_safe`` tools run together with their
    neighbours in one round of calls, the others one at a time in order."""

    name: str
    parameters: dict[str, Any]
    effect: Effect
    concurrency_safe: bool

    @property
    def description(self) -> str: ...  # may be computed (the Agent tool's is)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult: ...


@runtime_checkable
class PreviewsChanges(Protocol):
    """A tool that can show what a call would change before permission is asked."""

    async def preview(self, args: dict[str, Any], ctx: ToolContext) -> dict[str, str] | None:
        """``{path, diff}`` for the call, or None when there is nothing to show."""
        ...


def tool_schema(tool: Tool) -> dict[str, Any]:
    """The tool in the shape of the Chat Completions ``tools`` list."""
    return {
        "type": "function",
        "function": {
            "name": tool.name,
            "description": tool.description,
            "parameters": tool.parameters,
        },
    }
