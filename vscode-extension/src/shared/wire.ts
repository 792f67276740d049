/**
 * The wave-ls wire, as the extension uses it (PROTOCOL.md, docs/protocol.md).
 * Types only: both the extension host and the webview import this file.
 */

export type PermissionMode = 'default' | 'acceptEdits' | 'plan' | 'bypassPermissions';
export const PERMISSION_MODES: readonly PermissionMode[] = ['default', 'acceptEdits', 'plan', 'bypassPermissions'];

export interface ToolCall {
  id: string;
  type?: 'function';
  function: { name: string; arguments: string };
}

/** A message of `wave/session/messages` and of `userMessage`/`assistantMessage` updates. */
export interface WireMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  tool_calls?: ToolCall[];
  tool_call_id?: string;
  name?: string;
  meta?: Record<string, unknown>;
}

export interface Usage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

export type ToolStatus = 'pending' | 'running' | 'completed' | 'failed';

/** `details` of an `Agent` tool block. */
export interface AgentDetails {
  subagentType?: string;
  description?: string;
  subagentId?: string;
  background?: boolean;
  taskId?: string;
  status?: string;
  error?: string;
  totalTokens?: number;
  toolCalls?: number;
  durationMs?: number;
  summary?: string;
  worktree?: WorktreeDetails;
  /** The definition's `color` (issue 24). */
  color?: string;
  /** The run stopped at its definition's `maxTurns`. */
  maxTurnsReached?: boolean;
  /** What a model tier became: `sonnet -> inherit: no model set for this tier`. */
  modelNote?: string;
  [key: string]: unknown;
}

export interface WorktreeDetails {
  name?: string;
  path?: string;
  branch?: string;
  inPlace?: boolean;
  kept?: boolean;
  changedFiles?: number | null;
  commits?: number | null;
  summary?: string;
  [key: string]: unknown;
}

export interface TaskInfo {
  taskId: string;
  sessionId: string;
  kind: 'shell' | 'subagent';
  subagentType: string;
  status: 'running' | 'completed' | 'failed' | 'stopped';
  description: string;
  outputFile?: string;
  startedAt: number;
  progress?: string;
  summary?: string;
  endedAt?: number;
  durationMs?: number;
  command?: string;
  cwd?: string;
  exitCode?: number;
  toolCallId?: string;
  worktreeSummary?: string;
}

export type SessionUpdate =
  | { sessionId: string; kind: 'userMessage'; message: WireMessage }
  | { sessionId: string; kind: 'assistantDelta'; delta: string; content?: string }
  | { sessionId: string; kind: 'thinkingDelta'; delta: string }
  | { sessionId: string; kind: 'assistantMessage'; message: WireMessage }
  | {
      sessionId: string;
      kind: 'toolBlock';
      toolCallId: string;
      name: string;
      arguments: string;
      status: ToolStatus;
      shortResult?: string;
      /** What the call works on (its tool's key argument, one line); absent from older servers. */
      target?: string;
      /** The tool's kind (read, edit, execute, search, fetch, think, other, ...). */
      toolKind?: string;
      result?: string;
      details?: AgentDetails;
    }
  | { sessionId: string; kind: 'usage'; usage: Usage; total: Usage }
  | { sessionId: string; kind: 'messagesChanged'; count: number }
  | { sessionId: string; kind: 'turnEnded'; status: string; text: string; error?: string | null }
  | { sessionId: string; kind: 'task'; task: TaskInfo }
  | ({ sessionId: string; kind: 'workspaceTrust' } & WorkspaceTrust)
  | ({ sessionId: string; kind: 'mcpStatus' } & McpServerInfo)
  | { sessionId: string; kind: 'compacted'; tokensBefore: number; tokensAfter: number }
  | { sessionId: string; kind: 'contextUsage'; tokens: number; windowTokens: number };

/** The answer of `wave/session/compact`. */
export interface CompactResult {
  compacted: boolean;
  tokensBefore: number;
  tokensAfter: number;
}

/** One MCP server of a folder: an item of `wave/mcp/list`, and an `mcpStatus` update. */
export interface McpServerInfo {
  name: string;
  scope: 'project' | 'user' | 'local' | 'acp' | 'agent';
  transport: 'stdio' | 'http' | 'sse';
  /** What it runs (`command args…`) or where it connects (`<transport> <url>`). */
  command?: string;
  /** The five of the protocol, and `stopped`: allowed, but no session of the folder runs it. */
  status: 'starting' | 'connected' | 'failed' | 'needs-approval' | 'disabled' | 'stopped';
  /** Full names, `mcp__<server>__<tool>`. */
  tools: string[];
  error?: string;
}

/** One thing the folder's repository ships that waits for the user's trust. */
export interface HeldBack {
  /** `hooks`, `sandbox`, `permissions`, `mcpServers`, `agentHooks`, `permissionMode`, `mcpJson`, ... */
  kind: string;
  path: string;
  /** One line for the user: what and why. */
  detail: string;
}

/** `wave/workspace/status` and `wave/workspace/trust` (without `cwd`: the update). */
export interface WorkspaceTrust {
  cwd?: string;
  /** Where the decision is kept: the repository root, else the folder. */
  root: string;
  trusted: boolean;
  decision: boolean | null;
  needsDecision: boolean;
  heldBack: HeldBack[];
}

/** The value of a `$/progress` notification (LSP work-done progress). */
export type ProgressValue =
  | { kind: 'begin'; title: string; message?: string; percentage?: number; cancellable?: boolean }
  | { kind: 'report'; message?: string; percentage?: number }
  | { kind: 'end'; message?: string };

export const AGENT_PROGRESS_PREFIX = 'wave/agent/';

export interface SendResult {
  status: 'completed' | 'cancelled' | 'failed';
  text: string;
  usage?: Usage;
  error?: string;
}

export interface SessionSummary {
  sessionId: string;
  cwd: string;
  title: string;
  createdAt: number;
  updatedAt: number;
  messageCount: number;
  live: boolean;
}

export interface PermissionRequestParams {
  sessionId: string;
  toolName: string;
  arguments: Record<string, unknown> | string;
  summary: string;
  preview?: { path: string; diff: string };
}

export interface PermissionAnswer {
  allowed: boolean;
  message?: string;
  remember?: 'session';
}

export interface CompletionItem {
  label: string;
  kind?: number;
  detail?: string;
  documentation?: string | { kind: string; value: string };
  insertText?: string;
  sortText?: string;
  filterText?: string;
  /** Agent items: `{color}` when the agent sets one, `{path}` its file (not for built-ins). */
  data?: { color?: string; path?: string; [key: string]: unknown };
}

export interface CompletionList {
  isIncomplete: boolean;
  items: CompletionItem[];
}

export interface WorktreeInfo {
  path: string;
  branch: string;
  changedFiles: number | null;
  commits: number | null;
  owner?: string;
  name?: string;
  createdAt?: number;
}

export interface WorktreeDiff {
  baseCommit: string;
  files: { path: string; status: 'added' | 'modified' | 'deleted' | 'renamed'; additions: number; deletions: number; binary?: boolean }[];
  patch: string;
}

export interface AgentInfo {
  name: string;
  description: string;
  source: 'builtin' | 'user' | 'project' | 'plugin';
  tools: string;
  model: string;
  isolation?: string;
  path?: string;
  color?: string;
  background?: boolean;
}
