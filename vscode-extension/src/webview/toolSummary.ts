/** One-line descriptions of tool calls, for the compact tool blocks. */

export function parseArgs(text: string | Record<string, unknown> | undefined): Record<string, unknown> {
  if (!text) return {};
  if (typeof text !== 'string') return text;
  try {
    const value = JSON.parse(text) as unknown;
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

export function shortPath(p: string, cwd?: string): string {
  if (cwd && p.startsWith(cwd + '/')) return p.slice(cwd.length + 1);
  return p;
}

function oneLine(text: string, max = 90): string {
  const line = text.trim().split('\n', 1)[0] ?? '';
  const more = line.length > max || text.trim().includes('\n');
  return more ? `${line.slice(0, max - 1)}…` : line;
}

/** A tool's name as the chat shows it: `server · tool` for an MCP server's `mcp__server__tool`. */
export function toolLabel(name: string): string {
  const m = /^mcp__(.+?)__(.+)$/.exec(name);
  return m ? `${m[1]} · ${m[2]}` : name;
}

/**
 * What the call works on: `src/app.py` for a Read, `pytest -q` for a Bash. The server
 * computes it from the tool's descriptor (a tool block's `target`); from a server that
 * sends none (an older one) or where there is no block (a permission request), the first
 * text argument stands in. A path under `cwd` is shown relative to it.
 */
export function toolTarget(target: string | undefined, args: Record<string, unknown>, cwd?: string): string {
  if (typeof target === 'string') return oneLine(shortPath(target, cwd));
  const first = Object.values(args).find((v) => typeof v === 'string' && v.trim() !== '');
  return first ? oneLine(shortPath(first as string, cwd), 60) : '';
}

export function formatTokens(n: number | undefined): string {
  if (!n) return '0';
  if (n < 1000) return String(n);
  if (n < 1_000_000) return `${(n / 1000).toFixed(n < 10_000 ? 1 : 0)}k`;
  return `${(n / 1_000_000).toFixed(1)}M`;
}

export function formatDuration(ms: number | undefined): string {
  if (ms === undefined) return '';
  if (ms < 1000) return `${ms} ms`;
  const s = ms / 1000;
  return s < 60 ? `${s.toFixed(1)}s` : `${Math.floor(s / 60)}m ${Math.round(s % 60)}s`;
}

/** The context in use, for the chat header: "ctx 12.3k/32k · 38%". */
export function contextLabel(c: { tokens: number; windowTokens: number }): string {
  return `ctx ${formatTokens(c.tokens)}/${formatTokens(c.windowTokens)} · ${contextPercent(c)}%`;
}

export function contextTitle(c: { tokens: number; windowTokens: number }): string {
  return `Context in use: ${c.tokens.toLocaleString('en-US')} of ${c.windowTokens.toLocaleString('en-US')} tokens (${contextPercent(c)}% of the model's window). /compact summarizes the conversation.`;
}

function contextPercent(c: { tokens: number; windowTokens: number }): number {
  return c.windowTokens > 0 ? Math.round((100 * c.tokens) / c.windowTokens) : 0;
}
