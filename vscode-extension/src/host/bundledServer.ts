/**
 * The server the .vsix brings: `server/wave_ls-<version>-py3-none-any.whl` in the extension,
 * installed on first use into a venv of its own under the extension's global storage
 * (`python3 -m venv`, then pip). Later starts reuse it; a different bundled wheel (an
 * upgraded extension) is installed over it. Used only when nothing the user chose is found
 * (`wave.server.path`, a trusted workspace's `.venv`, `wave-ls` on `PATH`).
 *
 * The choices (which wheel, whether to install) are pure functions, tested without VS Code;
 * `ensureBundledServer` runs the processes.
 */

import { execFile } from 'child_process';
import { createHash } from 'crypto';
import * as fs from 'fs';
import * as path from 'path';

export const WHEEL_DIR = 'server';
const MARKER = 'wave-bundled.json';

export interface BundledWheel {
  file: string;
  version: string;
}

/** What an environment was made from (its marker file). */
export interface EnvMarker {
  wheel: string;
  sha256: string;
}

/** `wave_ls-0.1.0-py3-none-any.whl` -> `0.1.0`; not a wave-ls wheel -> null. */
export function wheelVersion(name: string): string | null {
  const m = /^wave_ls-([^-]+)-[^-]+-[^-]+-[^-]+\.whl$/.exec(name);
  return m ? m[1] : null;
}

function compareVersions(a: string, b: string): number {
  const pa = a.split(/[.+-]/);
  const pb = b.split(/[.+-]/);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const x = pa[i] ?? '0';
    const y = pb[i] ?? '0';
    const nx = Number(x);
    const ny = Number(y);
    const d = Number.isFinite(nx) && Number.isFinite(ny) ? nx - ny : x.localeCompare(y);
    if (d) return d;
  }
  return 0;
}

/** The newest wave-ls wheel among these file names (the .vsix carries one). */
export function pickWheel(names: string[]): { name: string; version: string } | null {
  let best: { name: string; version: string } | null = null;
  for (const name of names) {
    const version = wheelVersion(name);
    if (version && (!best || compareVersions(version, best.version) > 0)) best = { name, version };
  }
  return best;
}

/** Install (or reinstall) unless the environment was made from this very wheel and works. */
export function needsInstall(marker: EnvMarker | null, wheel: EnvMarker, executableOk: boolean): boolean {
  return !executableOk || !marker || marker.wheel !== wheel.wheel || marker.sha256 !== wheel.sha256;
}

export function envPaths(storageDir: string, platform: NodeJS.Platform = process.platform) {
  const env = path.join(storageDir, 'server-env');
  const bin = platform === 'win32' ? path.join(env, 'Scripts') : path.join(env, 'bin');
  return {
    env,
    marker: path.join(env, MARKER),
    python: path.join(bin, platform === 'win32' ? 'python.exe' : 'python'),
    waveLs: path.join(bin, platform === 'win32' ? 'wave-ls.exe' : 'wave-ls'),
  };
}

/** The wheel in the extension's `server/` folder, if the build put one there. */
export function findBundledWheel(extensionPath: string): BundledWheel | null {
  const dir = path.join(extensionPath, WHEEL_DIR);
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return null;
  }
  const best = pickWheel(names);
  return best ? { file: path.join(dir, best.name), version: best.version } : null;
}

function readMarker(file: string): EnvMarker | null {
  try {
    const data = JSON.parse(fs.readFileSync(file, 'utf8')) as Partial<EnvMarker>;
    return typeof data.wheel === 'string' && typeof data.sha256 === 'string' ? { wheel: data.wheel, sha256: data.sha256 } : null;
  } catch {
    return null;
  }
}

function run(command: string, args: string[], log: (line: string) => void): Promise<void> {
  log(`$ ${command} ${args.join(' ')}`);
  return new Promise((resolve, reject) => {
    execFile(command, args, { maxBuffer: 16 * 1024 * 1024, env: { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: '1' } }, (error, stdout, stderr) => {
      for (const line of `${stdout}${stderr}`.split('\n')) if (line.trim()) log(line);
      if (!error) return resolve();
      const last = `${stderr}`.trim().split('\n').slice(-3).join(' ');
      reject(new Error(`${path.basename(command)} ${args[0] === '-m' ? args.slice(0, 2).join(' ') : ''} failed${last ? `: ${last}` : ''}`.replace(/\s+/g, ' ')));
    });
  });
}

async function createVenv(env: string, log: (line: string) => void): Promise<void> {
  const candidates = process.platform === 'win32' ? ['py', 'python'] : ['python3', 'python'];
  let lastError: unknown;
  for (const python of candidates) {
    try {
      // A Python older than 3.11 fails here, with a message the user can act on.
      await run(python, ['-c', 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "wave-ls needs Python 3.11 or newer, found " + sys.version.split()[0])'], log);
      await run(python, ['-m', 'venv', env], log);
      return;
    } catch (e) {
      lastError = e;
    }
  }
  throw new Error(`no usable Python to make the server's environment (${String((lastError as Error)?.message ?? lastError)})`);
}

function markerFor(wheel: BundledWheel): EnvMarker {
  const bytes = fs.readFileSync(wheel.file);
  return { wheel: path.basename(wheel.file), sha256: createHash('sha256').update(bytes).digest('hex') };
}

/** The bundled server's executable when its environment is made from this wheel, else null. */
export function readyBundledServer(storageDir: string, wheel: BundledWheel): string | null {
  const paths = envPaths(storageDir);
  const executableOk = fs.existsSync(paths.waveLs) && fs.existsSync(paths.python);
  return needsInstall(readMarker(paths.marker), markerFor(wheel), executableOk) ? null : paths.waveLs;
}

/**
 * The bundled server's executable, installing it first when needed. `report` gets one line
 * per step (for a progress notification); `log` every line of the tools' output.
 */
export async function ensureBundledServer(
  storageDir: string,
  wheel: BundledWheel,
  report: (step: string) => void,
  log: (line: string) => void,
): Promise<string> {
  const paths = envPaths(storageDir);
  const ready = readyBundledServer(storageDir, wheel);
  if (ready) return ready;
  const want = markerFor(wheel);
  fs.mkdirSync(storageDir, { recursive: true });
  if (!fs.existsSync(paths.python)) {
    report('creating a Python environment');
    fs.rmSync(paths.env, { recursive: true, force: true });
    await createVenv(paths.env, log);
  }
  report(`installing wave-ls ${wheel.version} and its dependencies`);
  fs.rmSync(paths.marker, { force: true });
  await run(paths.python, ['-m', 'pip', 'install', '--upgrade', wheel.file], log);
  // Same version, new build (a rebuilt extension): pip would keep the old files.
  await run(paths.python, ['-m', 'pip', 'install', '--force-reinstall', '--no-deps', wheel.file], log);
  fs.writeFileSync(paths.marker, JSON.stringify(want));
  return paths.waveLs;
}
