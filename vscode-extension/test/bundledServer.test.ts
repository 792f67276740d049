// The server the .vsix brings: which wheel, when to install, and a real venv + pip run with a
// small wave-ls wheel (made here): first start installs, the next reuses, a new wheel upgrades.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { test } from 'node:test';
import { ensureBundledServer, envPaths, findBundledWheel, needsInstall, pickWheel, readyBundledServer, wheelVersion } from '../src/host/bundledServer';

test('the wheel and its version from the file name; the newest wins', () => {
  assert.equal(wheelVersion('wave_ls-0.1.0-py3-none-any.whl'), '0.1.0');
  assert.equal(wheelVersion('other-0.1.0-py3-none-any.whl'), null);
  assert.equal(wheelVersion('wave_ls-0.1.0.tar.gz'), null);
  assert.deepEqual(pickWheel(['README', 'wave_ls-0.2.0-py3-none-any.whl', 'wave_ls-0.10.0-py3-none-any.whl']), { name: 'wave_ls-0.10.0-py3-none-any.whl', version: '0.10.0' });
  assert.equal(pickWheel([]), null);
});

test('install unless the environment was made from this very wheel and its wave-ls is there', () => {
  const w = { wheel: 'wave_ls-0.1.0-py3-none-any.whl', sha256: 'a' };
  assert.equal(needsInstall(null, w, false), true);
  assert.equal(needsInstall(w, w, true), false);
  assert.equal(needsInstall(w, w, false), true);
  assert.equal(needsInstall({ ...w, sha256: 'b' }, w, true), true, 'a rebuilt wheel of the same version');
  assert.equal(needsInstall({ ...w, wheel: 'wave_ls-0.0.9-py3-none-any.whl' }, w, true), true);
});

/** A wheel with a `wave-ls` console script printing `version`, written with Python's zipfile. */
function makeWheel(dir: string, version: string, marker: string): string {
  fs.mkdirSync(dir, { recursive: true });
  const file = path.join(dir, `wave_ls-${version}-py3-none-any.whl`);
  const script = `
import sys, zipfile
file, version, marker = sys.argv[1:4]
di = f"wave_ls-{version}.dist-info"
files = {
  "wave_ls/__init__.py": f"def main():\\n    print({marker!r})\\n",
  f"{di}/METADATA": f"Metadata-Version: 2.1\\nName: wave-ls\\nVersion: {version}\\n",
  f"{di}/WHEEL": "Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
  f"{di}/entry_points.txt": "[console_scripts]\\nwave-ls = wave_ls:main\\n",
}
files[f"{di}/RECORD"] = "".join(f"{n},,\\n" for n in files) + f"{di}/RECORD,,\\n"
with zipfile.ZipFile(file, "w") as z:
    for n, t in files.items():
        z.writestr(n, t)
`;
  execFileSync('python3', ['-c', script, file, version, marker]);
  return file;
}

test('first start makes the venv, the next reuses it, a different wheel upgrades it', { timeout: 180_000 }, async () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'wave-bundled-'));
  try {
    const ext1 = path.join(root, 'ext1');
    makeWheel(path.join(ext1, 'server'), '0.1.0', 'first build');
    const storage = path.join(root, 'storage');
    const wheel = findBundledWheel(ext1);
    assert.ok(wheel && wheel.version === '0.1.0');
    assert.equal(findBundledWheel(path.join(root, 'nowhere')), null);
    assert.equal(readyBundledServer(storage, wheel), null);

    const steps: string[] = [];
    const exe = await ensureBundledServer(storage, wheel, (s) => steps.push(s), () => {});
    assert.equal(exe, envPaths(storage).waveLs);
    assert.deepEqual(steps, ['creating a Python environment', 'installing wave-ls 0.1.0 and its dependencies']);
    assert.equal(execFileSync(exe, { encoding: 'utf8' }).trim(), 'first build');

    // Later starts: nothing to do, no progress.
    assert.equal(readyBundledServer(storage, wheel), exe);
    const again: string[] = [];
    await ensureBundledServer(storage, wheel, (s) => again.push(s), () => {});
    assert.deepEqual(again, []);

    // An upgraded extension (same version number, another build): installed over the venv.
    const ext2 = path.join(root, 'ext2');
    makeWheel(path.join(ext2, 'server'), '0.1.0', 'second build');
    const wheel2 = findBundledWheel(ext2)!;
    assert.equal(readyBundledServer(storage, wheel2), null);
    const upgrade: string[] = [];
    await ensureBundledServer(storage, wheel2, (s) => upgrade.push(s), () => {});
    assert.deepEqual(upgrade, ['installing wave-ls 0.1.0 and its dependencies'], 'the venv is reused');
    assert.equal(execFileSync(exe, { encoding: 'utf8' }).trim(), 'second build');
  } finally {
    fs.rmSync(root, { recursive: true, force: true });
  }
});
