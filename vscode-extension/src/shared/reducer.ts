/**
 * One chat's view state, built from what the server says: `wave/session/update`
 * notifications, `$/progress` of each delegation, a history from `wave/session/messages`,
 * and the panel's own events (a send started, a permission prompt, ...).
 *
 * Pure and immutable: the extension host keeps every chat's state with it (so a hidden or
 * reloaded view gets a snapshot), and the webview runs the same reducer on the same actions.
 */

import type {
  AgentDetails,
  HeldBack,
  PermissionAnswer,
  PermissionMode,
  PermissionRequestParams,
  ProgressValue,
  SendResult,
  SessionUpdate,
  TaskInfo,
  ToolStatus,
  Usage,
  WireMessage,
} from './wire';
import { AGENT_PROGRESS_PREFIX } from './wire';

export interface UserItem { kind: 'user'; key: string; text: string }
export interface AssistantItem { kind: 'assistant'; key: string; text: string; streaming: boolean }
/** The model's reasoning (`thinkingDelta`, `meta.thinking`): shown folded and dim, never as the answer. */
export interface ThinkingItem { kind: 'thinking'; key: string; text: string; streaming: boolean }
export interface NoticeItem { kind: 'notice'; key: string; text: string; tone: 'info' | 'error' | 'task' }
export interface AgentProgress { title?: string; message?: string; end?: string }
export interface ToolItem {
  kind: 'tool';
  key: string;
  toolCallId: string;
  name: string;
  arguments: string;
  status: ToolStatus;
  shortResult: string;
  /** What the call works on, from the server (absent from an older one). */
  target?: string;
  result?: string;
  details?: AgentDetails;
  progress?: AgentProgress;
}
export type PermissionState = 'pending' | 'allowed' | 'allowedSession' | 'denied' | 'cancelled';
export interface PermissionItem {
  kind: 'permission';
  key: string;
  request: PermissionRequestParams;
  state: PermissionState;
  reason?: string;
}
export type ChatItem = UserItem | AssistantItem | ThinkingItem | NoticeItem | ToolItem | PermissionItem;

/** What the folder's trust holds back, shown as one notice above the transcript. */
export interface TrustNotice {
  root: string;
  /** false: the user said no (in another client); null: never asked. */
  decision: boolean | null;
  heldBack: HeldBack[];
}

export interface ChatState {
  sessionId: string;
  items: ChatItem[];
  /** Set while the folder is not trusted and something is held back (`workspaceTrust`). */
  trust?: TrustNotice;
  /** A turn is running (ours or one the server started for a background task). */
  busy: boolean;
  /** Our `wave/chat/send` is in flight: Stop can cancel it. */
  sending: boolean;
  usage?: { total: Usage; last: Usage };
  /** How full the model's window is (`contextUsage`, after each round). */
  context?: { tokens: number; windowTokens: number };
  tasks: TaskInfo[];
  permissionMode: PermissionMode;
  model: string;
  /** Counter for item keys. */
  seq: number;
}

export type ChatAction =
  | { type: 'update'; update: SessionUpdate }
  | { type: 'progress'; token: string; value: ProgressValue }
  | { type: 'history'; messages: WireMessage[] }
  | { type: 'sendStarted' }
  | { type: 'sendFinished'; result: SendResult }
  | { type: 'sendFailed'; error: string }
  | { type: 'permissionAsked'; key: string; request: PermissionRequestParams }
  | { type: 'permissionAnswered'; key: string; answer: PermissionAnswer }
  | { type: 'permissionCancelled'; key: string }
  | { type: 'configured'; permissionMode: PermissionMode; model: string }
  | { type: 'tasks'; tasks: TaskInfo[] }
  | { type: 'notice'; text: string; tone: NoticeItem['tone'] };

export function initialChat(sessionId: string, permissionMode: PermissionMode = 'default', model = ''): ChatState {
  return { sessionId, items: [], busy: false, sending: false, tasks: [], permissionMode, model, seq: 0 };
}

export function reduce(state: ChatState, action: ChatAction): ChatState {
  switch (action.type) {
    case 'update':
      return applyUpdate(state, action.update);
    case 'progress':
      return applyProgress(state, action.token, action.value);
    case 'history':
      return { ...fromHistory(state, action.messages), busy: state.busy, sending: state.sending };
    case 'sendStarted':
      return { ...state, busy: true, sending: true };
    case 'sendFinished': {
      const ended = { ...state, sending: false };
      // turnEnded normally came first and said it all; this covers a reply without one.
      if (!state.busy) return ended;
      return endTurn(ended, action.result.status, action.result.error);
    }
    case 'sendFailed':
      return addNotice(endTurn({ ...state, sending: false }, 'silent'), action.error, 'error');
    case 'permissionAsked':
      return push(state, { kind: 'permission', key: action.key, request: action.request, state: 'pending' });
    case 'permissionAnswered':
      return mapItem(state, action.key, (item) =>
        item.kind !== 'permission'
          ? item
          : {
              ...item,
              state: !action.answer.allowed ? 'denied' : action.answer.remember === 'session' ? 'allowedSession' : 'allowed',
              reason: action.answer.allowed ? undefined : action.answer.message,
            },
      );
    case 'permissionCancelled':
      return mapItem(state, action.key, (item) =>
        item.kind === 'permission' && item.state === 'pending' ? { ...item, state: 'cancelled' } : item,
      );
    case 'configured':
      return { ...state, permissionMode: action.permissionMode, model: action.model };
    case 'tasks':
      return { ...state, tasks: action.tasks };
    case 'notice':
      return addNotice(state, action.text, action.tone);
  }
}

// ------------------------------------------------------------------ updates

function applyUpdate(state: ChatState, u: SessionUpdate): ChatState {
  switch (u.kind) {
    case 'userMessage': {
      const item = userItem(u.message);
      return item ? push({ ...state, busy: true }, item) : state;
    }
    case 'assistantDelta': {
      if (!u.delta) return state;
      // A notice in between (e.g. "/compact" refused mid-turn) does not split the answer.
      const at = lastStreaming(state);
      if (at >= 0 && state.items.slice(at + 1).every((item) => item.kind === 'notice')) {
        const streaming = state.items[at] as AssistantItem;
        return replaceAt({ ...state, busy: true }, at, { ...streaming, text: streaming.text + u.delta });
      }
      return push({ ...state, busy: true }, { kind: 'assistant', key: '', text: u.delta, streaming: true });
    }
    case 'thinkingDelta': {
      if (!u.delta) return state;
      const at = lastThinking(state);
      if (at >= 0 && state.items.slice(at + 1).every((item) => item.kind === 'notice')) {
        const thinking = state.items[at] as ThinkingItem;
        return replaceAt({ ...state, busy: true }, at, { ...thinking, text: thinking.text + u.delta });
      }
      return push({ ...state, busy: true }, { kind: 'thinking', key: '', text: u.delta, streaming: true });
    }
    case 'assistantMessage': {
      state = settleThinking(state, u.message.meta?.thinking);
      const text = u.message.content ?? '';
      const at = lastStreaming(state);
      if (at >= 0) {
        if (!text.trim()) return removeAt(state, at);
        return replaceAt(state, at, { ...(state.items[at] as AssistantItem), text, streaming: false });
      }
      return text.trim() ? push(state, { kind: 'assistant', key: '', text, streaming: false }) : state;
    }
    case 'toolBlock': {
      const at = findTool(state, u.toolCallId);
      const running = u.status === 'pending' || u.status === 'running';
      const fields = {
        name: u.name,
        arguments: u.arguments ?? '',
        status: u.status,
        shortResult: u.shortResult ?? '',
        ...(typeof u.target === 'string' ? { target: u.target } : {}),
        ...(u.result !== undefined ? { result: u.result } : {}),
        ...(u.details ? { details: u.details } : {}),
      };
      const existing = at >= 0 ? (state.items[at] as ToolItem) : undefined;
      // A finished block seen again as running is a new call that reuses the id.
      if (existing && !(running && (existing.status === 'completed' || existing.status === 'failed'))) {
        const details = u.details ? { ...existing.details, ...u.details } : existing.details;
        return replaceAt(state, at, { ...existing, ...fields, details });
      }
      const busy = running ? true : state.busy;
      return push({ ...state, busy }, { kind: 'tool', key: '', toolCallId: u.toolCallId, ...fields });
    }
    case 'usage':
      return { ...state, usage: { total: u.total, last: u.usage } };
    case 'turnEnded':
      return endTurn(state, u.status, u.error ?? undefined);
    case 'task': {
      const tasks = state.tasks.slice();
      const i = tasks.findIndex((t) => t.taskId === u.task.taskId);
      if (i >= 0) tasks[i] = u.task;
      else tasks.push(u.task);
      return { ...state, tasks };
    }
    case 'messagesChanged':
      return state;
    case 'workspaceTrust':
      return applyTrust(state, u);
    case 'mcpStatus': // the MCP Servers view shows it
      return state;
    case 'compacted':
      return addNotice(state, compactedText(u.tokensBefore, u.tokensAfter), 'info');
    case 'contextUsage':
      return Number.isFinite(u.tokens) && Number.isFinite(u.windowTokens)
        ? { ...state, context: { tokens: u.tokens, windowTokens: u.windowTokens } }
        : state;
    default: // a kind a newer server sends: the chat stays as it is
      return state;
  }
}

export const TRUSTED_NOTICE = 'Workspace trusted: what the repository ships (hooks, sandbox settings, permission rules, MCP servers) applies from the next step.';

/** One notice while something is held back; a line once trust lifts it. */
function applyTrust(state: ChatState, u: { trusted: boolean; root: string; decision: boolean | null; heldBack: HeldBack[] }): ChatState {
  const heldBack = Array.isArray(u.heldBack) ? u.heldBack : [];
  if (!u.trusted && heldBack.length) return { ...state, trust: { root: u.root, decision: u.decision, heldBack } };
  if (!state.trust) return state;
  const { trust: _lifted, ...rest } = state;
  return u.trusted ? addNotice(rest, TRUSTED_NOTICE, 'info') : rest;
}

function endTurn(state: ChatState, status: string, error?: string): ChatState {
  let next: ChatState = {
    ...state,
    busy: false,
    items: state.items.map((item) => {
      if ((item.kind === 'assistant' || item.kind === 'thinking') && item.streaming) return { ...item, streaming: false };
      if (item.kind === 'permission' && item.state === 'pending') return { ...item, state: 'cancelled' };
      return item;
    }),
  };
  next = { ...next, items: next.items.filter((item) => !(item.kind === 'assistant' && !item.text.trim())) };
  if (status === 'failed') next = addNotice(next, error ? `The turn failed: ${error}` : 'The turn failed.', 'error');
  if (status === 'cancelled') next = addNotice(next, 'Stopped.', 'info');
  return next;
}

function applyProgress(state: ChatState, token: string, value: ProgressValue): ChatState {
  if (!token.startsWith(AGENT_PROGRESS_PREFIX)) return state;
  const id = token.slice(AGENT_PROGRESS_PREFIX.length);
  let at = findTool(state, id);
  if (at < 0) {
    state = push(state, { kind: 'tool', key: '', toolCallId: id, name: 'Agent', arguments: '', status: 'running', shortResult: '' });
    at = state.items.length - 1;
  }
  const item = state.items[at] as ToolItem;
  const progress = { ...item.progress };
  if (value.kind === 'begin') {
    progress.title = value.title;
    if (value.message) progress.message = value.message;
  } else if (value.kind === 'report') {
    if (value.message) progress.message = value.message;
  } else {
    progress.end = value.message ?? '';
  }
  return replaceAt(state, at, { ...item, progress });
}

// ------------------------------------------------------------------ history

/** The messages of `wave/session/messages` as items (reminders and memory hidden). */
function fromHistory(state: ChatState, messages: WireMessage[]): ChatState {
  let next: ChatState = { ...state, items: [] };
  const results = new Map<string, WireMessage>();
  for (const m of messages) if (m.role === 'tool' && m.tool_call_id) results.set(m.tool_call_id, m);
  for (const m of messages) {
    if (m.role === 'user') {
      const item = userItem(m);
      if (item) next = push(next, item);
    } else if (m.role === 'assistant') {
      const thinking = m.meta?.thinking;
      if (typeof thinking === 'string' && thinking.trim()) next = push(next, { kind: 'thinking', key: '', text: thinking, streaming: false });
      if (m.content && m.content.trim()) next = push(next, { kind: 'assistant', key: '', text: m.content, streaming: false });
      for (const call of m.tool_calls ?? []) {
        const answer = results.get(call.id);
        const result = answer === undefined ? undefined : (answer.content ?? '');
        // The target its block showed, kept in its result's meta (none from an older server).
        const target = answer?.meta?.target;
        next = push(next, {
          kind: 'tool',
          key: '',
          toolCallId: call.id,
          name: call.function.name,
          arguments: call.function.arguments,
          status: result === undefined ? 'failed' : 'completed',
          shortResult: result === undefined ? 'No result' : firstLine(result),
          ...(typeof target === 'string' ? { target } : {}),
          result,
        });
      }
    }
  }
  return next;
}

function firstLine(text: string): string {
  const line = text.trim().split('\n', 1)[0] ?? '';
  return line.length > 100 ? `${line.slice(0, 99)}…` : line;
}

/** The one line a compaction leaves in the chat (live and in a loaded history). */
export function compactedText(before: number, after: number): string {
  const n = (x: unknown) => (typeof x === 'number' && Number.isFinite(x) ? x.toLocaleString('en-US') : '?');
  return `conversation compacted (${n(before)} -> ${n(after)} tokens)`;
}

function userItem(m: WireMessage): UserItem | NoticeItem | null {
  const meta = m.meta ?? {};
  // Its text is the summary written for the model: the user sees one line.
  if (meta.kind === 'compacted') return { kind: 'notice', key: '', text: compactedText(meta.tokensBefore as number, meta.tokensAfter as number), tone: 'info' };
  if (meta.taskNotification) {
    const status = typeof meta.status === 'string' ? meta.status : 'ended';
    return { kind: 'notice', key: '', text: `Background task ${String(meta.taskNotification)} ${status}.`, tone: 'task' };
  }
  if (meta.reminder || meta.isMeta) return null;
  return { kind: 'user', key: '', text: m.content ?? '' };
}

// ------------------------------------------------------------------ helpers

function push(state: ChatState, item: ChatItem): ChatState {
  const seq = state.seq + 1;
  const key = item.key || `${item.kind[0]}${seq}`;
  return { ...state, seq, items: [...state.items, { ...item, key }] };
}

function addNotice(state: ChatState, text: string, tone: NoticeItem['tone']): ChatState {
  return push(state, { kind: 'notice', key: '', text, tone });
}

function replaceAt(state: ChatState, at: number, item: ChatItem): ChatState {
  const items = state.items.slice();
  items[at] = item;
  return { ...state, items };
}

function removeAt(state: ChatState, at: number): ChatState {
  return { ...state, items: state.items.filter((_, i) => i !== at) };
}

function mapItem(state: ChatState, key: string, f: (item: ChatItem) => ChatItem): ChatState {
  const at = state.items.findIndex((item) => item.key === key);
  return at < 0 ? state : replaceAt(state, at, f(state.items[at]));
}

function lastStreaming(state: ChatState): number {
  for (let i = state.items.length - 1; i >= 0; i--) {
    const item = state.items[i];
    if (item.kind === 'assistant' && item.streaming) return i;
  }
  return -1;
}

/** The thinking item still streaming: it stops, with the round's whole text when given. */
function settleThinking(state: ChatState, whole: unknown): ChatState {
  const at = lastThinking(state);
  if (at < 0) return state;
  const item = state.items[at] as ThinkingItem;
  const text = typeof whole === 'string' && whole ? whole : item.text;
  return replaceAt(state, at, { ...item, text, streaming: false });
}

function lastThinking(state: ChatState): number {
  for (let i = state.items.length - 1; i >= 0; i--) {
    const item = state.items[i];
    if (item.kind === 'thinking' && item.streaming) return i;
  }
  return -1;
}

function findTool(state: ChatState, toolCallId: string): number {
  for (let i = state.items.length - 1; i >= 0; i--) {
    const item = state.items[i];
    if (item.kind === 'tool' && item.toolCallId === toolCallId) return i;
  }
  return -1;
}

/** Subagents running now: live Agent blocks and background subagent tasks. */
export function runningSubagents(state: ChatState): number {
  const blocks = state.items.filter(
    (item) =>
      item.kind === 'tool' &&
      item.name === 'Agent' &&
      (item.status === 'running' || item.status === 'pending') &&
      !item.details?.background,
  ).length;
  const background = state.tasks.filter((t) => t.kind === 'subagent' && t.status === 'running').length;
  return blocks + background;
}

/** The pending permission prompt with this key, if still unanswered. */
export function pendingPermission(state: ChatState, key: string): PermissionItem | undefined {
  const item = state.items.find((i) => i.key === key);
  return item && item.kind === 'permission' && item.state === 'pending' ? item : undefined;
}
