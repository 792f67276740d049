/**
 * The chat input: a contenteditable element that shows the tag model (shared/tags.ts) with
 * tags as non-editable chips. The model is the truth: typing is read back from the DOM, and
 * every structural change (a picked completion, Backspace/Delete next to a chip, a paste, a
 * new line, a restored draft) goes through the model and is rendered again. So the cursor
 * never enters a chip and a chip is deleted whole.
 */

import {
  deleteBackward,
  deleteForward,
  insertTag,
  insertText,
  normalize,
  replaceRange,
  tagAt,
  tagLabel,
  unitLength,
  type Edit,
  type Segment,
  type TagKind,
} from '../shared/tags';
import { agentColorCss, agentColors } from '../shared/agentStyle';

export interface TagEditorEvents {
  /** The content or the cursor changed (`inputTime`: the event's time stamp, for typing). */
  change(segments: Segment[], cursor: number, inputTime?: number): void;
  /** A key the editor does not handle itself (the dropdown takes arrows, Enter, Tab, Esc). */
  key(event: KeyboardEvent): boolean;
  submit(): void;
}

const CHIP = 'chip';

export class TagEditor {
  private segments: Segment[] = [];
  private composing = false;

  constructor(
    readonly root: HTMLElement,
    private readonly events: TagEditorEvents,
  ) {
    root.contentEditable = 'true';
    root.spellcheck = true;
    root.setAttribute('role', 'textbox');
    root.setAttribute('aria-multiline', 'true');
    root.addEventListener('keydown', (e) => this.onKeyDown(e));
    root.addEventListener('input', (e) => this.onInput(e));
    root.addEventListener('compositionstart', () => (this.composing = true));
    root.addEventListener('compositionend', (e) => {
      this.composing = false;
      this.onInput(e);
    });
    root.addEventListener('paste', (e) => this.onPaste(e));
    root.addEventListener('drop', (e) => e.preventDefault());
    root.addEventListener('keyup', (e) => {
      if (e.key.startsWith('Arrow') || e.key === 'Home' || e.key === 'End') this.emit();
    });
    root.addEventListener('click', () => this.emit());
  }

  get value(): Segment[] {
    return this.segments;
  }

  /** Replaces the content (a restored draft, or empty after sending); cursor at the end. */
  set(segments: Segment[]): void {
    this.segments = normalize(segments);
    this.render();
    if (document.activeElement === this.root) this.setCaret(unitLength(this.segments));
  }

  focus(): void {
    this.root.focus();
    this.setCaret(unitLength(this.segments));
  }

  caret(): number {
    const sel = window.getSelection();
    if (!sel || !sel.rangeCount || !this.root.contains(sel.anchorNode)) return unitLength(this.segments);
    return this.unitsBefore(sel.focusNode as Node, sel.focusOffset);
  }

  /** Replaces the `@` word [from, to) by a tag (a picked completion item). */
  insertTag(from: number, to: number, kind: TagKind, value: string): void {
    this.apply(insertTag(this.segments, from, to, kind, value));
  }

  // ------------------------------------------------------------------ events

  private onKeyDown(e: KeyboardEvent): void {
    if (this.composing || e.isComposing) return;
    if (this.events.key(e)) {
      e.preventDefault();
      return;
    }
    const sel = window.getSelection();
    const collapsed = !sel || sel.isCollapsed;
    if (e.key === 'Enter' && !e.shiftKey && !e.altKey) {
      e.preventDefault();
      this.events.submit();
    } else if (e.key === 'Enter') {
      e.preventDefault();
      this.replaceSelection('\n');
    } else if (e.key === 'Backspace' && collapsed && tagAt(this.segments, this.caret(), 'before')) {
      e.preventDefault();
      this.apply(deleteBackward(this.segments, this.caret()));
    } else if (e.key === 'Delete' && collapsed && tagAt(this.segments, this.caret(), 'after')) {
      e.preventDefault();
      this.apply(deleteForward(this.segments, this.caret()));
    }
  }

  private onInput(e: Event): void {
    if (this.composing) return;
    this.segments = this.read();
    // The browser may leave stray markup (a <br>, a split chip): render it clean again.
    if (this.root.querySelector(`div, p, span:not(.${CHIP}), br:not([data-end])`) || this.needsEndMarker()) {
      const caret = this.caret();
      this.render();
      this.setCaret(caret);
    }
    this.emit(e.timeStamp);
  }

  private onPaste(e: ClipboardEvent): void {
    e.preventDefault();
    const text = e.clipboardData?.getData('text/plain') ?? '';
    if (text) this.replaceSelection(text.replace(/\r\n?/g, '\n'));
  }

  /** Typed text over the selection, through the model (mention spellings become chips). */
  private replaceSelection(text: string): void {
    const sel = window.getSelection();
    let from = this.caret();
    let to = from;
    if (sel && sel.rangeCount && !sel.isCollapsed) {
      const a = this.unitsBefore(sel.anchorNode as Node, sel.anchorOffset);
      const b = this.unitsBefore(sel.focusNode as Node, sel.focusOffset);
      from = Math.min(a, b);
      to = Math.max(a, b);
    }
    this.apply(insertText(replaceRange(this.segments, from, to, []).segments, from, text));
  }

  private apply(edit: Edit): void {
    this.segments = edit.segments;
    this.render();
    this.setCaret(edit.cursor);
    this.emit();
  }

  private emit(inputTime?: number): void {
    this.events.change(this.segments, this.caret(), inputTime);
  }

  // ------------------------------------------------------------------ DOM <-> model

  private render(): void {
    const root = this.root;
    root.textContent = '';
    for (const s of this.segments) {
      if (s.type === 'text') root.appendChild(document.createTextNode(s.text));
      else root.appendChild(chipElement(s.kind, s.value));
    }
    if (this.needsEndMarker()) {
      const br = document.createElement('br');
      br.dataset.end = '';
      root.appendChild(br);
    }
  }

  /** A trailing new line (or chip) needs a <br> after it, or the caret cannot go there. */
  private needsEndMarker(): boolean {
    const last = this.segments[this.segments.length - 1];
    const hasMarker = this.root.lastChild instanceof HTMLBRElement && 'end' in (this.root.lastChild as HTMLElement).dataset;
    const wants = Boolean(last && last.type === 'text' && last.text.endsWith('\n'));
    return wants !== hasMarker;
  }

  private read(): Segment[] {
    const out: Segment[] = [];
    const walk = (node: Node, first: boolean) => {
      if (node.nodeType === Node.TEXT_NODE) {
        out.push({ type: 'text', text: (node.textContent ?? '').replace(/\u00a0/g, ' ') });
      } else if (node instanceof HTMLElement) {
        if (node.classList.contains(CHIP) && node.dataset.kind) {
          out.push({ type: 'tag', kind: node.dataset.kind as TagKind, value: node.dataset.value ?? '' });
        } else if (node instanceof HTMLBRElement) {
          if (!('end' in node.dataset)) out.push({ type: 'text', text: '\n' });
        } else {
          if ((node.tagName === 'DIV' || node.tagName === 'P') && !first) out.push({ type: 'text', text: '\n' });
          node.childNodes.forEach((child, i) => walk(child, i === 0));
        }
      }
    };
    this.root.childNodes.forEach((child, i) => walk(child, i === 0));
    return normalize(out);
  }

  /** Units of content before a DOM position inside the editor. */
  private unitsBefore(node: Node, offset: number): number {
    let units = 0;
    let done = false;
    const count = (n: Node): void => {
      if (done) return;
      if (n === node && n.nodeType === Node.TEXT_NODE) {
        units += offset;
        done = true;
        return;
      }
      if (n.nodeType === Node.TEXT_NODE) units += (n.textContent ?? '').length;
      else if (n instanceof HTMLElement && n.classList.contains(CHIP)) {
        if (n === node || n.contains(node)) {
          units += 1; // a caret inside a chip counts as after it
          done = true;
          return;
        }
        units += 1;
      } else if (n instanceof HTMLBRElement) {
        if (!('end' in n.dataset)) units += 1;
      } else {
        const children = Array.from(n.childNodes);
        for (let i = 0; i < children.length; i++) {
          if (n === node && i === offset) {
            done = true;
            return;
          }
          count(children[i]);
          if (done) return;
        }
        if (n === node) done = true;
      }
    };
    count(this.root);
    return units;
  }

  setCaret(pos: number): void {
    const sel = window.getSelection();
    if (!sel) return;
    let remaining = Math.max(0, pos);
    const children = Array.from(this.root.childNodes);
    const range = document.createRange();
    for (let i = 0; i < children.length; i++) {
      const child = children[i];
      if (child.nodeType === Node.TEXT_NODE) {
        const len = (child.textContent ?? '').length;
        if (remaining <= len) {
          range.setStart(child, remaining);
          range.collapse(true);
          sel.removeAllRanges();
          sel.addRange(range);
          return;
        }
        remaining -= len;
      } else if (child instanceof HTMLElement && child.classList.contains(CHIP)) {
        if (remaining === 0) {
          range.setStart(this.root, i);
          range.collapse(true);
          sel.removeAllRanges();
          sel.addRange(range);
          return;
        }
        remaining -= 1;
      }
    }
    const end = this.root.lastChild instanceof HTMLBRElement ? children.length - 1 : children.length;
    range.setStart(this.root, Math.max(0, end));
    range.collapse(true);
    sel.removeAllRanges();
    sel.addRange(range);
  }
}

export function chipElement(kind: TagKind, value: string): HTMLElement {
  const chip = document.createElement('span');
  chip.className = `${CHIP} chip-${kind}`;
  chip.contentEditable = 'false';
  chip.dataset.kind = kind;
  chip.dataset.value = value;
  chip.title = kind === 'agent' ? `Subagent ${value}` : value;
  chip.textContent = tagLabel({ kind, value });
  const color = kind === 'agent' ? agentColorCss(agentColors.get(value)) : undefined;
  if (color) {
    chip.classList.add('chip-colored');
    chip.style.setProperty('--agent-color', color);
  }
  return chip;
}
