/**
 * The Background Tasks view: every open chat's background subagents and commands
 * (`wave/tasks/list`, kept current by `task` updates), with Stop on the running ones.
 */

import * as vscode from 'vscode';
import type { TaskInfo } from '../shared/wire';
import { errorText, type ChatController } from './chatController';
import type { ServerConnection } from './serverConnection';

const ICONS: Record<TaskInfo['status'], string> = {
  running: 'loading~spin',
  completed: 'pass',
  failed: 'error',
  stopped: 'circle-slash',
};

function elapsed(task: TaskInfo): string {
  const ms = task.durationMs ?? Date.now() - task.startedAt;
  return ms < 60_000 ? `${Math.round(ms / 1000)}s` : `${Math.floor(ms / 60_000)}m ${Math.round((ms % 60_000) / 1000)}s`;
}

export class TasksView implements vscode.TreeDataProvider<TaskInfo>, vscode.Disposable {
  private readonly emitter = new vscode.EventEmitter<undefined>();
  readonly onDidChangeTreeData = this.emitter.event;
  private readonly disposables: vscode.Disposable[] = [];
  private last = '';

  constructor(
    private readonly controller: ChatController,
    private readonly server: ServerConnection,
  ) {
    this.disposables.push(
      controller.onDidChange(() => this.changedMaybe()),
      vscode.commands.registerCommand('wave.tasks.refresh', () => this.refresh()),
      vscode.commands.registerCommand('wave.tasks.stop', (task: TaskInfo) => this.stop(task)),
    );
  }

  private tasks(): TaskInfo[] {
    return this.controller.openChats().flatMap((c) => c.state.tasks);
  }

  /** Repaint only when a task changed (chats change many times a second while streaming). */
  private changedMaybe(): void {
    const key = JSON.stringify(this.tasks().map((t) => [t.taskId, t.status, t.progress]));
    if (key !== this.last) {
      this.last = key;
      this.emitter.fire(undefined);
    }
  }

  private async refresh(): Promise<void> {
    await this.controller.refreshTasks();
    this.emitter.fire(undefined);
  }

  getTreeItem(task: TaskInfo): vscode.TreeItem {
    const title = task.kind === 'subagent' ? `${task.subagentType}: ${task.description}` : task.description || task.command || task.taskId;
    const item = new vscode.TreeItem(title);
    item.id = task.taskId;
    item.description = task.status === 'running' ? `${task.progress || 'running'} · ${elapsed(task)}` : `${task.status} · ${elapsed(task)}`;
    item.tooltip = new vscode.MarkdownString(
      [`**${title}**`, `\`${task.taskId}\` · ${task.status}`, task.command ? `\`${task.command}\`` : '', task.summary ?? '', task.worktreeSummary ?? '']
        .filter(Boolean)
        .join('  \n'),
    );
    item.iconPath = new vscode.ThemeIcon(task.kind === 'subagent' && task.status === 'running' ? 'hubot' : ICONS[task.status]);
    item.contextValue = task.status === 'running' ? 'runningTask' : 'task';
    return item;
  }

  getChildren(task?: TaskInfo): TaskInfo[] {
    if (task) return [];
    return this.tasks().sort((a, b) => Number(b.status === 'running') - Number(a.status === 'running') || b.startedAt - a.startedAt);
  }

  private async stop(task: TaskInfo): Promise<void> {
    try {
      const { stopped } = await this.server.request<{ stopped: boolean }>('wave/tasks/stop', { taskId: task.taskId });
      if (!stopped) void vscode.window.showInformationMessage(`Task ${task.taskId} had already ended.`);
    } catch (e) {
      void vscode.window.showErrorMessage(`Wave: task ${task.taskId} could not be stopped: ${errorText(e)}`);
    }
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
    this.emitter.dispose();
  }
}
