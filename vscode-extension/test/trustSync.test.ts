// VS Code's workspace trust passed to wave-ls (issue 25): wave/workspace/trust per folder.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { syncTrust, TRUST_METHOD } from '../src/host/trustSync';

function recorder(fail: string[] = []) {
  const sent: { method: string; cwd: string; trusted: boolean }[] = [];
  const logged: string[] = [];
  return {
    sent,
    logged,
    send: async (method: string, params: { cwd: string; trusted: boolean }) => {
      if (fail.includes(params.cwd)) throw new Error('no such folder');
      sent.push({ method, ...params });
    },
    log: (line: string) => logged.push(line),
  };
}

test('a trusted window trusts each folder; one refused folder does not stop the others', async () => {
  const r = recorder(['/gone']);
  const vouched = await syncTrust({ trusted: true, folders: ['/a', '/gone', '/b'], trustedBefore: [], send: r.send, log: r.log });
  assert.deepEqual(r.sent, [
    { method: TRUST_METHOD, cwd: '/a', trusted: true },
    { method: TRUST_METHOD, cwd: '/b', trusted: true },
  ]);
  assert.deepEqual(vouched, ['/a', '/b']);
  assert.match(r.logged[0], /\/gone: no such folder/);
});

test('Restricted Mode sends nothing for a folder never trusted here, and takes back what was', async () => {
  const r = recorder();
  const vouched = await syncTrust({ trusted: false, folders: ['/new', '/was'], trustedBefore: ['/was', '/elsewhere'], send: r.send, log: r.log });
  assert.deepEqual(r.sent, [{ method: TRUST_METHOD, cwd: '/was', trusted: false }]);
  assert.deepEqual(vouched, ['/elsewhere'], 'a folder of another window is left alone');
});
