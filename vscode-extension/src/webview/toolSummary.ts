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

function str(v: unknown): string {
  return typeof v === 'string' ? v : v === undefined || v === null ? '' : JSON.stringify(v);
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

/** What the call works on: the file, the command, the pattern, ... */
export function toolTarget(name: string, args: Record<string, unknown>, cwd?: string): string {
  switch (name) {
    case 'Read':
    case 'Write':
    case 'Edit':
      return shortPath(str(args.file_path), cwd);
    case 'Bash':
      return oneLine(str(args.command));
    case 'Grep':
      return `${str(args.pattern)}${args.path ? ` in ${shortPath(str(args.path), cwd)}` : ''}`;
    case 'Glob':
      return str(args.pattern);
    case 'WebFetch':
      return str(args.url);
    case 'WebSearch':
      return str(args.query);
    case 'Agent':
      return str(args.description);
    case 'Skill':
      return str(args.skill ?? args.name);
    case 'TaskOutput':
    case 'TaskStop':
    case 'TaskGet':
      return str(args.task_id ?? args.taskId ?? args.shell_id);
    default: {
      const first = Object.values(args).find((v) => typeof v === 'string');
      return first ? oneLine(first as string, 60) : '';
    }
  }
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
