/**
 * The one wave-ls process of this window: found, started over stdio with the
 * `experimental.wave` capabilities, restarted after a crash (the user is told), and the
 * source of the server's notifications and requests for the rest of the extension.
 */

import * as fs from 'fs';
import * as vscode from 'vscode';
import {
  CancellationToken,
  CloseAction,
  ErrorAction,
  LanguageClient,
  State,
  TransportKind,
  WorkDoneProgress,
  WorkDoneProgressCreateRequest,
  type LanguageClientOptions,
  type ServerOptions,
  type StaticFeature,
} from 'vscode-languageclient/node';
import type { ServerState } from '../shared/messages';
import type { PermissionAnswer, PermissionRequestParams, ProgressValue, SessionUpdate } from '../shared/wire';
import { AGENT_PROGRESS_PREFIX } from '../shared/wire';
import { initializationOptions, readSettings } from './config';
import { ensureBundledServer, findBundledWheel, readyBundledServer } from './bundledServer';
import { discoverServer } from './serverDiscovery';
import { syncTrust } from './trustSync';

const MAX_CRASHES = 4;
const TRUSTED_FOLDERS_KEY = 'wave.trustedFolders';
const CRASH_WINDOW_MS = 3 * 60 * 1000;

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** Declares what this client can do for the server (docs/protocol.md, "Client capabilities"). */
const waveCapabilities: StaticFeature = {
  fillClientCapabilities(capabilities) {
    capabilities.experimental = {
      ...(capabilities.experimental as object | undefined),
      wave: { permissionRequest: true, editorLsp: true },
    };
  },
  initialize() {},
  getState: () => ({ kind: 'static' }),
  clear() {},
};

/** The workspace folders on disk. */
export function fileFolders(folders: readonly vscode.WorkspaceFolder[] = vscode.workspace.workspaceFolders ?? []): string[] {
  return folders.filter((f) => f.uri.scheme === 'file').map((f) => f.uri.fsPath);
}

export type PermissionHandler = (params: PermissionRequestParams, token: CancellationToken) => Promise<PermissionAnswer>;
export type RequestHandler = (params: unknown, token: CancellationToken) => Promise<unknown>;

export class ServerConnection implements vscode.Disposable {
  private client: LanguageClient | undefined;
  private starting: Promise<LanguageClient | undefined> | undefined;
  private stopping = false;
  /** Why the bundled server could not be set up (shown with "not found"). */
  private bundledError: string | undefined;
  private crashes: number[] = [];
  private generation = 0;
  private stateValue: ServerState = { state: 'starting' };

  private readonly stateEmitter = new vscode.EventEmitter<ServerState>();
  private readonly updateEmitter = new vscode.EventEmitter<SessionUpdate>();
  private readonly progressEmitter = new vscode.EventEmitter<{ token: string; value: ProgressValue }>();
  private readonly startedEmitter = new vscode.EventEmitter<{ restart: boolean }>();
  readonly onDidChangeState = this.stateEmitter.event;
  readonly onUpdate = this.updateEmitter.event;
  readonly onProgress = this.progressEmitter.event;
  /** A (new) server process is ready; after a restart, sessions must be resumed. */
  readonly onDidStart = this.startedEmitter.event;

  permissionHandler: PermissionHandler = async () => ({ allowed: false, message: 'No chat view is open.' });
  editorLspHandler: RequestHandler = async () => null;

  constructor(
    private readonly context: vscode.ExtensionContext,
    readonly log: vscode.OutputChannel,
  ) {}

  get state(): ServerState {
    return this.stateValue;
  }

  private setState(state: ServerState): void {
    this.stateValue = state;
    this.stateEmitter.fire(state);
  }

  /** The running client, starting the server first if needed; undefined if it cannot run. */
  async ready(): Promise<LanguageClient | undefined> {
    // While starting, the client may already run but its folders' trust is not sent yet.
    if (this.client && this.client.state === State.Running && !this.starting) return this.client;
    if (!this.starting) this.starting = this.start(false).finally(() => (this.starting = undefined));
    return this.starting;
  }

  async request<R>(method: string, params: unknown, token?: vscode.CancellationToken): Promise<R> {
    const client = await this.ready();
    if (!client) throw new Error(this.stateValue.state === 'missing' ? this.stateValue.message : 'wave-ls is not running.');
    return token ? client.sendRequest<R>(method, params, token) : client.sendRequest<R>(method, params);
  }

  async restart(): Promise<void> {
    this.crashes = [];
    await this.stop();
    this.starting = this.start(true).finally(() => (this.starting = undefined));
    await this.starting;
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (!client) return;
    this.stopping = true;
    try {
      if (client.state === State.Running) await client.stop(5000);
      else await client.dispose(2000);
    } catch (e) {
      this.log.appendLine(`[wave] stopping the server: ${String(e)}`);
    } finally {
      this.stopping = false;
    }
  }

  private async start(restart: boolean): Promise<LanguageClient | undefined> {
    const settings = readSettings();
    const folders = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
    const found = discoverServer({
      settingPath: settings.serverPath,
      folders,
      workspaceTrusted: vscode.workspace.isTrusted,
      pathEnv: process.env.PATH ?? '',
      platform: process.platform,
      isExecutable,
    });
    let command: string;
    let source: string;
    if (found.found) {
      command = found.command;
      source = found.source;
    } else {
      const bundled = settings.serverPath ? undefined : await this.bundled();
      if (!bundled) {
        const reason = this.bundledError ? `${found.reason} The bundled server could not be set up: ${this.bundledError}` : found.reason;
        this.setState({ state: 'missing', message: reason });
        this.log.appendLine(`[wave] ${reason}`);
        void this.explainMissing(reason);
        return undefined;
      }
      command = bundled;
      source = 'bundled';
    }
    this.setState({ state: 'starting' });
    this.log.appendLine(`[wave] starting ${command} (${source}) ${settings.serverArgs.join(' ')}`);
    const serverOptions: ServerOptions = {
      command,
      args: settings.serverArgs,
      transport: TransportKind.stdio,
      options: { cwd: folders[0], env: process.env },
    };
    const generation = ++this.generation;
    const clientOptions: LanguageClientOptions = {
      // Agent files: the server gives them diagnostics, completion, hover and quick fixes.
      documentSelector: [
        { scheme: 'file', pattern: '**/.wave/agents/**/*.md' },
        { scheme: 'file', pattern: '**/.claude/agents/**/*.md' },
      ],
      initializationOptions: await initializationOptions(this.context.secrets),
      outputChannel: this.log,
      revealOutputChannelOn: 4, // never: crashes are reported by us, with a button to the log
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue, handled: true }),
        closed: () => {
          if (!this.stopping && generation === this.generation) void this.crashed(generation);
          return { action: CloseAction.DoNotRestart, handled: true };
        },
      },
    };
    const client = new LanguageClient('wave-ls', 'Wave', serverOptions, clientOptions);
    client.registerFeature(waveCapabilities);
    this.client = client;
    try {
      await client.start();
    } catch (e) {
      const message = `wave-ls failed to start: ${e instanceof Error ? e.message : String(e)}`;
      this.log.appendLine(`[wave] ${message}`);
      if (this.client === client) this.client = undefined;
      this.setState({ state: 'stopped', message });
      void this.offerRestart(message);
      return undefined;
    }
    this.wire(client);
    await this.syncTrust(client); // before any session: a trusted folder never shows a notice
    this.setState({ state: 'running' });
    this.startedEmitter.fire({ restart });
    return client;
  }

  private wire(client: LanguageClient): void {
    client.onNotification('wave/session/update', (params: SessionUpdate) => this.updateEmitter.fire(params));
    // Our own handler for progress creation: each delegation's `$/progress` feeds the chat's
    // Agent block (not VS Code's generic progress UI, which would show it a second time).
    client.onRequest(WorkDoneProgressCreateRequest.type, ({ token }) => {
      const name = String(token);
      if (!name.startsWith(AGENT_PROGRESS_PREFIX)) return;
      const disposable = client.onProgress(WorkDoneProgress.type, token, (value) => {
        this.progressEmitter.fire({ token: name, value: value as ProgressValue });
        if (value.kind === 'end') disposable.dispose();
      });
    });
    client.onRequest('wave/permission/request', (params: PermissionRequestParams, token: CancellationToken) =>
      this.permissionHandler(params, token),
    );
    client.onRequest('wave/editor/lsp', (params: unknown, token: CancellationToken) => this.editorLspHandler(params, token));
  }

  /** VS Code's workspace trust to the server (`trustSync.ts`); at start and when granted. */
  async syncTrust(client: LanguageClient | undefined = this.client): Promise<void> {
    if (!client) return;
    const vouched = await syncTrust({
      trusted: vscode.workspace.isTrusted,
      folders: fileFolders(),
      trustedBefore: this.context.globalState.get<string[]>(TRUSTED_FOLDERS_KEY, []),
      send: (method, params) => client.sendRequest(method, params),
      log: (line) => this.log.appendLine(line),
    });
    await this.context.globalState.update(TRUSTED_FOLDERS_KEY, vouched);
  }

  private async crashed(generation: number): Promise<void> {
    const now = Date.now();
    this.crashes = [...this.crashes.filter((t) => now - t < CRASH_WINDOW_MS), now];
    this.client = undefined;
    if (this.crashes.length > MAX_CRASHES) {
      const message = `wave-ls stopped unexpectedly ${this.crashes.length} times in 3 minutes; it was not restarted.`;
      this.setState({ state: 'stopped', message });
      this.log.appendLine(`[wave] ${message}`);
      void this.offerRestart(message);
      return;
    }
    const message = 'wave-ls stopped unexpectedly and was restarted. Your chats continue from their saved history.';
    this.setState({ state: 'restarting', message });
    this.log.appendLine(`[wave] the server exited (generation ${generation}); restarting`);
    void vscode.window.showWarningMessage(message, 'Show Server Log').then((pick) => {
      if (pick) this.log.show(true);
    });
    if (!this.starting) this.starting = this.start(true).finally(() => (this.starting = undefined));
    await this.starting;
  }

  private async offerRestart(message: string): Promise<void> {
    const pick = await vscode.window.showErrorMessage(message, 'Restart Server', 'Show Server Log');
    if (pick === 'Restart Server') await this.restart();
    if (pick === 'Show Server Log') this.log.show(true);
  }

  /** The bundled wave-ls, set up on first use (a progress notification); undefined when the
   * .vsix carries no wheel or the set-up failed (`bundledError` says why). */
  private async bundled(): Promise<string | undefined> {
    this.bundledError = undefined;
    const wheel = findBundledWheel(this.context.extensionPath);
    if (!wheel) return undefined;
    const storage = this.context.globalStorageUri.fsPath;
    const log = (line: string) => this.log.appendLine(`[wave setup] ${line}`);
    try {
      const ready = readyBundledServer(storage, wheel);
      if (ready) return ready;
    } catch (e) {
      log(`the bundled wheel cannot be read: ${String(e)}`);
    }
    this.log.appendLine(`[wave] no wave-ls was found: setting up the bundled wave-ls ${wheel.version} in ${storage}`);
    return vscode.window.withProgress(
      { location: vscode.ProgressLocation.Notification, title: `Wave: setting up wave-ls ${wheel.version}`, cancellable: false },
      async (progress) => {
        try {
          return await ensureBundledServer(storage, wheel, (step) => progress.report({ message: step }), log);
        } catch (e) {
          this.bundledError = e instanceof Error ? e.message : String(e);
          log(this.bundledError);
          return undefined;
        }
      },
    );
  }

  private async explainMissing(reason: string): Promise<void> {
    const pick = await vscode.window.showErrorMessage(
      `${reason} Install it from a clone with "python3 -m pip install -e /path/to/wave-ls" (Python 3.11 or newer), or set wave.server.path.`,
      'How to Install',
      'Open Settings',
    );
    if (pick === 'How to Install') {
      const readme = vscode.Uri.joinPath(this.context.extensionUri, 'README.md');
      await vscode.commands.executeCommand('markdown.showPreview', readme.with({ fragment: 'install-the-server' }));
    } else if (pick === 'Open Settings') {
      await vscode.commands.executeCommand('workbench.action.openSettings', 'wave.server.path');
    }
  }

  dispose(): void {
    void this.stop();
    this.stateEmitter.dispose();
    this.updateEmitter.dispose();
    this.progressEmitter.dispose();
    this.startedEmitter.dispose();
  }
}
