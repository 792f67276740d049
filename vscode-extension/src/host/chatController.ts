/**
 * The chats of this window: one wave-ls session each, in a workspace folder the user picks.
 *
 * Every chat's view state lives here (built by the shared reducer from the server's updates
 * and progress), so the webview can be hidden, reloaded or switched between chats and get a
 * snapshot back; drafts (with their tags) are kept per chat the same way (SPEC MENTION-8).
 */

import * as path from 'path';
import * as vscode from 'vscode';
import type { HostMessage, ServerState, SessionEntry, Snapshot, ViewMessage } from '../shared/messages';
import { initialChat, reduce, runningSubagents, type ChatAction, type ChatState } from '../shared/reducer';
import { compactErrorText, parseSlashCommand } from '../shared/slashCommands';
import type { Segment } from '../shared/tags';
import type {
  CompactResult,
  CompletionList,
  PermissionAnswer,
  PermissionMode,
  PermissionRequestParams,
  SendResult,
  SessionSummary,
  SessionUpdate,
  TaskInfo,
  WireMessage,
} from '../shared/wire';
import { PERMISSION_MODES } from '../shared/wire';
import { readSettings } from './config';
import { DiffDocuments, showPreviewDiff } from './diffViews';
import type { ServerConnection } from './serverConnection';

interface Chat {
  state: ChatState;
  cwd: string;
  sending?: vscode.CancellationTokenSource;
  prompts: Map<string, (answer: PermissionAnswer) => void>;
  /** The server restarted since: resume the session before using it. */
  stale: boolean;
  openedAt: number;
}

const DRAFTS_KEY = 'wave.drafts';
const NEW_CHAT = '';

export interface ChatView {
  post(message: HostMessage): void;
  readonly visible: boolean;
  reveal(): void;
}

export class ChatController implements vscode.Disposable {
  private readonly chats = new Map<string, Chat>();
  private active: string | null = null;
  /** Folder and mode of the chat that starts with the next message (no session yet). */
  private pendingFolder: string | undefined;
  private pendingMode: PermissionMode | undefined;
  private drafts: Record<string, Segment[]>;
  private sessions: SessionEntry[] = [];
  private view: ChatView | undefined;
  private promptSeq = 0;
  private readonly toolSessions = new Map<string, string>();
  /** `workspaceTrust` of a session whose `wave/session/new` has not answered yet. */
  private readonly earlyTrust = new Map<string, SessionUpdate>();
  private readonly resuming = new Map<string, Promise<boolean>>();
  private readonly disposables: vscode.Disposable[] = [];
  private readonly changed = new vscode.EventEmitter<void>();
  /** Any chat's state changed (status bar, tasks view). */
  readonly onDidChange = this.changed.event;

  constructor(
    private readonly server: ServerConnection,
    private readonly context: vscode.ExtensionContext,
    private readonly diffs: DiffDocuments,
  ) {
    this.drafts = context.workspaceState.get<Record<string, Segment[]>>(DRAFTS_KEY, {});
    this.disposables.push(
      server.onUpdate((u) => {
        if (u.kind === 'toolBlock' && u.name === 'Agent') this.toolSessions.set(u.toolCallId, u.sessionId);
        if (u.kind === 'workspaceTrust' && !this.chats.has(u.sessionId)) this.earlyTrust.set(u.sessionId, u);
        this.dispatch(u.sessionId, { type: 'update', update: u });
        if (u.kind === 'turnEnded') void this.refreshSessions();
      }),
      server.onProgress(({ token, value }) => {
        const sessionId = this.toolSessions.get(token.slice('wave/agent/'.length));
        if (sessionId) this.dispatch(sessionId, { type: 'progress', token, value });
      }),
      server.onDidChangeState((s) => this.serverStateChanged(s)),
      server.onDidStart(({ restart }) => {
        if (restart) void this.afterRestart();
        void this.refreshSessions();
      }),
    );
    server.permissionHandler = (params, token) => this.askPermission(params, token);
  }

  // ---------------------------------------------------------------- queries

  get activeChat(): ChatState | null {
    return this.active ? (this.chats.get(this.active)?.state ?? null) : null;
  }

  openChats(): { sessionId: string; cwd: string; state: ChatState }[] {
    return [...this.chats.entries()].map(([sessionId, c]) => ({ sessionId, cwd: c.cwd, state: c.state }));
  }

  runningSubagents(): number {
    let n = 0;
    for (const c of this.chats.values()) n += runningSubagents(c.state);
    return n;
  }

  activeFolder(): string | undefined {
    return this.active ? this.chats.get(this.active)?.cwd : this.pendingFolder ?? defaultFolder();
  }

  // ---------------------------------------------------------------- view

  attachView(view: ChatView): void {
    this.view = view;
  }

  snapshot(): Snapshot {
    const chat = this.active ? this.chats.get(this.active) : undefined;
    const folder = chat?.cwd ?? this.pendingFolder ?? defaultFolder() ?? '';
    return {
      chat: chat?.state ?? null,
      folder,
      sessions: this.sessionEntries(),
      draft: this.drafts[this.active ?? NEW_CHAT] ?? [],
      server: this.server.state,
      defaultMode: this.pendingMode ?? readSettings().permissionMode,
    };
  }

  private post(message: HostMessage): void {
    this.view?.post(message);
  }

  private pushSnapshot(): void {
    this.post({ type: 'snapshot', snapshot: this.snapshot() });
    this.changed.fire();
  }

  async handle(message: ViewMessage): Promise<void> {
    switch (message.type) {
      case 'ready':
        this.post({ type: 'snapshot', snapshot: this.snapshot() });
        void this.refreshSessions();
        return;
      case 'send':
        return this.send(message.text);
      case 'stop':
        return this.stop();
      case 'complete':
        return this.complete(message.requestId, message.text, message.cursor);
      case 'draft':
        return this.saveDraft(message.sessionId, message.segments);
      case 'permission':
        return this.answerPermission(message.key, message.answer);
      case 'showDiff':
        return this.showDiff(message.key);
      case 'setMode':
        return this.setMode(message.mode);
      case 'switchSession':
        return this.switchTo(message.sessionId);
      case 'newChat':
        return this.newChat();
      case 'closeChat':
        return this.closeActive();
      case 'showSessions':
        return this.showSessionsPicker();
      case 'stopTask':
        return this.stopTask(message.taskId);
      case 'openLink':
        return openLink(message.href, this.activeFolder());
      case 'command':
        await vscode.commands.executeCommand(
          {
            configureModel: 'wave.configureModel',
            restartServer: 'wave.restartServer',
            showLog: 'wave.showServerLog',
            manageTrust: 'workbench.trust.manage', // VS Code's own Workspace Trust editor
          }[message.command],
        );
        return;
      case 'metric':
        this.server.log.appendLine(`[wave] metric ${message.name}: ${message.ms.toFixed(1)} ms`);
        return;
    }
  }

  // ---------------------------------------------------------------- state

  private dispatch(sessionId: string, action: ChatAction): void {
    const chat = this.chats.get(sessionId);
    if (!chat) return;
    chat.state = reduce(chat.state, action);
    if (sessionId === this.active) this.post({ type: 'action', sessionId, action });
    this.changed.fire();
  }

  private saveDraft(sessionId: string | null, segments: Segment[]): void {
    const key = sessionId ?? NEW_CHAT;
    if (segments.length) this.drafts[key] = segments;
    else delete this.drafts[key];
    void this.context.workspaceState.update(DRAFTS_KEY, this.drafts);
  }

  private serverStateChanged(state: ServerState): void {
    if (state.state !== 'running') {
      for (const [id, chat] of this.chats) {
        // A turn the user sent, or one the session started itself (task notices): either
        // way nothing runs any more, and the chat must take the next message.
        if (chat.sending || chat.state.busy) {
          chat.sending?.dispose();
          chat.sending = undefined;
          this.dispatch(id, { type: 'sendFailed', error: 'The server stopped during this turn; its answer was lost.' });
        }
        for (const resolve of chat.prompts.values()) resolve({ allowed: false });
        chat.prompts.clear();
      }
    }
    this.post({ type: 'server', server: state });
  }

  private async afterRestart(): Promise<void> {
    for (const chat of this.chats.values()) chat.stale = true;
    if (this.active) {
      const chat = this.chats.get(this.active);
      if (chat) await this.resume(this.active, chat);
    }
  }

  // ---------------------------------------------------------------- sessions

  /** Starts a new chat: its session is created with the first message. */
  async newChat(folder?: string): Promise<void> {
    const picked = folder ?? (await pickFolder());
    if (!picked) return;
    this.active = null;
    this.pendingFolder = picked;
    this.pendingMode = undefined;
    this.pushSnapshot();
    this.view?.reveal();
    this.post({ type: 'focusInput' });
  }

  private async createSession(cwd: string): Promise<string> {
    const settings = readSettings();
    const mode = this.pendingMode ?? settings.permissionMode;
    const params: Record<string, unknown> = { cwd, permissionMode: mode };
    if (settings.model) params.model = settings.model;
    const { sessionId } = await this.server.request<{ sessionId: string }>('wave/session/new', params);
    this.chats.set(sessionId, {
      state: initialChat(sessionId, mode, settings.model),
      cwd,
      prompts: new Map(),
      stale: false,
      openedAt: Date.now(),
    });
    const early = this.earlyTrust.get(sessionId);
    this.earlyTrust.clear();
    if (early) this.dispatch(sessionId, { type: 'update', update: early });
    this.pendingMode = undefined;
    return sessionId;
  }

  /** Opens a saved or live session of the server as a chat here, and shows it. */
  async switchTo(sessionId: string): Promise<void> {
    if (sessionId === this.active) return;
    let chat = this.chats.get(sessionId);
    if (!chat) {
      const known = this.sessions.find((s) => s.sessionId === sessionId);
      chat = {
        state: initialChat(sessionId, readSettings().permissionMode),
        cwd: known?.folder ?? defaultFolder() ?? '',
        prompts: new Map(),
        stale: true,
        openedAt: Date.now(),
      };
      this.chats.set(sessionId, chat);
    }
    this.active = sessionId;
    if (chat.stale) await this.resume(sessionId, chat); // it shows the chat itself
    else this.pushSnapshot();
  }

  /** Re-opens a chat's session in the (new) server and reloads its history (one resume at
   * a time per chat: a message sent during a restart waits for the one under way). */
  private resume(sessionId: string, chat: Chat): Promise<boolean> {
    const running = this.resuming.get(sessionId);
    if (running) return running;
    const done = this.resumeOnce(sessionId, chat).finally(() => this.resuming.delete(sessionId));
    this.resuming.set(sessionId, done);
    return done;
  }

  private async resumeOnce(sessionId: string, chat: Chat): Promise<boolean> {
    try {
      await this.server.request('wave/session/new', { sessionId, ...(chat.cwd ? { cwd: chat.cwd } : {}) });
    } catch (e) {
      if (!chat.state.items.length) {
        // Never saved (no message yet): it is simply a new chat again.
        this.chats.delete(sessionId);
        if (this.active === sessionId) this.active = null;
        this.pendingFolder = chat.cwd;
        this.pushSnapshot();
        return false;
      }
      chat.state = reduce(chat.state, { type: 'notice', text: `This chat could not be resumed: ${errorText(e)}`, tone: 'error' });
      this.pushSnapshot();
      return false;
    }
    chat.stale = false;
    try {
      const [{ messages }, tasks] = await Promise.all([
        this.server.request<{ messages: WireMessage[] }>('wave/session/messages', { sessionId }),
        this.server.request<{ tasks: TaskInfo[] }>('wave/tasks/list', { sessionId }).catch(() => ({ tasks: [] })),
      ]);
      chat.state = reduce(reduce(chat.state, { type: 'history', messages }), { type: 'tasks', tasks: tasks.tasks });
    } catch (e) {
      chat.state = reduce(chat.state, { type: 'notice', text: `The history could not be read: ${errorText(e)}`, tone: 'error' });
    }
    if (this.active === sessionId) this.pushSnapshot();
    return true;
  }

  private async closeActive(): Promise<void> {
    const id = this.active;
    if (!id) return;
    const chat = this.chats.get(id);
    chat?.sending?.cancel();
    try {
      await this.server.request('wave/session/close', { sessionId: id });
    } catch (e) {
      this.server.log.appendLine(`[wave] wave/session/close: ${errorText(e)}`);
    }
    this.chats.delete(id);
    delete this.drafts[id];
    const next = [...this.chats.entries()].sort((a, b) => b[1].openedAt - a[1].openedAt)[0];
    this.active = next ? next[0] : null;
    this.pendingFolder = chat?.cwd;
    this.pushSnapshot();
    void this.refreshSessions();
  }

  async refreshSessions(): Promise<void> {
    let listed: SessionSummary[] = [];
    try {
      listed = (await this.server.request<{ sessions: SessionSummary[] }>('wave/session/list', {})).sessions;
    } catch (e) {
      this.server.log.appendLine(`[wave] wave/session/list: ${errorText(e)}`);
    }
    const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
    const inWorkspace = (cwd: string) => !folders.length || folders.some((f) => cwd === f || cwd.startsWith(f + path.sep));
    this.sessions = listed
      .filter((s) => inWorkspace(s.cwd) || this.chats.has(s.sessionId))
      .map((s) => ({ sessionId: s.sessionId, title: s.title || 'New chat', folder: s.cwd, updatedAt: s.updatedAt, open: this.chats.has(s.sessionId) }));
    this.post({ type: 'sessions', sessions: this.sessionEntries() });
  }

  private sessionEntries(): SessionEntry[] {
    const entries = this.sessions.map((s) => ({ ...s, open: this.chats.has(s.sessionId) }));
    for (const [id, chat] of this.chats) {
      if (!entries.some((e) => e.sessionId === id)) {
        const first = chat.state.items.find((i) => i.kind === 'user');
        const title = first && first.kind === 'user' ? first.text.split('\n', 1)[0].slice(0, 80) : 'New chat';
        entries.unshift({ sessionId: id, title, folder: chat.cwd, updatedAt: chat.openedAt, open: true });
      }
    }
    return entries.slice(0, 60);
  }

  async showSessionsPicker(): Promise<void> {
    await this.refreshSessions();
    type Item = vscode.QuickPickItem & { sessionId?: string; action?: 'new' };
    const items: Item[] = [{ label: '$(add) New Chat', action: 'new' }];
    const entries = this.sessionEntries();
    const open = entries.filter((e) => e.open);
    const saved = entries.filter((e) => !e.open);
    const describe = (e: SessionEntry): Item => ({
      label: (e.sessionId === this.active ? '$(comment-discussion) ' : '') + e.title,
      description: path.basename(e.folder),
      detail: e.updatedAt ? new Date(e.updatedAt).toLocaleString() : undefined,
      sessionId: e.sessionId,
    });
    if (open.length) items.push({ label: 'Open', kind: vscode.QuickPickItemKind.Separator }, ...open.map(describe));
    if (saved.length) items.push({ label: 'History', kind: vscode.QuickPickItemKind.Separator }, ...saved.map(describe));
    const pick = await vscode.window.showQuickPick(items, { title: 'Wave: Sessions', placeHolder: 'Switch to a chat or resume a saved one', matchOnDescription: true });
    if (!pick) return;
    if (pick.action === 'new') return this.newChat();
    if (pick.sessionId) {
      await this.switchTo(pick.sessionId);
      this.view?.reveal();
    }
  }

  // ---------------------------------------------------------------- turns

  private async send(text: string): Promise<void> {
    if (!text.trim()) return;
    const command = parseSlashCommand(text);
    if (command) return this.compact(command.instructions);
    let id = this.active;
    try {
      if (!id) {
        const folder = this.pendingFolder ?? defaultFolder();
        if (!folder) {
          void vscode.window.showErrorMessage('Wave: open a folder first; a chat works in a workspace folder.');
          return;
        }
        id = await this.createSession(folder);
        this.active = id;
        delete this.drafts[NEW_CHAT];
        this.pushSnapshot();
      }
    } catch (e) {
      void vscode.window.showErrorMessage(`Wave: the chat could not start: ${errorText(e)}`);
      return;
    }
    // While the server restarts (after a crash), its new process knows no session yet: wait
    // for it, so the chat is resumed there before this message goes.
    const { state } = this.server.state;
    if (state === 'restarting' || state === 'starting') await this.server.ready();
    const chat = this.chats.get(id);
    if (!chat) return;
    if (chat.stale && !(await this.resume(id, chat))) return;
    delete this.drafts[id];
    void this.context.workspaceState.update(DRAFTS_KEY, this.drafts);
    const cancel = new vscode.CancellationTokenSource();
    chat.sending = cancel;
    this.dispatch(id, { type: 'sendStarted' });
    try {
      const result = await this.server.request<SendResult>('wave/chat/send', { sessionId: id, text }, cancel.token);
      if (chat.sending === cancel) this.dispatch(id, { type: 'sendFinished', result });
    } catch (e) {
      if (chat.sending === cancel) {
        const code = (e as { code?: number }).code;
        const error = code === -32010 ? 'The previous message is still being answered; wait for it or press Stop.' : errorText(e);
        this.dispatch(id, cancel.token.isCancellationRequested ? { type: 'sendFinished', result: { status: 'cancelled', text: '' } } : { type: 'sendFailed', error });
      }
    } finally {
      if (chat.sending === cancel) chat.sending = undefined;
      cancel.dispose();
      void this.refreshSessions();
    }
  }

  /** `/compact [instructions]`: summarizes the active chat's history now. An error (a turn is
   * running, the model failed) is a line in the chat; success shows the `compacted` update. */
  private async compact(instructions?: string): Promise<void> {
    const id = this.active;
    const chat = id ? this.chats.get(id) : undefined;
    if (!id || !chat) {
      void vscode.window.showInformationMessage('Wave: nothing to compact yet; /compact works in a chat that has a conversation.');
      return;
    }
    delete this.drafts[id];
    void this.context.workspaceState.update(DRAFTS_KEY, this.drafts);
    try {
      const params = instructions ? { sessionId: id, instructions } : { sessionId: id };
      const result = await this.server.request<CompactResult>('wave/session/compact', params);
      if (!result.compacted) this.dispatch(id, { type: 'notice', text: 'Nothing to compact yet.', tone: 'info' });
    } catch (e) {
      this.dispatch(id, { type: 'notice', text: compactErrorText(errorText(e)), tone: 'error' });
    }
  }

  /** Stops the active chat's turn (`$/cancelRequest` on its `wave/chat/send`). */
  stop(): void {
    const chat = this.active ? this.chats.get(this.active) : undefined;
    chat?.sending?.cancel();
  }

  private async complete(requestId: number, text: string, cursor: number): Promise<void> {
    const params: Record<string, unknown> = { text, cursor };
    const chat = this.active ? this.chats.get(this.active) : undefined;
    if (chat && !chat.stale) params.sessionId = this.active;
    try {
      const started = performance.now();
      const list = await this.server.request<CompletionList>('wave/chatInput/completion', params);
      this.post({ type: 'completion', requestId, items: list.items, serverMs: performance.now() - started });
    } catch (e) {
      this.server.log.appendLine(`[wave] completion: ${errorText(e)}`);
      this.post({ type: 'completion', requestId, items: [] });
    }
  }

  private async setMode(mode: PermissionMode): Promise<void> {
    if (!PERMISSION_MODES.includes(mode)) return;
    const id = this.active;
    if (!id) {
      this.pendingMode = mode;
      this.pushSnapshot();
      return;
    }
    try {
      const r = await this.server.request<{ permissionMode: PermissionMode; model: string }>('wave/session/configure', { sessionId: id, permissionMode: mode });
      this.dispatch(id, { type: 'configured', permissionMode: r.permissionMode, model: r.model });
    } catch (e) {
      void vscode.window.showErrorMessage(`Wave: the permission mode could not be changed: ${errorText(e)}`);
      this.pushSnapshot();
    }
  }

  /** Reads every open chat's tasks again (`wave/tasks/list`). */
  async refreshTasks(): Promise<void> {
    for (const [sessionId, chat] of this.chats) {
      if (chat.stale) continue;
      try {
        const { tasks } = await this.server.request<{ tasks: TaskInfo[] }>('wave/tasks/list', { sessionId });
        this.dispatch(sessionId, { type: 'tasks', tasks });
      } catch (e) {
        this.server.log.appendLine(`[wave] wave/tasks/list: ${errorText(e)}`);
      }
    }
  }

  private async stopTask(taskId: string): Promise<void> {
    try {
      await this.server.request('wave/tasks/stop', { taskId });
    } catch (e) {
      void vscode.window.showErrorMessage(`Wave: the task could not be stopped: ${errorText(e)}`);
    }
  }

  // ---------------------------------------------------------------- permissions

  private askPermission(params: PermissionRequestParams, token: vscode.CancellationToken): Promise<PermissionAnswer> {
    const chat = this.chats.get(params.sessionId);
    if (!chat) return Promise.resolve({ allowed: false, message: 'The chat of this session is not open in the editor.' });
    const key = `perm-${++this.promptSeq}`;
    return new Promise<PermissionAnswer>((resolve) => {
      const done = (answer: PermissionAnswer) => {
        if (!chat.prompts.delete(key)) return;
        sub.dispose();
        resolve(answer);
      };
      const sub = token.onCancellationRequested(() => {
        this.dispatch(params.sessionId, { type: 'permissionCancelled', key });
        done({ allowed: false });
      });
      chat.prompts.set(key, done);
      this.dispatch(params.sessionId, { type: 'permissionAsked', key, request: params });
      if (params.sessionId === this.active) {
        if (!this.view?.visible) this.view?.reveal();
      } else {
        void vscode.window
          .showInformationMessage(`Wave asks: allow ${params.summary}?`, 'Show Chat')
          .then((pick) => pick && this.switchTo(params.sessionId).then(() => this.view?.reveal()));
      }
    });
  }

  private answerPermission(key: string, answer: PermissionAnswer): void {
    for (const [id, chat] of this.chats) {
      const resolve = chat.prompts.get(key);
      if (resolve) {
        this.dispatch(id, { type: 'permissionAnswered', key, answer });
        resolve(answer);
        return;
      }
    }
  }

  private async showDiff(key: string): Promise<void> {
    const item = this.activeChat?.items.find((i) => i.key === key);
    if (!item || item.kind !== 'permission' || !item.request.preview) return;
    await showPreviewDiff(this.diffs, item.request.preview);
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    this.changed.dispose();
  }
}

// -------------------------------------------------------------------- helpers

export function errorText(e: unknown): string {
  if (e instanceof Error) return e.message;
  if (e && typeof e === 'object' && 'message' in e) return String((e as { message: unknown }).message);
  return String(e);
}

/** The active editor's workspace folder, else the first one. */
export function defaultFolder(): string | undefined {
  const editor = vscode.window.activeTextEditor;
  const folder = editor && vscode.workspace.getWorkspaceFolder(editor.document.uri);
  return (folder ?? vscode.workspace.workspaceFolders?.[0])?.uri.fsPath;
}

/** In a multi-root workspace, asks which folder the chat works in (the default first). */
export async function pickFolder(): Promise<string | undefined> {
  const folders = vscode.workspace.workspaceFolders ?? [];
  if (folders.length <= 1) return folders[0]?.uri.fsPath ?? defaultFolder();
  const preferred = defaultFolder();
  const items = folders
    .map((f) => ({ label: f.name, description: f.uri.fsPath, path: f.uri.fsPath }))
    .sort((a, b) => Number(b.path === preferred) - Number(a.path === preferred));
  const pick = await vscode.window.showQuickPick(items, { title: 'Wave: New Chat', placeHolder: 'The folder the chat works in' });
  return pick?.path;
}

async function openLink(href: string, folder: string | undefined): Promise<void> {
  if (/^(https?|mailto):/i.test(href)) {
    await vscode.env.openExternal(vscode.Uri.parse(href));
    return;
  }
  if (/^[a-z][a-z0-9+.-]*:/i.test(href)) return;
  const [file, line] = href.split('#L');
  const target = path.isAbsolute(file) ? file : path.join(folder ?? '', file);
  try {
    const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(target));
    const n = Number(line) > 0 ? Number(line) - 1 : 0;
    await vscode.window.showTextDocument(doc, { selection: new vscode.Range(n, 0, n, 0), preview: true });
  } catch {
    void vscode.window.showWarningMessage(`Wave: ${file} could not be opened.`);
  }
}
