// Where the extension finds wave-ls: setting, then the workspace .venv, then PATH.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { discoverServer } from '../src/host/serverDiscovery';

const base = { settingPath: '', folders: ['/w1', '/w2'], pathEnv: '/usr/bin:/opt/bin', platform: 'linux' as NodeJS.Platform };

test('the setting wins, and a wrong setting says so', () => {
  const exe = new Set(['/custom/wave-ls', '/w1/.venv/bin/wave-ls']);
  assert.deepEqual(discoverServer({ ...base, settingPath: '/custom/wave-ls', isExecutable: (f) => exe.has(f) }), { found: true, command: '/custom/wave-ls', source: 'setting' });
  const wrong = discoverServer({ ...base, settingPath: '/nope', isExecutable: (f) => exe.has(f) });
  assert.equal(wrong.found, false);
  assert.match(!wrong.found ? wrong.reason : '', /wave.server.path.*\/nope/);
});

test('then the first folder with a .venv, then PATH', () => {
  const venv = new Set(['/w2/.venv/bin/wave-ls', '/opt/bin/wave-ls']);
  assert.deepEqual(discoverServer({ ...base, isExecutable: (f) => venv.has(f) }), { found: true, command: '/w2/.venv/bin/wave-ls', source: 'venv' });
  const onPath = new Set(['/opt/bin/wave-ls']);
  assert.deepEqual(discoverServer({ ...base, isExecutable: (f) => onPath.has(f) }), { found: true, command: '/opt/bin/wave-ls', source: 'path' });
  const none = discoverServer({ ...base, isExecutable: () => false });
  assert.equal(none.found, false);
});

test('in Restricted Mode a workspace .venv is not run (a cloned repository could ship it)', () => {
  const exe = new Set(['/w1/.venv/bin/wave-ls', '/opt/bin/wave-ls']);
  assert.deepEqual(discoverServer({ ...base, workspaceTrusted: false, isExecutable: (f) => exe.has(f) }), { found: true, command: '/opt/bin/wave-ls', source: 'path' });
  const none = discoverServer({ ...base, workspaceTrusted: false, isExecutable: (f) => f === '/w1/.venv/bin/wave-ls' });
  assert.match(!none.found ? none.reason : '', /only once the workspace is trusted/);
  assert.deepEqual(discoverServer({ ...base, workspaceTrusted: true, isExecutable: (f) => exe.has(f) }), { found: true, command: '/w1/.venv/bin/wave-ls', source: 'venv' });
});
