/** Activation: one server connection, the chat view, the trees, the commands. Nothing else. */

import * as vscode from 'vscode';
import { ChatController } from './host/chatController';
import { CHAT_VIEW_ID, ChatViewProvider } from './host/chatViewProvider';
import { configureModel } from './host/config';
import { DiffDocuments } from './host/diffViews';
import { editorLsp } from './host/editorLsp';
import { McpView } from './host/mcpView';
import { newSubagent } from './host/newSubagent';
import { ServerConnection } from './host/serverConnection';
import { SubagentStatus } from './host/statusBar';
import { TasksView } from './host/tasksView';
import { WorktreesView } from './host/worktreesView';

export function activate(context: vscode.ExtensionContext): void {
  const log = vscode.window.createOutputChannel('Wave Server');
  const server = new ServerConnection(context, log);
  server.editorLspHandler = (params) => editorLsp(params);
  const diffs = new DiffDocuments();
  const chats = new ChatController(server, context, diffs);
  const chatView = new ChatViewProvider(context.extensionUri, chats);
  chats.attachView(chatView);
  let configuring = false;
  const worktrees = new WorktreesView(server, diffs);
  const tasks = new TasksView(chats, server);
  const mcp = new McpView(server);

  context.subscriptions.push(
    log,
    server,
    diffs,
    chats,
    worktrees,
    tasks,
    mcp,
    new SubagentStatus(chats),
    vscode.window.registerWebviewViewProvider(CHAT_VIEW_ID, chatView),
    vscode.window.registerTreeDataProvider('wave.worktrees', worktrees),
    vscode.window.registerTreeDataProvider('wave.tasks', tasks),
    vscode.window.registerTreeDataProvider('wave.mcp', mcp),
    vscode.commands.registerCommand('wave.newChat', () => chats.newChat()),
    vscode.commands.registerCommand('wave.stop', () => chats.stop()),
    vscode.commands.registerCommand('wave.showSessions', () => chats.showSessionsPicker()),
    vscode.commands.registerCommand('wave.restartServer', () => server.restart()),
    vscode.commands.registerCommand('wave.showServerLog', () => log.show(true)),
    vscode.commands.registerCommand('wave.configureModel', async () => {
      configuring = true;
      try {
        if (!(await configureModel(context.secrets))) return;
      } finally {
        configuring = false;
      }
      await server.restart();
      void vscode.window.showInformationMessage('Wave: the model is configured; the server was restarted with it.');
    }),
    vscode.commands.registerCommand('wave.newSubagent', () => newSubagent()),
    // The user trusted the window, or added a folder to a trusted one: trust it on the server.
    vscode.workspace.onDidGrantWorkspaceTrust(() => void server.syncTrust()),
    vscode.workspace.onDidChangeWorkspaceFolders((e) => {
      if (e.added.length && server.state.state === 'running') void server.syncTrust();
    }),
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (configuring) return;
      if (e.affectsConfiguration('wave.server') || e.affectsConfiguration('wave.baseUrl') || e.affectsConfiguration('wave.model')) {
        void vscode.window.showInformationMessage('Wave: restart the server to use the new settings.', 'Restart Server').then((pick) => {
          if (pick) void server.restart();
        });
      }
    }),
  );
  // A turn or a background run may have kept a worktree.
  context.subscriptions.push(
    server.onUpdate((u) => {
      if (u.kind === 'turnEnded' || (u.kind === 'task' && u.task.status !== 'running')) worktrees.refresh();
    }),
  );
  void server.ready();
}

export function deactivate(): void {}
