/** The chat transcript: messages, tool blocks, live Agent blocks, permission prompts. */

import type { JSX } from 'preact';
import { memo } from 'preact/compat';
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { AssistantItem, ChatItem, NoticeItem, PermissionItem, ThinkingItem, ToolItem, UserItem } from '../shared/reducer';
import { Icon, Spinner } from './icons';
import { renderMarkdown, renderUserText } from './markup';
import { post } from './vscodeApi';
import { formatDuration, formatTokens, parseArgs, toolLabel, toolTarget } from './toolSummary';
import { agentColorCss, agentNotes } from '../shared/agentStyle';

/** Items rendered at first (and added per step when scrolling up): a long chat opens fast. */
export const WINDOW = 60;

export function Transcript(props: { items: ChatItem[]; cwd: string; sessionId: string; scroller: { current: HTMLElement | null } }): JSX.Element {
  const { items, cwd, sessionId, scroller } = props;
  const [shown, setShown] = useState({ sessionId, start: Math.max(0, items.length - WINDOW) });
  const start = shown.sessionId === sessionId ? Math.min(shown.start, Math.max(0, items.length - WINDOW)) : Math.max(0, items.length - WINDOW);
  const sentinel = useRef<HTMLDivElement>(null);
  const anchor = useRef<number | null>(null);
  const showEarlier = () => {
    const el = scroller.current;
    anchor.current = el ? el.scrollHeight - el.scrollTop : null;
    setShown({ sessionId, start: Math.max(0, start - WINDOW) });
  };
  // Keep what the user looks at in place when earlier items appear above it.
  useLayoutEffect(() => {
    const el = scroller.current;
    if (el && anchor.current !== null) el.scrollTop = el.scrollHeight - anchor.current;
    anchor.current = null;
  }, [start]);
  useEffect(() => {
    const el = sentinel.current;
    if (!el || !start) return;
    const observer = new IntersectionObserver((entries) => entries.some((e) => e.isIntersecting) && showEarlier(), { root: scroller.current });
    observer.observe(el);
    return () => observer.disconnect();
  }, [start, sessionId]);
  return (
    <div class="transcript-items">
      {start > 0 ? (
        <div ref={sentinel} class="earlier">
          <button class="link" type="button" onClick={showEarlier}>
            Show {Math.min(WINDOW, start)} earlier ({start} more)
          </button>
        </div>
      ) : null}
      {items.slice(start).map((item) => (
        <Item key={item.key} item={item} cwd={cwd} />
      ))}
    </div>
  );
}

const Item = memo(function Item({ item, cwd }: { item: ChatItem; cwd: string }): JSX.Element {
  switch (item.kind) {
    case 'user':
      return <UserMessage item={item} />;
    case 'assistant':
      return <AssistantMessage item={item} />;
    case 'thinking':
      return <Thinking item={item} />;
    case 'notice':
      return <Notice item={item} />;
    case 'permission':
      return <PermissionCard item={item} cwd={cwd} />;
    case 'tool':
      return item.name === 'Agent' && !startsBackgroundRun(item) ? <AgentBlock item={item} /> : <ToolBlock item={item} cwd={cwd} />;
  }
});

/** The call that only starts a background subagent: a line; the run has its own live block. */
function startsBackgroundRun(item: ToolItem): boolean {
  if (item.details?.taskId && item.details.taskId === item.toolCallId) return false;
  return /^Background task /.test(item.shortResult) || parseArgs(item.arguments).run_in_background === true;
}

function UserMessage({ item }: { item: UserItem }): JSX.Element {
  const html = useMemo(() => renderUserText(item.text), [item.text]);
  return <div class="msg msg-user" dangerouslySetInnerHTML={{ __html: html }} />;
}

function AssistantMessage({ item }: { item: AssistantItem }): JSX.Element {
  const html = useMemo(() => renderMarkdown(item.text), [item.text]);
  return <div class={`msg msg-assistant markdown${item.streaming ? ' streaming' : ''}`} dangerouslySetInnerHTML={{ __html: html }} />;
}

/** The model's reasoning: one folded, dim block ("Thinking…" while it streams); opened on a click. */
function Thinking({ item }: { item: ThinkingItem }): JSX.Element {
  const [open, setOpen] = useState(false);
  return (
    <div class={`thinking${item.streaming ? ' streaming' : ''}`}>
      <button class="thinking-head" type="button" aria-expanded={open} onClick={() => setOpen(!open)}>
        <Icon name="chevron" class={`chev${open ? ' open' : ''}`} />
        <span>{item.streaming ? 'Thinking…' : 'Thought'}</span>
      </button>
      {open ? <div class="thinking-body">{item.text}</div> : null}
    </div>
  );
}

function Notice({ item }: { item: NoticeItem }): JSX.Element {
  return (
    <div class={`notice notice-${item.tone}`} role={item.tone === 'error' ? 'alert' : undefined}>
      {item.tone === 'error' ? <Icon name="error" /> : null}
      <span>{item.text}</span>
    </div>
  );
}

function StatusIcon({ status }: { status: ToolItem['status'] }): JSX.Element {
  if (status === 'pending' || status === 'running') return <Spinner />;
  return status === 'completed' ? <Icon name="check" class="ok" title="done" /> : <Icon name="error" class="failed" title="failed" />;
}

function ToolBlock({ item, cwd }: { item: ToolItem; cwd: string }): JSX.Element {
  const [open, setOpen] = useState(false);
  const args = useMemo(() => parseArgs(item.arguments), [item.arguments]);
  const target = toolTarget(item.target, args, cwd);
  return (
    <div class={`tool tool-${item.status}`} data-tool={item.name}>
      <button class="tool-head" type="button" aria-expanded={open} onClick={() => setOpen(!open)}>
        <Icon name="chevron" class={`chev${open ? ' open' : ''}`} />
        <StatusIcon status={item.status} />
        <span class="tool-name" title={item.name}>{toolLabel(item.name)}</span>
        <span class="tool-target" title={target}>{target}</span>
        {item.shortResult ? <span class="tool-short">{item.shortResult}</span> : null}
      </button>
      {open ? (
        <div class="tool-body">
          <div class="label">Arguments</div>
          <pre class="args">{Object.keys(args).length ? JSON.stringify(args, null, 2) : item.arguments || '(none)'}</pre>
          {item.result !== undefined ? (
            <>
              <div class="label">Result</div>
              <ResultText text={item.result} />
            </>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}

const RESULT_CAP = 20_000;

function ResultText({ text }: { text: string }): JSX.Element {
  const [all, setAll] = useState(false);
  const long = text.length > RESULT_CAP;
  return (
    <>
      <pre class="result">{long && !all ? text.slice(0, RESULT_CAP) : text || '(empty)'}</pre>
      {long && !all ? (
        <button class="link" type="button" onClick={() => setAll(true)}>
          Show all ({Math.round(text.length / 1000)} KB)
        </button>
      ) : null}
    </>
  );
}

/** One delegation: subagent type, task, live activity ($/progress), worktree, summary, answer. */
function AgentBlock({ item }: { item: ToolItem }): JSX.Element {
  const [open, setOpen] = useState(false);
  const args = useMemo(() => parseArgs(item.arguments), [item.arguments]);
  const d = item.details ?? {};
  const type = d.subagentType ?? (args.subagent_type as string | undefined) ?? (args.fork ? 'fork' : 'Agent');
  const task = d.description ?? (args.description as string | undefined) ?? item.progress?.title ?? '';
  const running = item.status === 'pending' || item.status === 'running';
  const live = item.progress?.message || item.shortResult;
  const summary = item.progress?.end || d.summary || (running ? '' : item.shortResult);
  const wt = d.worktree;
  const result = item.result ?? '';
  const color = agentColorCss(d.color);
  const notes = agentNotes(d);
  return (
    <div
      class={`agent agent-${item.status}${d.background ? ' agent-bg' : ''}${color ? ' agent-colored' : ''}`}
      data-agent={type}
      data-color={color ? d.color : undefined}
      style={color ? { '--agent-color': color } : undefined}
    >
      <div class="agent-head">
        <Icon name="agent" class="agent-icon" />
        {color ? <span class="agent-dot" title={`color: ${d.color}`} /> : null}
        <span class="agent-type">{type}</span>
        <span class="agent-task" title={task}>{task}</span>
        {d.background ? <span class="badge">background</span> : null}
        <span class="agent-status">{running ? <Spinner /> : <StatusIcon status={item.status} />}</span>
      </div>
      {running && live ? <div class="agent-live">{live}</div> : null}
      {wt && wt.path ? (
        <div class="agent-worktree" title={wt.path}>
          <Icon name="branch" />
          <code>{wt.inPlace ? `in place: ${shortWorktree(wt.path)}` : wt.branch ?? shortWorktree(wt.path)}</code>
          {wt.kept === true ? <span class="badge badge-kept">kept</span> : null}
          {wt.kept === false ? <span class="badge">removed</span> : null}
          {wt.kept === true && (wt.changedFiles || wt.commits) ? (
            <span class="muted">
              {wt.changedFiles ?? 0} changed file{wt.changedFiles === 1 ? '' : 's'}, {wt.commits ?? 0} commit{wt.commits === 1 ? '' : 's'}
            </span>
          ) : null}
        </div>
      ) : null}
      {summary ? (
        <div class="agent-summary">
          {summary}
          {!running && d.durationMs !== undefined && !/\ds\)/.test(summary) ? <span class="muted"> · {formatDuration(d.durationMs)}</span> : null}
          {!running && d.totalTokens && !/tokens/.test(summary) ? <span class="muted"> · {formatTokens(d.totalTokens)} tokens</span> : null}
        </div>
      ) : null}
      {notes.length ? <div class="agent-notes">{notes.join(' · ')}</div> : null}
      {d.error ? <div class="agent-error">{d.error}</div> : null}
      {d.background && running && d.taskId ? (
        <button class="btn btn-small" type="button" onClick={() => post({ type: 'stopTask', taskId: d.taskId as string })}>
          <Icon name="stop" /> Stop
        </button>
      ) : null}
      {(!running && result) || args.prompt ? (
        <button class="link agent-toggle" type="button" aria-expanded={open} onClick={() => setOpen(!open)}>
          <Icon name="chevron" class={`chev${open ? ' open' : ''}`} /> {open ? 'Hide' : 'Show'} task and answer
        </button>
      ) : null}
      {open ? (
        <div class="agent-body">
          {args.prompt ? (
            <>
              <div class="label">Task</div>
              <div class="agent-prompt">{String(args.prompt)}</div>
            </>
          ) : null}
          {!running && result ? (
            <>
              <div class="label">Answer</div>
              <div class="markdown" dangerouslySetInnerHTML={{ __html: renderMarkdown(result) }} />
            </>
          ) : null}
        </div>
      ) : null}
    </div>
  );
}

function shortWorktree(p: string): string {
  const i = p.indexOf('/.wave/worktrees/');
  return i >= 0 ? p.slice(i + 1) : p;
}

const STATE_TEXT: Record<PermissionItem['state'], string> = {
  pending: '',
  allowed: 'Allowed',
  allowedSession: 'Allowed for this session',
  denied: 'Denied',
  cancelled: 'No longer needed',
};

function PermissionCard({ item, cwd }: { item: PermissionItem; cwd: string }): JSX.Element {
  const [denying, setDenying] = useState(false);
  const [reason, setReason] = useState('');
  const { request } = item;
  const args = typeof request.arguments === 'string' ? parseArgs(request.arguments) : request.arguments ?? {};
  const pending = item.state === 'pending';
  const answer = (allowed: boolean, remember?: boolean) => {
    post({
      type: 'permission',
      key: item.key,
      answer: allowed ? { allowed: true, ...(remember ? { remember: 'session' as const } : {}) } : { allowed: false, ...(reason.trim() ? { message: reason.trim() } : {}) },
    });
  };
  const bash = request.toolName === 'Bash';
  const target = bash ? '' : toolTarget(undefined, args, cwd);
  const what = bash ? 'run this command' : target ? `${toolLabel(request.toolName)} ${target}` : request.summary;
  if (!pending) {
    return (
      <div class={`permission permission-${item.state}`}>
        <Icon name={item.state === 'denied' ? 'error' : item.state === 'cancelled' ? 'close' : 'check'} />
        <span class="permission-result">
          {STATE_TEXT[item.state]}: {bash ? String(args.command ?? request.summary) : what}
          {item.reason ? ` (${item.reason})` : ''}
        </span>
      </div>
    );
  }
  return (
    <div class="permission permission-pending" role="alertdialog" aria-label="Permission request">
      <div class="permission-head">
        <Icon name="shield" />
        <span>
          Allow <strong>{what}</strong>?
        </span>
      </div>
      {bash ? <pre class="permission-detail">{String(args.command ?? request.summary)}</pre> : null}
      {pending ? (
        <div class="permission-actions">
          <button class="btn btn-primary" type="button" onClick={() => answer(true)}>
            Allow
          </button>
          <button class="btn" type="button" onClick={() => answer(true, true)} title="Don't ask again in this session for the same kind of call">
            Allow for this session
          </button>
          {request.preview ? (
            <button class="btn" type="button" onClick={() => post({ type: 'showDiff', key: item.key })}>
              <Icon name="diff" /> Show diff
            </button>
          ) : null}
          {!denying ? (
            <button class="btn btn-danger" type="button" onClick={() => setDenying(true)}>
              Deny…
            </button>
          ) : (
            <form
              class="deny-form"
              onSubmit={(e) => {
                e.preventDefault();
                answer(false);
              }}
            >
              <input
                class="deny-reason"
                placeholder="Why? (optional, the agent reads it)"
                value={reason}
                onInput={(e) => setReason((e.target as HTMLInputElement).value)}
                ref={(el) => el?.focus()}
              />
              <button class="btn btn-danger" type="submit">
                Deny
              </button>
            </form>
          )}
        </div>
      ) : null}
    </div>
  );
}
