/** Messages between the extension host and the chat webview (both directions). */

import type { ChatAction, ChatState } from './reducer';
import type { Segment } from './tags';
import type { CompletionItem, PermissionAnswer, PermissionMode } from './wire';

export interface SessionEntry {
  sessionId: string;
  title: string;
  folder: string;
  updatedAt: number;
  /** Open in this window (it has a chat state). */
  open: boolean;
}

export type ServerState =
  | { state: 'starting' }
  | { state: 'running' }
  | { state: 'restarting'; message: string }
  | { state: 'stopped'; message: string }
  | { state: 'missing'; message: string };

export interface Snapshot {
  chat: ChatState | null;
  /** The folder the chat runs in (or the one a new chat will use). */
  folder: string;
  sessions: SessionEntry[];
  draft: Segment[];
  server: ServerState;
  defaultMode: PermissionMode;
}

export type HostMessage =
  | { type: 'snapshot'; snapshot: Snapshot }
  | { type: 'action'; sessionId: string; action: ChatAction }
  | { type: 'sessions'; sessions: SessionEntry[] }
  | { type: 'server'; server: ServerState }
  | { type: 'completion'; requestId: number; items: CompletionItem[]; serverMs?: number }
  | { type: 'focusInput' };

export type ViewMessage =
  | { type: 'ready' }
  | { type: 'send'; text: string }
  | { type: 'stop' }
  | { type: 'complete'; requestId: number; text: string; cursor: number }
  | { type: 'draft'; sessionId: string | null; segments: Segment[] }
  | { type: 'permission'; key: string; answer: PermissionAnswer }
  | { type: 'showDiff'; key: string }
  | { type: 'setMode'; mode: PermissionMode }
  | { type: 'switchSession'; sessionId: string }
  | { type: 'newChat' }
  | { type: 'closeChat' }
  | { type: 'showSessions' }
  | { type: 'stopTask'; taskId: string }
  | { type: 'openLink'; href: string }
  | { type: 'command'; command: 'configureModel' | 'restartServer' | 'showLog' | 'manageTrust' }
  | { type: 'metric'; name: string; ms: number };
