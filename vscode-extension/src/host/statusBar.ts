/** A status-bar item with the number of subagents running now (hidden when none). */

import * as vscode from 'vscode';
import type { ChatController } from './chatController';

export class SubagentStatus implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem('wave.subagents', vscode.StatusBarAlignment.Left, 50);
  private readonly subscription: vscode.Disposable;
  private shown = -1;

  constructor(private readonly controller: ChatController) {
    this.item.name = 'Wave Subagents';
    this.item.command = 'wave.chat.focus';
    this.subscription = controller.onDidChange(() => this.update());
    this.update();
  }

  private update(): void {
    const n = this.controller.runningSubagents();
    if (n === this.shown) return;
    this.shown = n;
    if (!n) {
      this.item.hide();
      return;
    }
    this.item.text = `$(hubot) ${n} subagent${n === 1 ? '' : 's'}`;
    this.item.tooltip = `Wave: ${n} subagent${n === 1 ? '' : 's'} running. Click to show the chat.`;
    this.item.show();
  }

  dispose(): void {
    this.subscription.dispose();
    this.item.dispose();
  }
}
