/**
 * The chat `WebviewView`: the bundled webview script and stylesheet under a strict
 * Content-Security-Policy (a fresh nonce per page, nothing remote, no inline code), and the
 * message pipe to the ChatController.
 */

import * as crypto from 'crypto';
import * as vscode from 'vscode';
import type { HostMessage, ViewMessage } from '../shared/messages';
import type { ChatController, ChatView } from './chatController';

export const CHAT_VIEW_ID = 'wave.chat';

export function nonce(): string {
  return crypto.randomBytes(18).toString('base64').replace(/[^A-Za-z0-9]/g, '');
}

export class ChatViewProvider implements vscode.WebviewViewProvider, ChatView {
  private view: vscode.WebviewView | undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly controller: ChatController,
  ) {}

  get visible(): boolean {
    return Boolean(this.view?.visible);
  }

  reveal(): void {
    if (this.view) this.view.show(true);
    else void vscode.commands.executeCommand(`${CHAT_VIEW_ID}.focus`);
  }

  post(message: HostMessage): void {
    // A view being torn down refuses messages; it gets a snapshot when it comes back.
    this.view?.webview.postMessage(message).then(undefined, () => undefined);
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    this.view = view;
    const dist = vscode.Uri.joinPath(this.extensionUri, 'dist');
    view.webview.options = { enableScripts: true, localResourceRoots: [dist] };
    view.webview.html = this.html(view.webview, dist);
    view.webview.onDidReceiveMessage((message: ViewMessage) => void this.controller.handle(message));
    view.onDidDispose(() => {
      if (this.view === view) this.view = undefined;
    });
  }

  private html(webview: vscode.Webview, dist: vscode.Uri): string {
    const n = nonce();
    const script = webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.js'));
    const style = webview.asWebviewUri(vscode.Uri.joinPath(dist, 'webview.css'));
    const csp = [
      "default-src 'none'",
      `style-src ${webview.cspSource}`,
      `script-src 'nonce-${n}'`,
      `img-src ${webview.cspSource} data:`,
      `font-src ${webview.cspSource}`,
    ].join('; ');
    return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link rel="stylesheet" href="${style}">
<title>Wave</title>
</head>
<body>
<div id="root"></div>
<script nonce="${n}" src="${script}"></script>
</body>
</html>`;
  }
}
