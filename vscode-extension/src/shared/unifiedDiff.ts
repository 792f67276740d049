/**
 * Unified diffs (`git diff` style): split a patch into files, and apply a file's hunks
 * forwards (a permission prompt's `preview`: what the file will become) or backwards (a
 * worktree's changes: what the file was at the base commit).
 */

export interface Hunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  /** Each line with its prefix: ' ', '-', '+', or '\' (no newline at end of file). */
  lines: string[];
}

export interface FilePatch {
  oldPath: string | null;
  newPath: string | null;
  hunks: Hunk[];
  binary: boolean;
}

const HUNK_RE = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

function stripPrefix(path: string): string | null {
  const clean = path.replace(/\t.*$/, '').trim();
  if (clean === '/dev/null') return null;
  return clean.replace(/^[ab]\//, '');
}

/** Every file of a patch (one `diff --git` section, or one `---`/`+++` pair, per file). */
export function parsePatch(patch: string): FilePatch[] {
  const files: FilePatch[] = [];
  let current: FilePatch | null = null;
  let hunk: Hunk | null = null;
  const start = (oldPath: string | null, newPath: string | null): FilePatch => {
    current = { oldPath, newPath, hunks: [], binary: false };
    files.push(current);
    hunk = null;
    return current;
  };
  const lines = patch.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  for (const line of lines) {
    if (line.startsWith('diff --git ')) {
      const m = /^diff --git a\/(.*) b\/(.*)$/.exec(line);
      start(m ? m[1] : null, m ? m[2] : null);
      continue;
    }
    const file = current as FilePatch | null;
    if (line.startsWith('--- ') && (!hunk || !inHunk(hunk))) {
      const oldPath = stripPrefix(line.slice(4));
      if (!file || file.hunks.length) start(oldPath, null);
      else {
        file.oldPath = oldPath;
        hunk = null;
      }
      continue;
    }
    if (line.startsWith('+++ ') && file && !file.hunks.length && (!hunk || !inHunk(hunk))) {
      file.newPath = stripPrefix(line.slice(4));
      continue;
    }
    if (line.startsWith('Binary files ') || line === 'GIT binary patch') {
      if (file) file.binary = true;
      continue;
    }
    const m = HUNK_RE.exec(line);
    if (m && file) {
      hunk = {
        oldStart: Number(m[1]),
        oldLines: m[2] === undefined ? 1 : Number(m[2]),
        newStart: Number(m[3]),
        newLines: m[4] === undefined ? 1 : Number(m[4]),
        lines: [],
      };
      file.hunks.push(hunk);
      continue;
    }
    const h = hunk as Hunk | null;
    if (h && /^[ +\-\\]/.test(line)) h.lines.push(line);
    else if (h && line === '') h.lines.push(' '); // some tools drop the space of empty context lines
  }
  return files;
}

function inHunk(h: Hunk): boolean {
  let old = 0;
  let neu = 0;
  for (const l of h.lines) {
    if (l[0] === ' ') { old++; neu++; }
    else if (l[0] === '-') old++;
    else if (l[0] === '+') neu++;
  }
  return old < h.oldLines || neu < h.newLines;
}

export class PatchMismatch extends Error {}

interface Lines { lines: string[]; eofNewline: boolean }

function toLines(text: string): Lines {
  if (text === '') return { lines: [], eofNewline: false };
  const eofNewline = text.endsWith('\n');
  const lines = (eofNewline ? text.slice(0, -1) : text).split('\n');
  return { lines, eofNewline };
}

function fromLines({ lines, eofNewline }: Lines): string {
  if (!lines.length) return '';
  return lines.join('\n') + (eofNewline ? '\n' : '');
}

/** The hunks with old and new swapped: applying them undoes the patch. */
export function reverseHunks(hunks: Hunk[]): Hunk[] {
  return hunks.map((h) => ({
    oldStart: h.newStart,
    oldLines: h.newLines,
    newStart: h.oldStart,
    newLines: h.oldLines,
    lines: h.lines.map((l) => (l[0] === '+' ? `-${l.slice(1)}` : l[0] === '-' ? `+${l.slice(1)}` : l)),
  }));
}

/** `text` with the hunks applied; PatchMismatch when a context or removed line differs. */
export function applyHunks(text: string, hunks: Hunk[]): string {
  const old = toLines(text);
  const out: string[] = [];
  let at = 0;
  let eofNewline = old.eofNewline;
  for (const h of hunks) {
    const start = h.oldLines === 0 ? h.oldStart : h.oldStart - 1;
    if (start < at || start > old.lines.length) throw new PatchMismatch(`hunk at line ${h.oldStart} is out of place`);
    while (at < start) out.push(old.lines[at++]);
    let lastNewLine = -1; // index in h.lines of the last line the new file has
    for (let i = 0; i < h.lines.length; i++) {
      const l = h.lines[i];
      const body = l.slice(1);
      if (l[0] === ' ' || l[0] === '-') {
        if (old.lines[at] !== body) {
          throw new PatchMismatch(`line ${at + 1} is ${JSON.stringify(old.lines[at] ?? '<end of file>')}, the patch expects ${JSON.stringify(body)}`);
        }
        at++;
        if (l[0] === ' ') {
          out.push(body);
          lastNewLine = i;
        }
      } else if (l[0] === '+') {
        out.push(body);
        lastNewLine = i;
      }
    }
    if (at === old.lines.length) {
      // The hunk reaches the end: the new end has a newline unless a marker follows its last line.
      eofNewline = lastNewLine >= 0 && h.lines[lastNewLine + 1]?.[0] !== '\\';
    }
  }
  while (at < old.lines.length) out.push(old.lines[at++]);
  if (!out.length) return '';
  return fromLines({ lines: out, eofNewline });
}
