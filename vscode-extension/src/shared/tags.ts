/**
 * The chat input's content as a list of segments: plain text and atomic tags (chips).
 *
 * A tag is one unit for the cursor: it cannot be entered, and deleting next to it removes it
 * whole. Positions ("units") count a text's UTF-16 code units and 1 per tag. The text sent to
 * the server spells tags as `[@agent:<name>]` / `[@file:<path>]` (SPEC MENTION-3), and
 * `parseTags` reads those spellings (and the CLI's `@agent:<name>`) back, for sent messages
 * (MENTION-7) and pasted text. Pure functions: the DOM editor and the tests share them.
 */

export type TagKind = 'agent' | 'file';
export interface TextSegment { type: 'text'; text: string }
export interface TagSegment { type: 'tag'; kind: TagKind; value: string }
export type Segment = TextSegment | TagSegment;

/** The same rules as the server's MENTION_RE (wave_ls/chat_input/mentions.py). */
const NAME = '[A-Za-z][A-Za-z0-9_:-]*';
const BARE_NAME = '[A-Za-z](?:[A-Za-z0-9_:-]*[A-Za-z0-9_])?';
const PATH = '(?:[^\\[\\]\\n]|\\[[^\\[\\]\\n]*\\])+';
const MENTION_SOURCE =
  `\\[@agent:(${NAME})\\]` + `|(?<![^\\s(\\[{<"'\`])@agent:(${BARE_NAME})` + `|\\[@file:(${PATH})\\]`;
const NAME_RE = new RegExp(`^${NAME}$`);

export function isTaggableName(name: string): boolean {
  return NAME_RE.test(name);
}

export function tagText(tag: Pick<TagSegment, 'kind' | 'value'>): string {
  return `[@${tag.kind}:${tag.value}]`;
}

/** What a chip shows: `@name` for a subagent, the file's base name for a file. */
export function tagLabel(tag: Pick<TagSegment, 'kind' | 'value'>): string {
  if (tag.kind === 'agent') return `@${tag.value}`;
  const parts = tag.value.split('/').filter(Boolean);
  return parts.length ? parts[parts.length - 1] : tag.value;
}

/** Reads every mention spelling out of a text (a sent message, pasted text). */
export function parseTags(text: string): Segment[] {
  const out: Segment[] = [];
  const re = new RegExp(MENTION_SOURCE, 'g');
  let last = 0;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const [whole, agent, bare, file] = m;
    const value = agent ?? bare ?? (file ?? '').trim();
    if (!value) continue;
    if (m.index > last) out.push({ type: 'text', text: text.slice(last, m.index) });
    out.push({ type: 'tag', kind: file !== undefined ? 'file' : 'agent', value });
    last = m.index + whole.length;
  }
  if (last < text.length) out.push({ type: 'text', text: text.slice(last) });
  return out;
}

export function serialize(segments: readonly Segment[]): string {
  return segments.map((s) => (s.type === 'text' ? s.text : tagText(s))).join('');
}

export function unitLength(segments: readonly Segment[]): number {
  return segments.reduce((n, s) => n + (s.type === 'text' ? s.text.length : 1), 0);
}

export function isBlank(segments: readonly Segment[]): boolean {
  return segments.every((s) => s.type === 'text' && !s.text.trim());
}

/** Merges neighbouring texts and drops empty ones: one canonical form for equal contents. */
export function normalize(segments: readonly Segment[]): Segment[] {
  const out: Segment[] = [];
  for (const s of segments) {
    if (s.type === 'text') {
      if (!s.text) continue;
      const prev = out[out.length - 1];
      if (prev && prev.type === 'text') out[out.length - 1] = { type: 'text', text: prev.text + s.text };
      else out.push({ type: 'text', text: s.text });
    } else {
      out.push({ ...s });
    }
  }
  return out;
}

export interface Edit {
  segments: Segment[];
  cursor: number;
}

/** Splits the content at a unit position: what lies before and after it. */
function split(segments: readonly Segment[], pos: number): [Segment[], Segment[]] {
  const before: Segment[] = [];
  const after: Segment[] = [];
  let at = 0;
  for (const s of segments) {
    const len = s.type === 'text' ? s.text.length : 1;
    if (at + len <= pos) before.push(s);
    else if (at >= pos) after.push(s);
    else if (s.type === 'text') {
      before.push({ type: 'text', text: s.text.slice(0, pos - at) });
      after.push({ type: 'text', text: s.text.slice(pos - at) });
    }
    at += len;
  }
  return [before, after];
}

function clamp(segments: readonly Segment[], pos: number): number {
  return Math.max(0, Math.min(pos, unitLength(segments)));
}

/** Replaces the units [from, to) by `inserted` (text and tags); the cursor ends after it. */
export function replaceRange(segments: readonly Segment[], from: number, to: number, inserted: readonly Segment[]): Edit {
  from = clamp(segments, from);
  to = clamp(segments, Math.max(from, to));
  const [before] = split(segments, from);
  const [, after] = split(segments, to);
  return { segments: normalize([...before, ...inserted, ...after]), cursor: from + unitLength(inserted) };
}

/** Typed or pasted text; mention spellings in it become tags. */
export function insertText(segments: readonly Segment[], pos: number, text: string): Edit {
  return replaceRange(segments, pos, pos, parseTags(text));
}

/** A picked completion: the `@` word [from, to) becomes a tag followed by one space. */
export function insertTag(segments: readonly Segment[], from: number, to: number, kind: TagKind, value: string): Edit {
  const [, after] = split(segments, clamp(segments, to));
  const next = after[0];
  const spaced = next && next.type === 'text' && /^\s/.test(next.text);
  const inserted: Segment[] = [{ type: 'tag', kind, value }];
  const edit = replaceRange(segments, from, to, spaced ? inserted : [...inserted, { type: 'text', text: ' ' }]);
  return spaced ? { ...edit, cursor: edit.cursor + 1 } : edit;
}

/** The unit just before `pos`: a tag, or the characters (a surrogate pair counts as one). */
function unitBefore(segments: readonly Segment[], pos: number): { from: number } | null {
  if (pos <= 0) return null;
  const [before] = split(segments, pos);
  const last = before[before.length - 1];
  if (!last) return null;
  if (last.type === 'tag') return { from: pos - 1 };
  const code = last.text.charCodeAt(last.text.length - 1);
  const pair = code >= 0xdc00 && code <= 0xdfff && last.text.length > 1;
  return { from: pos - (pair ? 2 : 1) };
}

/** Backspace: a tag before the cursor goes whole; else one character. */
export function deleteBackward(segments: readonly Segment[], pos: number): Edit {
  pos = clamp(segments, pos);
  const unit = unitBefore(segments, pos);
  if (!unit) return { segments: normalize(segments), cursor: pos };
  return replaceRange(segments, unit.from, pos, []);
}

/** Delete: a tag after the cursor goes whole; else one character. */
export function deleteForward(segments: readonly Segment[], pos: number): Edit {
  pos = clamp(segments, pos);
  const [, after] = split(segments, pos);
  const first = after[0];
  if (!first) return { segments: normalize(segments), cursor: pos };
  let len = 1;
  if (first.type === 'text') {
    const code = first.text.charCodeAt(0);
    if (code >= 0xd800 && code <= 0xdbff && first.text.length > 1) len = 2;
  }
  const edit = replaceRange(segments, pos, pos + len, []);
  return { ...edit, cursor: pos };
}

/** The tag right before / after a position, if any (the editor moves over it in one step). */
export function tagAt(segments: readonly Segment[], pos: number, side: 'before' | 'after'): TagSegment | null {
  const [before, after] = split(segments, clamp(segments, pos));
  const s = side === 'before' ? before[before.length - 1] : after[0];
  return s && s.type === 'tag' ? s : null;
}

export interface AtWord {
  /** The text after `@` up to the cursor. */
  query: string;
  /** Unit range of the whole `@` word (replaced by a picked item). */
  from: number;
  to: number;
}

/**
 * The `@` word ending at the cursor, as the server reads it: from the last whitespace (a tag
 * also ends a word) to the cursor, starting with `@`. `mail a@b` is no query.
 */
export function atWord(segments: readonly Segment[], pos: number): AtWord | null {
  pos = clamp(segments, pos);
  const [before] = split(segments, pos);
  const last = before[before.length - 1];
  if (!last || last.type !== 'text') return null;
  const match = /(?:^|\s)(@\S*)$/.exec(last.text);
  if (!match) return null;
  const word = match[1];
  return { query: word.slice(1), from: pos - word.length, to: pos };
}

/** The serialized text and the cursor in it (UTF-16 code units), for `wave/chatInput/completion`. */
export function toServerText(segments: readonly Segment[], pos: number): { text: string; cursor: number } {
  const [before] = split(segments, clamp(segments, pos));
  return { text: serialize(segments), cursor: serialize(before).length };
}
