/**
 * The message input with its `@` dropdown (SPEC MENTION-1..3): typing `@` asks the server
 * (`wave/chatInput/completion`, subagents first, then files) and shows what it answers,
 * filtered by the server as the query grows; Up/Down move, Enter/Tab pick, Esc closes.
 * A picked item becomes a chip.
 */

import { parseSlashCommand } from '../shared/slashCommands';
import type { JSX } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { atWord, isBlank, serialize, toServerText, type AtWord, type Segment } from '../shared/tags';
import { agentColorCss, agentColors } from '../shared/agentStyle';
import type { CompletionItem } from '../shared/wire';
import { Icon } from './icons';
import { TagEditor } from './tagEditor';
import { metrics, post } from './vscodeApi';

export interface InputHandle {
  set(segments: Segment[]): void;
  focus(): void;
  completion(requestId: number, items: CompletionItem[], serverMs?: number): void;
}

interface Props {
  busy: boolean;
  canStop: boolean;
  placeholder: string;
  onChange(segments: Segment[]): void;
  onSend(text: string): void;
  onStop(): void;
  handle: { current: InputHandle | null };
}

interface Dropdown {
  word: AtWord;
  items: CompletionItem[];
  selected: number;
}

const AGENT_KIND = 7;

function isAgent(item: CompletionItem): boolean {
  return item.kind === AGENT_KIND || (item.insertText ?? '').startsWith('[@agent:');
}

function tagOf(item: CompletionItem): { kind: 'agent' | 'file'; value: string } {
  const m = /^\[@(agent|file):(.*)\]$/s.exec(item.insertText ?? '');
  if (m) return { kind: m[1] as 'agent' | 'file', value: m[2] };
  return { kind: isAgent(item) ? 'agent' : 'file', value: item.label };
}

/** Keeps the highlighted item when it is still offered, else the first. */
function keepSelection(previous: Dropdown | null, items: CompletionItem[]): number {
  const label = previous?.items[previous.selected]?.label;
  const at = label === undefined ? -1 : items.findIndex((i) => i.label === label);
  return at >= 0 ? at : 0;
}

function docText(item: CompletionItem): string {
  const d = item.documentation;
  return typeof d === 'string' ? d : d?.value ?? item.detail ?? '';
}

export function InputBox(props: Props): JSX.Element {
  const rootRef = useRef<HTMLDivElement>(null);
  const editorRef = useRef<TagEditor | null>(null);
  const [dropdown, setDropdown] = useState<Dropdown | null>(null);
  const [empty, setEmpty] = useState(true);
  const dropdownRef = useRef<Dropdown | null>(null);
  dropdownRef.current = dropdown;
  const request = useRef({ id: 0, word: null as AtWord | null, inputTime: 0 as number | undefined, dismissed: -1 });
  const propsRef = useRef(props);
  propsRef.current = props;
  // Paint timings for the benchmark: [keystroke time, live answer?]
  const pendingPaint = useRef<{ since: number; live: boolean }[]>([]);
  // The server's last answer per query: shown at once while the new one is on its way
  // (the way VS Code's suggest widget does); `@` alone is fetched when the input gets focus.
  const cache = useRef(new Map<string, CompletionItem[]>());
  const lastPrefetch = useRef(0);
  const firstPainted = useRef(new Set<number>());

  const pick = (index: number) => {
    const d = dropdownRef.current;
    const editor = editorRef.current;
    if (!d || !editor) return;
    const item = d.items[index];
    if (!item) return;
    const tag = tagOf(item);
    setDropdown(null);
    request.current.word = null;
    editor.insertTag(d.word.from, d.word.to, tag.kind, tag.value);
  };

  const submit = () => {
    const editor = editorRef.current;
    if (!editor || isBlank(editor.value)) return;
    const text = serialize(editor.value).trim();
    // /compact goes during a turn too: the server's refusal is then a line in the chat.
    if (propsRef.current.busy && !parseSlashCommand(text)) return;
    editor.set([]);
    setEmpty(true);
    propsRef.current.onChange([]);
    propsRef.current.onSend(text);
  };

  useLayoutEffect(() => {
    const editor = new TagEditor(rootRef.current as HTMLDivElement, {
      change(segments, cursor, inputTime) {
        setEmpty(isBlank(segments) && !segments.some((s) => s.type === 'tag'));
        propsRef.current.onChange(segments);
        const word = atWord(segments, cursor);
        const r = request.current;
        if (!word || word.from === r.dismissed) {
          if (!word) r.dismissed = -1;
          r.word = null;
          setDropdown(null);
          return;
        }
        if (r.word && r.word.from === word.from && r.word.query === word.query) return;
        r.word = word;
        r.id += 1;
        r.inputTime = inputTime;
        const cached = cache.current.get(word.query);
        if (cached) {
          if (inputTime !== undefined) pendingPaint.current.push({ since: inputTime, live: false });
          setDropdown((d) => ({ word, items: cached, selected: keepSelection(d, cached) }));
        }
        const { text, cursor: at } = toServerText(segments, cursor);
        post({ type: 'complete', requestId: r.id, text, cursor: at });
      },
      key(e) {
        const d = dropdownRef.current;
        if (!d || !d.items.length) {
          if (d && e.key === 'Escape') {
            request.current.dismissed = d.word.from;
            setDropdown(null);
            return true;
          }
          return false;
        }
        if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
          const step = e.key === 'ArrowDown' ? 1 : -1;
          setDropdown({ ...d, selected: (d.selected + step + d.items.length) % d.items.length });
          return true;
        }
        if (e.key === 'Enter' || e.key === 'Tab') {
          pick(d.selected);
          return true;
        }
        if (e.key === 'Escape') {
          request.current.dismissed = d.word.from;
          request.current.word = null;
          setDropdown(null);
          return true;
        }
        return false;
      },
      submit,
    });
    editorRef.current = editor;
    props.handle.current = {
      set: (segments) => {
        editor.set(segments);
        setEmpty(isBlank(segments) && !segments.some((s) => s.type === 'tag'));
        request.current.word = null;
        setDropdown(null);
      },
      focus: () => editor.focus(),
      completion: (requestId, items, serverMs) => {
        agentColors.learn(items);
        if (requestId < 0) {
          cache.current.set('', items);
          return;
        }
        const r = request.current;
        if (requestId !== r.id || !r.word) return;
        const word = r.word;
        cache.current.set(word.query, items);
        if (serverMs !== undefined) metrics.atServer.push(serverMs);
        if (r.inputTime !== undefined) pendingPaint.current.push({ since: r.inputTime, live: true });
        setDropdown((d) => ({ word, items, selected: keepSelection(d, items) }));
      },
    };
    rootRef.current?.addEventListener('focus', () => {
      if (Date.now() - lastPrefetch.current < 2000) return;
      lastPrefetch.current = Date.now();
      post({ type: 'complete', requestId: -1, text: '@', cursor: 1 });
    });
  }, []);

  // The `@` benchmark: from the keystroke's event to the frame that shows the dropdown (a
  // layout effect runs right after the DOM changed; the next animation frame is its paint).
  useLayoutEffect(() => {
    const waiting = pendingPaint.current;
    if (!waiting.length || !dropdown) return;
    pendingPaint.current = [];
    requestAnimationFrame(() => {
      const now = performance.now();
      for (const { since, live } of waiting) {
        if (live) metrics.atToLivePaint.push(now - since);
        if (!firstPainted.current.has(since)) {
          firstPainted.current.add(since);
          metrics.atToPaint.push(now - since);
        }
      }
    });
  }, [dropdown]);

  useEffect(() => {
    document.getElementById('wave-dropdown-selected')?.scrollIntoView({ block: 'nearest' });
  }, [dropdown?.selected]);

  const agents = dropdown?.items.filter(isAgent) ?? [];
  const files = dropdown?.items.filter((i) => !isAgent(i)) ?? [];
  const index = (item: CompletionItem) => dropdown?.items.indexOf(item) ?? -1;
  const row = (item: CompletionItem) => {
    const i = index(item);
    const selected = i === dropdown?.selected;
    const agent = isAgent(item);
    return (
      <li
        key={`${i}:${item.label}`}
        id={selected ? 'wave-dropdown-selected' : undefined}
        class={`dd-item${selected ? ' selected' : ''}`}
        role="option"
        aria-selected={selected}
        onMouseDown={(e) => {
          e.preventDefault();
          pick(i);
        }}
        onMouseMove={() => dropdown && !selected && setDropdown({ ...dropdown, selected: i })}
      >
        <Icon name={agent ? 'agent' : 'file'} class="dd-icon" />
        {agent && agentColorCss(item.data?.color) ? <span class="agent-dot" style={{ background: agentColorCss(item.data?.color) }} /> : null}
        <span class="dd-label">{item.label}</span>
        <span class="dd-detail" title={agent ? item.data?.path ?? '' : ''}>{agent ? docText(item) : ''}</span>
      </li>
    );
  };

  return (
    <div class="input-area">
      {dropdown ? (
        <div class="dropdown" role="listbox" aria-label="Mention a subagent or a file">
          {!dropdown.items.length ? <div class="dd-empty">No subagent or file matches “{dropdown.word.query}”</div> : null}
          {agents.length ? <div class="dd-group">Subagents</div> : null}
          <ul>{agents.map(row)}</ul>
          {files.length ? <div class="dd-group">Files</div> : null}
          <ul>{files.map(row)}</ul>
        </div>
      ) : null}
      <div class="input-row">
        <div class="input-wrap">
          <div ref={rootRef} class="input" aria-label="Message Wave" data-placeholder={props.placeholder} />
          {empty ? <div class="placeholder">{props.placeholder}</div> : null}
        </div>
        {props.busy && props.canStop ? (
          <button class="btn btn-icon btn-stop" type="button" title="Stop (cancel this turn)" aria-label="Stop" onClick={props.onStop}>
            <Icon name="stop" />
          </button>
        ) : (
          <button class="btn btn-icon btn-send" type="button" title="Send (Enter)" aria-label="Send" disabled={props.busy || empty} onClick={submit}>
            <Icon name="send" />
          </button>
        )}
      </div>
    </div>
  );
}
