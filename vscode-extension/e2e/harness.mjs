// The end-to-end world: a real wave-ls (from a Python venv), `wave-ls fake-model` with a
// script, a throwaway git project, code-server with the built .vsix installed, and headless
// Chromium (the system's, driven by playwright-core). Everything listens on loopback only.
import { execFileSync, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { fakeModelScript, PROJECT_FILES } from './script.mjs';

const here = dirname(fileURLToPath(import.meta.url));
export const extensionDir = resolve(here, '..');
export const repoRoot = resolve(extensionDir, '..');
export const outputDir = resolve(process.env.WAVE_E2E_OUTPUT ?? join(here, 'output'));

const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
  '--disable-dev-shm-usage',
];

export function log(message) {
  process.stderr.write(`[e2e ${new Date().toISOString().slice(11, 23)}] ${message}\n`);
}

function freePort() {
  return new Promise((ok, fail) => {
    const srv = createServer();
    srv.on('error', fail);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => ok(port));
    });
  });
}

/** `wave-ls` from WAVE_LS, else a venv made here with `pip install -e <repo root>`. */
export function waveLsBinary() {
  if (process.env.WAVE_LS) return process.env.WAVE_LS;
  const venv = join(here, '.venv');
  const bin = join(venv, 'bin', 'wave-ls');
  if (!existsSync(bin)) {
    log(`creating ${venv} (python3 -m venv + pip install -e ${repoRoot})`);
    execFileSync('python3', ['-m', 'venv', venv], { stdio: 'inherit' });
    execFileSync(join(venv, 'bin', 'pip'), ['install', '-q', '-e', repoRoot], { stdio: 'inherit' });
  }
  return bin;
}

export function vsixPath() {
  if (process.env.WAVE_VSIX) return resolve(process.env.WAVE_VSIX);
  const dist = join(extensionDir, 'dist');
  const found = existsSync(dist) ? readdirSync(dist).filter((f) => f.endsWith('.vsix')) : [];
  if (!found.length) throw new Error(`no .vsix in ${dist}: run "npm run package" in vscode-extension first`);
  return join(dist, found.sort().pop());
}

function codeServerEntry() {
  const entry = join(here, 'node_modules', 'code-server', 'out', 'node', 'entry.js');
  if (!existsSync(entry)) throw new Error(`code-server is not installed in ${here}/node_modules (see scripts/ci.sh)`);
  if (!existsSync(join(here, 'node_modules', 'code-server', 'lib', 'vscode', 'node_modules'))) {
    throw new Error('code-server is installed without its VS Code dependencies (its postinstall did not run: see scripts/ci.sh)');
  }
  return entry;
}

function git(cwd, ...args) {
  execFileSync('git', ['-c', 'user.name=wave e2e', '-c', 'user.email=e2e@wave.invalid', ...args], { cwd, stdio: 'pipe' });
}

/** A process whose output goes to a log file; resolves when `ready` matches a line of stdout. */
function startProcess(name, command, args, options, ready) {
  const logFile = join(outputDir, `${name}.log`);
  const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
  const chunks = [];
  const write = (data) => chunks.push(data);
  child.stderr.on('data', write);
  return new Promise((ok, fail) => {
    let out = '';
    const timer = setTimeout(() => fail(new Error(`${name} did not start in 60 s; see ${logFile}`)), 60_000);
    child.stdout.on('data', (data) => {
      write(data);
      out += data.toString();
      const m = ready.exec(out);
      if (m) {
        clearTimeout(timer);
        ok({ child, match: m, logFile, flush: () => writeFileSync(logFile, Buffer.concat(chunks)) });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      writeFileSync(logFile, Buffer.concat(chunks));
      fail(new Error(`${name} exited with ${code} before it was ready; see ${logFile}`));
    });
  });
}

export class World {
  /**
   * `name`: a prefix for this world's logs (a second world keeps the first one's output);
   * `files`: the project's files (committed); `workspaceTrust`: VS Code's workspace trust
   * is on, so the folder opens in Restricted Mode (without a startup prompt).
   */
  constructor({ name = '', files = PROJECT_FILES, workspaceTrust = false, bundledServer = false } = {}) {
    this.name = name;
    this.files = files;
    this.workspaceTrust = workspaceTrust;
    // No wave.server.path and no wave-ls on PATH: the extension sets up the wheel it carries.
    this.bundledServer = bundledServer;
  }

  async start() {
    if (!this.name) rmSync(outputDir, { recursive: true, force: true, maxRetries: 3 });
    mkdirSync(join(outputDir, 'screenshots'), { recursive: true });
    const prefix = this.name ? `${this.name}-` : '';
    this.waveLs = process.env.WAVE_LS ? process.env.WAVE_LS : waveLsBinary();
    this.vsix = vsixPath();
    this.tmp = mkdtempSync(join(tmpdir(), 'wave-e2e-'));
    this.home = join(this.tmp, 'home');
    this.project = join(this.tmp, 'calc-project');
    mkdirSync(this.home, { recursive: true });
    for (const [relative, text] of Object.entries(this.files)) {
      const file = join(this.project, relative);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, text);
    }
    git(this.project, 'init', '-q', '-b', 'main');
    git(this.project, 'add', '-A');
    git(this.project, 'commit', '-qm', 'start');

    const scriptFile = join(this.tmp, 'script.json');
    writeFileSync(scriptFile, JSON.stringify(fakeModelScript(), null, 1));
    const env = { ...process.env, HOME: this.home, OPENAI_API_KEY: 'e2e-key', WAVE_LOG_LEVEL: 'INFO' };
    delete env.OPENAI_BASE_URL;
    delete env.WAVE_MODEL;
    log('starting wave-ls fake-model');
    this.model = await startProcess(`${prefix}fake-model`, this.waveLs, ['fake-model', '--port', '0', '--script', scriptFile], { env }, /listening on (\S+)/);
    this.modelUrl = this.model.match[1];

    if (this.bundledServer) {
      env.PATH = (env.PATH ?? '').split(':').filter((dir) => dir && !existsSync(join(dir, 'wave-ls'))).join(':');
    }
    const userData = join(this.tmp, 'user-data');
    this.userData = userData;
    const extensions = join(this.tmp, 'extensions');
    mkdirSync(join(userData, 'User'), { recursive: true });
    writeFileSync(
      join(userData, 'User', 'settings.json'),
      JSON.stringify(
        {
          ...(this.bundledServer ? {} : { 'wave.server.path': this.waveLs }),
          'wave.baseUrl': this.modelUrl,
          'wave.model': 'fake-model',
          'workbench.startupEditor': 'none',
          'workbench.tips.enabled': false,
          'workbench.colorTheme': 'Default Dark Modern',
          ...(this.workspaceTrust
            ? { 'security.workspace.trust.enabled': true, 'security.workspace.trust.startupPrompt': 'never' }
            : { 'security.workspace.trust.enabled': false }),
          'extensions.autoCheckUpdates': false,
          'extensions.autoUpdate': false,
          'update.mode': 'none',
          'telemetry.telemetryLevel': 'off',
          'git.enabled': false,
          'editor.minimap.enabled': false,
          'window.commandCenter': false,
          'chat.commandCenter.enabled': false,
          'workbench.secondarySideBar.defaultVisibility': 'hidden',
        },
        null,
        1,
      ),
    );
    const entry = codeServerEntry();
    log(`installing ${this.vsix}`);
    execFileSync(process.execPath, [entry, '--user-data-dir', userData, '--extensions-dir', extensions, '--install-extension', this.vsix], {
      env,
      stdio: 'pipe',
    });
    const port = await freePort();
    log(`starting code-server on 127.0.0.1:${port}`);
    this.codeServer = await startProcess(
      `${prefix}code-server`,
      process.execPath,
      [
        entry,
        '--auth', 'none',
        '--bind-addr', `127.0.0.1:${port}`,
        '--disable-telemetry',
        '--disable-update-check',
        ...(this.workspaceTrust ? [] : ['--disable-workspace-trust']),
        '--disable-getting-started-override',
        '--user-data-dir', userData,
        '--extensions-dir', extensions,
        this.project,
      ],
      { env, detached: true },
      /HTTP server listening on/,
    );
    this.url = `http://127.0.0.1:${port}/?folder=${encodeURIComponent(this.project)}`;
    log('launching chromium');
    this.browser = await chromium.launch({ executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium', headless: true, args: CHROMIUM_FLAGS });
    this.context = await this.browser.newContext({ viewport: { width: 1440, height: 900 }, deviceScaleFactor: 1 });
    await this.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: `http://127.0.0.1:${port}` });
    this.page = await this.context.newPage();
    this.page.setDefaultTimeout(30_000);
    await this.page.goto(this.url);
    await this.page.locator('.monaco-workbench').waitFor({ timeout: 90_000 });
    await this.page.locator('.activitybar').waitFor();
    return this;
  }

  async modelRequests() {
    const r = await fetch(this.modelUrl.replace(/\/v1$/, '') + '/_requests');
    return r.json();
  }

  /** The Wave chat webview's frame (its `.app .input` is there), waited for. */
  async chatFrame() {
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      for (const frame of this.page.frames()) {
        try {
          if (await frame.$('.app .input')) return frame;
        } catch {
          // a frame that went away
        }
      }
      await this.page.waitForTimeout(250);
    }
    throw new Error('the Wave chat view did not appear');
  }

  /** Opens the Wave view, widens the side bar by 200 px, and gives the chat's frame. */
  async openChat() {
    await this.page.locator('.activitybar [aria-label^="Wave"]').first().click();
    const frame = await this.chatFrame();
    const box = await this.page.locator('.part.sidebar').boundingBox();
    await this.page.mouse.move(box.x + box.width + 1, box.y + 300);
    await this.page.mouse.down();
    await this.page.mouse.move(box.x + box.width + 200, box.y + 300, { steps: 8 });
    await this.page.mouse.up();
    return frame;
  }

  async screenshot(name) {
    const file = join(outputDir, 'screenshots', `${name}.png`);
    await this.page.mouse.move(900, 880); // no hover tooltips in the picture
    await this.page.waitForTimeout(150);
    await this.page.screenshot({ path: file });
    log(`screenshot ${file}`);
    return file;
  }

  /** Pids of the wave-ls language servers code-server's extension host started. */
  waveLsPids() {
    const out = execFileSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' });
    const rows = out.trim().split('\n').map((l) => {
      const m = /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(l);
      return { pid: Number(m[1]), ppid: Number(m[2]), args: m[3] };
    });
    const ours = new Set([this.codeServer.child.pid]);
    let grew = true;
    while (grew) {
      grew = false;
      for (const r of rows) if (ours.has(r.ppid) && !ours.has(r.pid)) { ours.add(r.pid); grew = true; }
    }
    return rows.filter((r) => ours.has(r.pid) && r.args.includes('wave-ls') && r.args.includes('--stdio')).map((r) => r.pid);
  }

  async stop() {
    await this.browser?.close().catch(() => {});
    for (const p of [this.codeServer, this.model]) {
      if (!p) continue;
      p.flush();
      try {
        process.kill(p === this.codeServer ? -p.child.pid : p.child.pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
    await new Promise((r) => setTimeout(r, 500));
    for (const p of [this.codeServer, this.model]) {
      try {
        if (p) process.kill(p === this.codeServer ? -p.child.pid : p.child.pid, 'SIGKILL');
      } catch {
        // ended
      }
    }
    // VS Code's own logs, the extension's "Wave" output channel (the server's stderr) among
    // them: what a failed run needs to be understood once the temporary folder is gone.
    const logs = this.tmp && join(this.tmp, 'user-data', 'logs');
    const prefix = this.name ? `${this.name}-` : '';
    if (logs && existsSync(logs)) cpSync(logs, join(outputDir, `${prefix}vscode-logs`), { recursive: true });
    const sessions = this.home && join(this.home, '.wave', 'sessions'); // the saved transcripts
    if (sessions && existsSync(sessions)) cpSync(sessions, join(outputDir, `${prefix}sessions`), { recursive: true });
    if (this.tmp && !process.env.WAVE_E2E_KEEP) rmSync(this.tmp, { recursive: true, force: true, maxRetries: 3 });
  }
}
