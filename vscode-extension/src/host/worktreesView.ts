/**
 * The Worktrees view: kept wave worktrees of each workspace folder (`wave/worktrees/list`),
 * their changed files (`wave/worktrees/diff`, each opened as a diff), Open in New Window,
 * Show Changes, and Remove (`wave/worktrees/remove`; `force` only after a second, explicit
 * confirmation that names what would be lost).
 */

import * as path from 'path';
import * as vscode from 'vscode';
import type { WorktreeDiff, WorktreeInfo } from '../shared/wire';
import { errorText } from './chatController';
import { DiffDocuments, openAllDiffs, openFileDiff, worktreeFileDiffs, type WorktreeFileDiff } from './diffViews';
import type { ServerConnection } from './serverConnection';

export class WorktreeNode {
  constructor(
    readonly info: WorktreeInfo,
    readonly folder: string,
  ) {}
  get name(): string {
    return this.info.name ?? path.basename(this.info.path);
  }
}
class FileNode {
  constructor(
    readonly worktree: WorktreeNode,
    readonly diff: WorktreeFileDiff,
  ) {}
}
class MessageNode {
  constructor(readonly text: string) {}
}
type Node = WorktreeNode | FileNode | MessageNode;

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}

export class WorktreesView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<Node | undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  private readonly diffs = new Map<string, WorktreeFileDiff[]>();
  private readonly disposables: vscode.Disposable[] = [];

  constructor(
    private readonly server: ServerConnection,
    private readonly docs: DiffDocuments,
  ) {
    this.disposables.push(
      vscode.commands.registerCommand('wave.worktrees.refresh', () => this.refresh()),
      vscode.commands.registerCommand('wave.worktrees.openInNewWindow', (n: WorktreeNode) => this.openInNewWindow(n)),
      vscode.commands.registerCommand('wave.worktrees.showChanges', (n: WorktreeNode) => this.showChanges(n)),
      vscode.commands.registerCommand('wave.worktrees.remove', (n: WorktreeNode) => this.remove(n)),
      vscode.commands.registerCommand('wave.worktrees.openFileDiff', (n: FileNode) => openFileDiff(n.diff, n.worktree.name)),
    );
  }

  refresh(): void {
    this.diffs.clear();
    this.emitter.fire(undefined);
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node instanceof MessageNode) return new vscode.TreeItem(node.text);
    if (node instanceof FileNode) {
      const item = new vscode.TreeItem(path.basename(node.diff.path));
      item.description = `${path.dirname(node.diff.path) === '.' ? '' : path.dirname(node.diff.path)} ${node.diff.status}`.trim();
      item.resourceUri = node.diff.right;
      item.command = { command: 'wave.worktrees.openFileDiff', title: 'Open Diff', arguments: [node] };
      item.contextValue = 'worktreeFile';
      return item;
    }
    const { info } = node;
    const item = new vscode.TreeItem(node.name, vscode.TreeItemCollapsibleState.Collapsed);
    const changes = [
      info.changedFiles === null ? 'changes unknown' : plural(info.changedFiles, 'changed file'),
      info.commits === null ? '' : plural(info.commits, 'commit'),
    ].filter(Boolean);
    item.description = `${info.branch} · ${changes.join(', ')}`;
    item.tooltip = new vscode.MarkdownString(
      `**${node.name}**  \n${info.path}  \nbranch \`${info.branch}\`${info.owner ? `  \nmade by ${info.owner}` : ''}`,
    );
    item.iconPath = new vscode.ThemeIcon('git-branch');
    item.contextValue = 'worktree';
    item.id = info.path;
    return item;
  }

  async getChildren(node?: Node): Promise<Node[]> {
    if (!node) return this.worktrees();
    if (node instanceof WorktreeNode) {
      try {
        const diffs = await this.fileDiffs(node);
        return diffs.length ? diffs.map((d) => new FileNode(node, d)) : [new MessageNode('No changes')];
      } catch (e) {
        return [new MessageNode(`Changes unavailable: ${errorText(e)}`)];
      }
    }
    return [];
  }

  private async worktrees(): Promise<Node[]> {
    const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
    if (!folders.length) return [new MessageNode('Open a folder to see its worktrees')];
    if ((await this.server.ready()) === undefined) return [new MessageNode('wave-ls is not running')];
    const nodes: WorktreeNode[] = [];
    const seen = new Set<string>();
    for (const cwd of folders) {
      try {
        const { worktrees } = await this.server.request<{ worktrees: WorktreeInfo[] }>('wave/worktrees/list', { cwd });
        for (const w of worktrees) {
          if (seen.has(w.path)) continue;
          seen.add(w.path);
          nodes.push(new WorktreeNode(w, cwd));
        }
      } catch (e) {
        this.server.log.appendLine(`[wave] wave/worktrees/list ${cwd}: ${errorText(e)}`);
      }
    }
    return nodes.length ? nodes : [new MessageNode('No kept worktrees')];
  }

  private async fileDiffs(node: WorktreeNode): Promise<WorktreeFileDiff[]> {
    const cached = this.diffs.get(node.info.path);
    if (cached) return cached;
    const diff = await this.server.request<WorktreeDiff>('wave/worktrees/diff', { path: node.info.path });
    const files = worktreeFileDiffs(this.docs, node.info.path, diff);
    this.diffs.set(node.info.path, files);
    return files;
  }

  private async openInNewWindow(node: WorktreeNode): Promise<void> {
    await vscode.commands.executeCommand('vscode.openFolder', vscode.Uri.file(node.info.path), { forceNewWindow: true });
  }

  private async showChanges(node: WorktreeNode): Promise<void> {
    try {
      this.diffs.delete(node.info.path);
      await openAllDiffs(await this.fileDiffs(node), node.name);
    } catch (e) {
      void vscode.window.showErrorMessage(`Wave: the changes of ${node.name} could not be read: ${errorText(e)}`);
    }
  }

  private async remove(node: WorktreeNode): Promise<void> {
    const first = await vscode.window.showWarningMessage(
      `Remove the worktree ${node.name} and its branch ${node.info.branch}?`,
      { modal: true, detail: node.info.path },
      'Remove',
    );
    if (first !== 'Remove') return;
    try {
      const r = await this.server.request<{ removed: boolean; reason?: string }>('wave/worktrees/remove', { path: node.info.path });
      if (!r.removed) {
        const second = await vscode.window.showWarningMessage(
          `${node.name} was not removed: ${r.reason ?? 'it has changes'}`,
          { modal: true, detail: 'Removing it anyway deletes those changes and commits for good. This cannot be undone.' },
          'Delete Changes and Remove',
        );
        if (second !== 'Delete Changes and Remove') return;
        const forced = await this.server.request<{ removed: boolean; reason?: string }>('wave/worktrees/remove', { path: node.info.path, force: true });
        if (!forced.removed) {
          void vscode.window.showErrorMessage(`Wave: ${node.name} could not be removed: ${forced.reason ?? 'unknown reason'}`);
          return;
        }
      }
      void vscode.window.showInformationMessage(`Removed the worktree ${node.name}.`);
    } catch (e) {
      void vscode.window.showErrorMessage(`Wave: ${node.name} could not be removed: ${errorText(e)}`);
    }
    this.refresh();
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    this.emitter.dispose();
  }
}
