/** The chat view: header (chats, mode, usage), transcript, background tasks, input. */

import type { JSX } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { HostMessage, ServerState, SessionEntry, Snapshot } from '../shared/messages';
import { reduce, type ChatItem, type ChatState, type TrustNotice } from '../shared/reducer';
import { parseTags, tagLabel, type Segment } from '../shared/tags';
import { PERMISSION_MODES, type PermissionMode, type TaskInfo } from '../shared/wire';
import { Icon, Spinner } from './icons';
import { InputBox, type InputHandle } from './InputBox';
import { contextLabel, contextTitle, formatTokens } from './toolSummary';
import { Transcript } from './Transcript';
import { metrics, post } from './vscodeApi';

const MODE_LABELS: Record<PermissionMode, string> = {
  default: 'Ask before changes',
  acceptEdits: 'Accept edits',
  plan: 'Plan (read-only)',
  bypassPermissions: 'Bypass permissions',
};

function basename(p: string): string {
  return p.split(/[\\/]/).filter(Boolean).pop() ?? p;
}

export function App(): JSX.Element {
  const [chat, setChat] = useState<ChatState | null>(null);
  const [folder, setFolder] = useState('');
  const [sessions, setSessions] = useState<SessionEntry[]>([]);
  const [server, setServer] = useState<ServerState>({ state: 'starting' });
  const [defaultMode, setDefaultMode] = useState<PermissionMode>('default');
  const input = useRef<InputHandle | null>(null);
  const chatRef = useRef<ChatState | null>(null);
  chatRef.current = chat;
  const renderStart = useRef<{ t: number; items: number } | undefined>(undefined);
  const shownSession = useRef<string | null | undefined>(undefined);
  const scroller = useRef<HTMLDivElement>(null);
  const stick = useRef(true);

  useEffect(() => {
    const onMessage = (event: MessageEvent<HostMessage>) => {
      const m = event.data;
      switch (m.type) {
        case 'snapshot':
          applySnapshot(m.snapshot);
          break;
        case 'action':
          setChat((c) => (c && c.sessionId === m.sessionId ? reduce(c, m.action) : c));
          break;
        case 'sessions':
          setSessions(m.sessions);
          break;
        case 'server':
          setServer(m.server);
          break;
        case 'completion':
          input.current?.completion(m.requestId, m.items, m.serverMs);
          break;
        case 'focusInput':
          input.current?.focus();
          break;
      }
    };
    const applySnapshot = (s: Snapshot) => {
      renderStart.current = { t: performance.now(), items: s.chat?.items.length ?? 0 };
      const id = s.chat?.sessionId ?? null;
      // A draft is loaded when another chat is shown (or on first paint), never over typing.
      if (shownSession.current !== id) {
        shownSession.current = id;
        input.current?.set(s.draft);
        stick.current = true;
      }
      setChat(s.chat);
      setFolder(s.folder);
      setSessions(s.sessions);
      setServer(s.server);
      setDefaultMode(s.defaultMode);
    };
    window.addEventListener('message', onMessage);
    post({ type: 'ready' });
    return () => window.removeEventListener('message', onMessage);
  }, []);

  // Benchmark: a snapshot (a switched or resumed chat) until its transcript is painted.
  useLayoutEffect(() => {
    const start = renderStart.current;
    if (!start) return;
    renderStart.current = undefined;
    requestAnimationFrame(() => {
      const ms = performance.now() - start.t;
      metrics.transcriptRender.push({ items: start.items, ms });
      if (start.items >= 100) post({ type: 'metric', name: `render ${start.items} items`, ms });
    });
  });

  // Follow the end of the transcript while the user is at the end.
  useLayoutEffect(() => {
    const el = scroller.current;
    if (el && stick.current) el.scrollTop = el.scrollHeight;
  });

  // The view got smaller (a pane opened below it): stay at the end if the user was there.
  useEffect(() => {
    const el = scroller.current;
    if (!el) return;
    const observer = new ResizeObserver(() => {
      if (stick.current) el.scrollTop = el.scrollHeight;
    });
    observer.observe(el);
    return () => observer.disconnect();
  }, []);

  const onScroll = () => {
    const el = scroller.current;
    if (el) stick.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
  };

  const onDraft = (segments: Segment[]) => post({ type: 'draft', sessionId: chatRef.current?.sessionId ?? null, segments });

  const onTranscriptClick = (e: MouseEvent) => {
    const target = e.target as HTMLElement;
    const link = target.closest('a');
    if (link) {
      e.preventDefault();
      const href = link.getAttribute('href');
      if (href) post({ type: 'openLink', href });
      return;
    }
    const copy = target.closest('.code-copy');
    if (copy) {
      const code = copy.closest('.code-block')?.querySelector('code')?.textContent ?? '';
      void navigator.clipboard?.writeText(code).then(() => {
        copy.textContent = 'Copied';
        setTimeout(() => (copy.textContent = 'Copy'), 1200);
      });
    }
  };

  const mode = chat?.permissionMode ?? defaultMode;
  const tasks = chat?.tasks ?? [];
  const running = tasks.filter((t) => t.status === 'running');
  const busy = Boolean(chat?.busy);
  const title = chat ? chatTitle(chat, sessions) : 'New chat';
  const label = (s: SessionEntry) => (chat && s.sessionId === chat.sessionId ? title : readableTitle(s.title));

  return (
    <div class="app">
      <header class="header">
        <div class="header-row">
          <select
            class="session-select"
            aria-label="Chat"
            title={title}
            value={chat?.sessionId ?? ''}
            onChange={(e) => {
              const select = e.target as HTMLSelectElement;
              const id = select.value;
              select.value = chat?.sessionId ?? ''; // the host answers with the chat to show
              if (id === '__history') post({ type: 'showSessions' });
              else if (id) post({ type: 'switchSession', sessionId: id });
              else post({ type: 'newChat' });
            }}
          >
            {!chat ? <option value="">New chat</option> : null}
            {sessions.filter((s) => s.open).map((s) => (
              <option key={s.sessionId} value={s.sessionId}>
                {label(s)}
              </option>
            ))}
            {sessions.some((s) => !s.open) ? (
              <optgroup label="History">
                {sessions.filter((s) => !s.open).slice(0, 30).map((s) => (
                  <option key={s.sessionId} value={s.sessionId}>
                    {label(s)}
                  </option>
                ))}
              </optgroup>
            ) : null}
            <option value="__history">All sessions…</option>
          </select>
          <button class="btn btn-icon" type="button" title="New chat" aria-label="New chat" onClick={() => post({ type: 'newChat' })}>
            <Icon name="plus" />
          </button>
          {chat ? (
            <button class="btn btn-icon" type="button" title="Close this chat" aria-label="Close chat" onClick={() => post({ type: 'closeChat' })}>
              <Icon name="close" />
            </button>
          ) : null}
        </div>
        <div class="header-row meta">
          <span class="folder" title={folder}>
            {basename(folder)}
          </span>
          <select
            class="mode-select"
            aria-label="Permission mode"
            value={mode}
            onChange={(e) => post({ type: 'setMode', mode: (e.target as HTMLSelectElement).value as PermissionMode })}
          >
            {PERMISSION_MODES.map((m) => (
              <option key={m} value={m}>
                {MODE_LABELS[m]}
              </option>
            ))}
          </select>
          {chat?.context ? (
            <span class="context" title={contextTitle(chat.context)}>
              {contextLabel(chat.context)}
            </span>
          ) : null}
          <span class="usage" title={chat?.usage ? `${chat.usage.total.prompt_tokens} prompt + ${chat.usage.total.completion_tokens} completion tokens` : 'No tokens used yet'}>
            {chat?.usage ? `${formatTokens(chat.usage.total.total_tokens)} tokens` : ''}
          </span>
        </div>
      </header>
      <ServerBanner server={server} />
      {chat?.trust ? <TrustBanner trust={chat.trust} /> : null}
      <div class="transcript" ref={scroller} onScroll={onScroll} onClick={onTranscriptClick}>
        {chat && chat.items.length ? <Transcript items={chat.items} cwd={folder} sessionId={chat.sessionId} scroller={scroller} /> : <EmptyState folder={folder} />}
        {busy && !chat?.items.some(isActive) ? (
          <div class="working">
            <Spinner /> Working…
          </div>
        ) : null}
      </div>
      {running.length ? <TaskStrip tasks={running} /> : null}
      <InputBox
        handle={input}
        busy={busy}
        canStop={Boolean(chat?.sending)}
        placeholder={busy ? 'Working… (■ stops it)' : 'Ask Wave, @ to mention'}
        onChange={onDraft}
        onSend={(text) => {
          stick.current = true;
          post({ type: 'send', text });
        }}
        onStop={() => post({ type: 'stop' })}
      />
    </div>
  );
}

/** Something on screen already shows that the turn is working. */
function isActive(i: ChatItem): boolean {
  if (i.kind === 'assistant' || i.kind === 'thinking') return i.streaming;
  if (i.kind === 'permission') return i.state === 'pending';
  return i.kind === 'tool' && (i.status === 'running' || i.status === 'pending');
}

/** A title on one line, tags written as @name. */
function readableTitle(text: string): string {
  const line = parseTags(text)
    .map((s) => (s.type === 'text' ? s.text : tagLabel(s)))
    .join('')
    .replace(/\s+/g, ' ')
    .trim();
  return line.length > 80 ? `${line.slice(0, 79)}…` : line || 'New chat';
}

function chatTitle(chat: ChatState, sessions: SessionEntry[]): string {
  const listed = sessions.find((s) => s.sessionId === chat.sessionId)?.title;
  if (listed && listed !== 'New chat') return readableTitle(listed);
  const first = chat.items.find((i) => i.kind === 'user');
  return first && first.kind === 'user' ? readableTitle(first.text) : 'New chat';
}

function EmptyState({ folder }: { folder: string }): JSX.Element {
  return (
    <div class="empty">
      <h2>Wave</h2>
      <p>
        Ask for a change, a review or an explanation in <strong>{basename(folder) || 'your workspace'}</strong>. The agent delegates to
        subagents; each shows up here as a live block.
      </p>
      <p>
        Type <kbd>@</kbd> to hand the task to a subagent or to attach a file.
      </p>
      <p class="muted">
        <button class="link" type="button" onClick={() => post({ type: 'command', command: 'configureModel' })}>
          Configure the model
        </button>
      </p>
    </div>
  );
}

function ServerBanner({ server }: { server: ServerState }): JSX.Element | null {
  if (server.state === 'running' || server.state === 'starting') return null;
  return (
    <div class={`banner banner-${server.state}`} role="alert">
      <span>{server.message}</span>
      <span class="banner-actions">
        {server.state !== 'restarting' ? (
          <button class="btn btn-small" type="button" onClick={() => post({ type: 'command', command: 'restartServer' })}>
            Restart server
          </button>
        ) : null}
        <button class="btn btn-small" type="button" onClick={() => post({ type: 'command', command: 'showLog' })}>
          Show log
        </button>
      </span>
    </div>
  );
}

const TRUST_SHOWN = 3;

/** What the folder's trust holds back, and the way to lift it (VS Code's Workspace Trust). */
function TrustBanner({ trust }: { trust: TrustNotice }): JSX.Element {
  const [all, setAll] = useState(false);
  const items = all ? trust.heldBack : trust.heldBack.slice(0, TRUST_SHOWN);
  const inRoot = (p: string) => (p.startsWith(trust.root + '/') ? p.slice(trust.root.length + 1) : p);
  return (
    <div class="trust-notice" role="status" aria-label="Workspace trust">
      <div class="trust-head">
        <Icon name="shield" />
        <span>
          <strong>Restricted Mode.</strong> Wave holds back what this repository ships that could run code or loosen a rule
          {trust.decision === false ? ' (you chose not to trust it)' : ''}:
        </span>
      </div>
      <ul class="trust-list">
        {items.map((item, i) => (
          <li key={`${item.kind}:${item.path}:${i}`} title={item.path}>
            <code>{inRoot(item.path)}</code> {item.detail}
          </li>
        ))}
      </ul>
      {trust.heldBack.length > TRUST_SHOWN ? (
        <button class="link" type="button" onClick={() => setAll(!all)}>
          {all ? 'Show fewer' : `Show all ${trust.heldBack.length}`}
        </button>
      ) : null}
      <div class="trust-foot">
        <span class="muted">Agent files, memory and rules still load. Trusting the workspace lifts this.</span>
        <button class="btn btn-small btn-primary" type="button" onClick={() => post({ type: 'command', command: 'manageTrust' })}>
          Manage Workspace Trust
        </button>
      </div>
    </div>
  );
}

function TaskStrip({ tasks }: { tasks: TaskInfo[] }): JSX.Element {
  return (
    <div class="tasks" aria-label="Background tasks">
      {tasks.map((t) => (
        <div class="task" key={t.taskId}>
          <Spinner />
          <span class="task-title" title={t.taskId}>
            {t.kind === 'subagent' ? `${t.subagentType}: ${t.description}` : t.description || t.command}
          </span>
          <span class="task-progress">{t.progress}</span>
          <button class="btn btn-small" type="button" title={`Stop ${t.taskId}`} onClick={() => post({ type: 'stopTask', taskId: t.taskId })}>
            <Icon name="stop" /> Stop
          </button>
        </div>
      ))}
    </div>
  );
}
