// Workspace trust end to end (issue 25): code-server with its workspace trust on opens a
// cloned repository (committed hooks and sandbox settings) in Restricted Mode. The
// extension runs there ("limited" support) and does not trust the folder on the server;
// the chat shows one notice of what is held back, whose button opens VS Code's Workspace
// Trust editor; trusting the workspace there lifts it (the server is told, the notice goes).
// Run after vscode.e2e.test.mjs (scripts/ci.sh): this world keeps that one's output.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { World } from './harness.mjs';
import { HOSTILE_FILES, MESSAGES } from './script.mjs';

const world = new World({ name: 'untrusted', files: HOSTILE_FILES, workspaceTrust: true });
let page;
let view;


function trustKept() {
  const file = join(world.home, '.wave', 'trust.json');
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')).folders ?? {} : {};
}

before(async () => {
  await world.start();
  page = world.page;
}, { timeout: 15 * 60_000 });

after(async () => {
  await world.stop();
});

test('Restricted Mode: the chat works and says in one notice what the repository may not do', async () => {
  view = await world.openChat();
  await view.locator('.input').click();
  await page.keyboard.type(MESSAGES.untrusted, { delay: 5 });
  await page.keyboard.press('Enter');
  await view.locator('.msg-assistant', { hasText: 'tiny calculator' }).waitFor({ timeout: 60_000 });
  const notice = view.locator('.trust-notice');
  await notice.waitFor({ timeout: 30_000 });
  const text = await notice.textContent();
  assert.match(text, /Restricted Mode/);
  assert.match(text, /\.wave\/settings\.json/);
  assert.match(text, /hooks/);
  assert.match(text, /sandbox/);
  assert.equal(await view.locator('.trust-notice').count(), 1, 'one notice');
  assert.deepEqual(trustKept(), {}, 'an untrusted window trusts nothing on the server');
  await world.screenshot('20-untrusted-notice');
});

test('its button opens VS Code Workspace Trust; trusting there lifts the notice', async () => {
  await view.locator('.trust-notice button', { hasText: 'Manage Workspace Trust' }).click();
  const editor = page.locator('.workspace-trust-editor');
  await editor.waitFor({ timeout: 30_000 });
  await world.screenshot('21-workspace-trust-editor');
  await editor.locator('.monaco-button', { hasText: /^Trust$/ }).first().click();
  // A confirmation dialog where VS Code asks one (a folder trusted with its parent).
  const confirm = page.locator('.monaco-dialog-box .monaco-button', { hasText: /^Trust$/ });
  if (await confirm.count()) await confirm.first().click();
  const trusted = view.locator('.notice', { hasText: 'Workspace trusted' });
  await trusted.waitFor({ timeout: 30_000 });
  await view.locator('.trust-notice').waitFor({ state: 'detached' });
  const kept = trustKept();
  assert.equal(kept[world.project]?.trusted, true, `the server keeps the trust: ${JSON.stringify(kept)}`);
  await page.keyboard.press('Control+K');
  await page.keyboard.press('W');
  await world.screenshot('22-trusted');
});
