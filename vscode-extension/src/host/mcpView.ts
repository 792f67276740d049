/**
 * The MCP Servers view: each workspace folder's MCP servers (`wave/mcp/list {cwd}`) with
 * their status, and their tools as children. Refreshed on `mcpStatus` updates, when the
 * server (re)starts, when folders change, and with the refresh button. A project server
 * that waits for approval is asked about once per window (a notification: Approve / Deny),
 * and its context menu approves or denies it (`wave/mcp/approve`); Enable and Disable turn
 * any server on and off the same way.
 */

import * as path from 'path';
import * as vscode from 'vscode';
import type { McpServerInfo } from '../shared/wire';
import { errorText } from './chatController';
import {
  ApprovalPrompts,
  approvalQuestion,
  MCP_APPROVE,
  MCP_LIST,
  serverLook,
  toolShortName,
  withStatus,
} from './mcpModel';
import type { ServerConnection } from './serverConnection';

class FolderNode {
  constructor(readonly folder: string) {}
}
export class ServerNode {
  constructor(
    readonly folder: string,
    readonly info: McpServerInfo,
    readonly definition?: string,
  ) {}
}
class ToolNode {
  constructor(
    readonly server: ServerNode,
    readonly fullName: string,
  ) {}
}
class MessageNode {
  constructor(
    readonly text: string,
    readonly icon?: string,
  ) {}
}
type Node = FolderNode | ServerNode | ToolNode | MessageNode;

interface FolderState {
  servers: McpServerInfo[];
  error?: string;
}

const REFRESH_DELAY_MS = 150; // several updates in a row (a server starting) make one list

export class McpView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  private readonly disposables: vscode.Disposable[] = [];
  private readonly folders = new Map<string, FolderState>();
  private readonly prompts = new ApprovalPrompts();
  private loaded = false;
  private timer: NodeJS.Timeout | undefined;
  private loading: Promise<void> | undefined;
  private again = false; // a refresh was asked for while a list was being read

  constructor(private readonly server: ServerConnection) {
    this.disposables.push(
      vscode.commands.registerCommand('wave.mcp.refresh', () => this.refresh()),
      vscode.commands.registerCommand('wave.mcp.approve', (n: ServerNode) => this.answer(n, true)),
      vscode.commands.registerCommand('wave.mcp.deny', (n: ServerNode) => this.answer(n, false)),
      vscode.commands.registerCommand('wave.mcp.enable', (n: ServerNode) => this.answer(n, true)),
      vscode.commands.registerCommand('wave.mcp.disable', (n: ServerNode) => this.answer(n, false)),
      server.onUpdate((u) => {
        if (u.kind !== 'mcpStatus') return;
        // Show the change at once in the folder it belongs to, then read every list again
        // (an update does not say its folder: the session's).
        for (const state of this.folders.values()) {
          if (state.servers.some((s) => s.name === u.name)) state.servers = withStatus(state.servers, u);
        }
        this.emitter.fire(undefined);
        this.refreshSoon();
      }),
      server.onDidStart(() => this.refreshSoon()),
      vscode.workspace.onDidChangeWorkspaceFolders(() => this.refreshSoon()),
      vscode.workspace.onDidGrantWorkspaceTrust(() => this.refreshSoon()),
    );
  }

  /** Reads every folder's servers again and repaints; asks about new ones waiting. */
  async refresh(): Promise<void> {
    if (this.loading) {
      // What is being read may predate the change that asks for this refresh: read again.
      this.again = true;
      return this.loading;
    }
    this.loading = (async () => {
      do {
        this.again = false;
        await this.load();
      } while (this.again);
    })().finally(() => (this.loading = undefined));
    return this.loading;
  }

  private refreshSoon(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.refresh();
    }, REFRESH_DELAY_MS);
  }

  private async load(): Promise<void> {
    const folders = workspaceFolders();
    if ((await this.server.ready()) === undefined) {
      this.folders.clear();
      this.loaded = true;
      this.emitter.fire(undefined);
      return;
    }
    const next = new Map<string, FolderState>();
    await Promise.all(
      folders.map(async (cwd) => {
        try {
          const { servers } = await this.server.request<{ servers: McpServerInfo[] }>(MCP_LIST, { cwd });
          next.set(cwd, { servers });
        } catch (e) {
          this.server.log.appendLine(`[wave] ${MCP_LIST} ${cwd}: ${errorText(e)}`);
          next.set(cwd, { servers: [], error: errorText(e) });
        }
      }),
    );
    this.folders.clear();
    for (const cwd of folders) {
      const state = next.get(cwd);
      if (state) this.folders.set(cwd, state);
    }
    this.loaded = true;
    this.emitter.fire(undefined);
    for (const [cwd, state] of this.folders) {
      for (const server of this.prompts.take(cwd, state.servers)) void this.ask(cwd, server);
    }
  }

  private async ask(folder: string, server: McpServerInfo): Promise<void> {
    const question = approvalQuestion(path.basename(folder), server, server.command);
    const pick = await vscode.window.showInformationMessage(question, 'Approve', 'Deny');
    if (pick === 'Approve' || pick === 'Deny') await this.send(folder, server.name, pick === 'Approve');
  }

  /** A menu item's server; from the command palette (no node), the user picks one. */
  private async answer(node: ServerNode | undefined, approved: boolean): Promise<void> {
    const target = node instanceof ServerNode ? { folder: node.folder, name: node.info.name } : await this.pickServer(approved);
    if (target) await this.send(target.folder, target.name, approved);
  }

  private async pickServer(approved: boolean): Promise<{ folder: string; name: string } | undefined> {
    const items = [...this.folders].flatMap(([folder, state]) =>
      state.servers.map((s) => ({ label: s.name, description: `${serverLook(s).description} · ${path.basename(folder)}`, folder, name: s.name })),
    );
    if (!items.length) return undefined;
    return vscode.window.showQuickPick(items, { placeHolder: approved ? 'Approve (turn on) which MCP server?' : 'Turn off which MCP server?' });
  }

  private async send(cwd: string, name: string, approved: boolean): Promise<void> {
    try {
      const { status } = await this.server.request<{ status: McpServerInfo['status'] }>(MCP_APPROVE, { cwd, name, approved });
      this.server.log.appendLine(`[wave] ${MCP_APPROVE} ${name} approved=${approved} -> ${status}`);
      const state = this.folders.get(cwd);
      const row = state?.servers.find((s) => s.name === name);
      if (state && row) {
        // The answer's status at once (a disabled server has no tools to list).
        const tools = status === 'connected' || status === 'starting' ? row.tools : [];
        state.servers = withStatus(state.servers, { ...row, status, tools, error: status === row.status ? row.error : undefined });
        this.emitter.fire(undefined);
      }
    } catch (e) {
      void vscode.window.showErrorMessage(`Wave: the MCP server ${name} could not be ${approved ? 'approved' : 'turned off'}: ${errorText(e)}`);
    }
    await this.refresh();
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node instanceof MessageNode) {
      const item = new vscode.TreeItem(node.text);
      if (node.icon) item.iconPath = new vscode.ThemeIcon(node.icon);
      return item;
    }
    if (node instanceof FolderNode) {
      const item = new vscode.TreeItem(path.basename(node.folder), vscode.TreeItemCollapsibleState.Expanded);
      item.iconPath = vscode.ThemeIcon.Folder;
      item.tooltip = node.folder;
      item.id = `mcp:${node.folder}`;
      return item;
    }
    if (node instanceof ToolNode) {
      const item = new vscode.TreeItem(toolShortName(node.server.info.name, node.fullName));
      item.iconPath = new vscode.ThemeIcon('tools');
      item.tooltip = node.fullName;
      item.contextValue = 'mcpTool';
      return item;
    }
    const look = serverLook(node.info, node.definition);
    const collapsible = node.info.tools.length ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None;
    const item = new vscode.TreeItem(node.info.name, collapsible);
    item.id = `mcp:${node.folder}:${node.info.name}`;
    item.description = look.description;
    item.iconPath = new vscode.ThemeIcon(look.icon, look.color ? new vscode.ThemeColor(look.color) : undefined);
    item.tooltip = new vscode.MarkdownString(look.tooltip.join('  \n'));
    item.contextValue = look.contextValue;
    return item;
  }

  async getChildren(node?: Node): Promise<Node[]> {
    if (node instanceof ServerNode) return node.info.tools.map((t) => new ToolNode(node, t));
    if (node instanceof FolderNode) return this.serversOf(node.folder);
    if (node) return [];
    const folders = workspaceFolders();
    if (!folders.length) return [new MessageNode('Open a folder to see its MCP servers')];
    if (!this.loaded) await this.refresh();
    if (this.server.state.state !== 'running') return [new MessageNode('wave-ls is not running', 'warning')];
    if (folders.length === 1) return this.serversOf(folders[0]);
    return folders.map((f) => new FolderNode(f));
  }

  private serversOf(folder: string): Node[] {
    const state = this.folders.get(folder);
    if (!state) return [new MessageNode('Not read yet')];
    if (state.error) return [new MessageNode(`Unavailable: ${state.error}`, 'warning')];
    if (!state.servers.length) return [new MessageNode('No MCP servers (.mcp.json, ~/.wave/settings.json)')];
    return state.servers.map((s) => new ServerNode(folder, s, s.command));
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const d of this.disposables) d.dispose();
    this.emitter.dispose();
  }
}

function workspaceFolders(): string[] {
  return (vscode.workspace.workspaceFolders ?? []).filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
}
