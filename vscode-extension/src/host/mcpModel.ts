/**
 * The MCP servers of the workspace folders as the MCP Servers view shows them: each
 * server's icon, description, tooltip and menu (from `wave/mcp/list` items), its tools'
 * short names, and which project servers to ask about (once per server per window).
 *
 * No `vscode` import here (the view passes what it has), so it is unit tested.
 */

import type { McpServerInfo } from '../shared/wire';

export const MCP_LIST = 'wave/mcp/list';
export const MCP_APPROVE = 'wave/mcp/approve';

/** What the tree shows for one server. */
export interface ServerLook {
  /** A codicon id (`loading~spin`, `pass`, ...). */
  icon: string;
  /** A theme color id for the icon, if any. */
  color?: string;
  description: string;
  /** `viewItem` of the context menu: which of Approve / Deny / Enable / Disable apply. */
  contextValue: 'mcpServer.needsApproval' | 'mcpServer.disabled' | 'mcpServer.heldBack' | 'mcpServer.on' | 'mcpServer.failed';
  /** Markdown lines. */
  tooltip: string[];
}

const SCOPES: Record<McpServerInfo['scope'], string> = {
  project: "the project's .mcp.json",
  user: 'your ~/.wave/settings.json',
  local: '.wave/settings.local.json',
  acp: 'the ACP client',
  agent: "a subagent's own",
};

/**
 * Text from a repository (`.mcp.json` names and commands) or a server (its errors) as plain
 * text in Markdown (the tooltip): every ASCII punctuation mark escaped, so it makes no link,
 * image or emphasis.
 */
export function markdownText(text: string): string {
  return text.replace(/[!-/:-@[-`{-~]/g, '\\$&');
}

/**
 * The same for a notification, whose message VS Code scans for `[text](link)`, `command:`
 * links included: a zero-width space between `]` and `(` makes sure nothing becomes one.
 */
export function noLinks(text: string): string {
  return text.replace(/\]\s*\(/g, (m) => `${m.slice(0, 1)}\u200b${m.slice(1)}`);
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

function firstLine(text: string, max = 80): string {
  const line = text.trim().split('\n', 1)[0] ?? '';
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/** Held back because the folder is not trusted (the server's gate says so). */
export function heldBack(server: McpServerInfo): boolean {
  return server.status === 'disabled' && /^held back/i.test(server.error ?? '');
}

/** `echo` for `mcp__srv__echo` (the name as the server gave it, as far as it can be read). */
export function toolShortName(server: string, fullName: string): string {
  const prefix = `mcp__${server.replace(/[^A-Za-z0-9_-]/g, '_')}__`;
  return fullName.startsWith(prefix) ? fullName.slice(prefix.length) : fullName;
}

export function serverLook(server: McpServerInfo, definition?: string): ServerLook {
  const tools = server.tools ?? [];
  const error = server.error ?? '';
  let look: Omit<ServerLook, 'tooltip'>;
  switch (server.status) {
    case 'starting':
      look = { icon: 'loading~spin', description: 'starting…', contextValue: 'mcpServer.on' };
      break;
    case 'connected':
      look = { icon: 'pass', color: 'testing.iconPassed', description: `connected · ${plural(tools.length, 'tool')}`, contextValue: 'mcpServer.on' };
      break;
    case 'failed':
      look = { icon: 'error', color: 'errorForeground', description: `failed: ${firstLine(error) || 'no reason given'}`, contextValue: 'mcpServer.failed' };
      break;
    case 'needs-approval':
      look = { icon: 'shield', color: 'editorWarning.foreground', description: 'needs approval', contextValue: 'mcpServer.needsApproval' };
      break;
    case 'disabled':
      look = heldBack(server)
        ? { icon: 'workspace-untrusted', description: 'held back: the workspace is not trusted', contextValue: 'mcpServer.heldBack' }
        : { icon: 'circle-slash', description: 'disabled', contextValue: 'mcpServer.disabled' };
      break;
    default: // stopped: allowed, and nothing runs it now
      look = { icon: 'circle-outline', description: 'not running · starts with a chat', contextValue: 'mcpServer.on' };
  }
  const tooltip = [
    `**${markdownText(server.name)}** · ${server.transport} · from ${SCOPES[server.scope] ?? markdownText(String(server.scope))}`,
    definition ? `Runs: ${markdownText(definition)}` : '',
    `Status: ${server.status}${tools.length ? ` · ${plural(tools.length, 'tool')}` : ''}`,
    error ? markdownText(error) : '',
    look.contextValue === 'mcpServer.needsApproval' ? 'Right-click to approve or deny it.' : '',
  ].filter(Boolean);
  return { ...look, tooltip };
}

/** Merges one `mcpStatus` update into a folder's list (a new name is added at the end). */
export function withStatus(servers: readonly McpServerInfo[], update: McpServerInfo): McpServerInfo[] {
  const row: McpServerInfo = {
    name: update.name,
    scope: update.scope,
    transport: update.transport,
    status: update.status,
    tools: update.tools ?? [],
    ...(update.error ? { error: update.error } : {}),
  };
  const at = servers.findIndex((s) => s.name === row.name);
  if (at < 0) return [...servers, row];
  return servers.map((s, i) => (i === at ? row : s));
}

/**
 * The project servers waiting for approval that the window has not asked about yet (asked
 * once per folder and server per window, whatever the answer, so a dismissed prompt does not
 * come back; the tree's context menu is always there).
 */
export class ApprovalPrompts {
  private readonly asked = new Set<string>();

  take(folder: string, servers: readonly McpServerInfo[]): McpServerInfo[] {
    const out: McpServerInfo[] = [];
    for (const server of servers) {
      if (server.status !== 'needs-approval') continue;
      const key = `${folder}\0${server.name}`;
      if (this.asked.has(key)) continue;
      this.asked.add(key);
      out.push(server);
    }
    return out;
  }
}

/** The prompt's text for a project server that waits for approval. */
export function approvalQuestion(folderName: string, server: McpServerInfo, definition?: string): string {
  const what = definition ? `: ${noLinks(firstLine(definition, 160))}` : ` (${server.transport})`;
  return `Wave: ${noLinks(folderName)}'s .mcp.json defines the MCP server "${noLinks(firstLine(server.name, 80))}"${what}. Start it? It runs as you, outside the sandbox.`;
}
