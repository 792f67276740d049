// The .vsix brings its server (issue 28 point 1): no wave.server.path, no wave-ls on PATH, no
// workspace .venv. On first start the extension makes its own environment in its global
// storage from the wheel it carries (a progress notification), starts it, and the chat works;
// a restart reuses the environment.
// Run after vscode.e2e.test.mjs (scripts/ci.sh): this world keeps that one's output.
import assert from 'node:assert/strict';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { World } from './harness.mjs';
import { MESSAGES } from './script.mjs';

const world = new World({ name: 'vsix-server', bundledServer: true });
let page;
let view;

const chatFrame = () => world.chatFrame();

const envDir = () => join(world.userData, 'User', 'globalStorage', 'wave-ls.wave-ls', 'server-env');

before(async () => {
  await world.start();
  page = world.page;
}, { timeout: 15 * 60_000 });

after(async () => {
  await world.stop();
});

test('first start: the bundled wheel is installed with a progress notification, and the chat works', { timeout: 15 * 60_000 }, async () => {
  await page.locator('.activitybar [aria-label^="Wave"]').first().click();
  view = await chatFrame();
  const toast = page.locator('.notifications-toasts', { hasText: /Wave: setting up wave-ls/ });
  await toast.first().waitFor({ timeout: 120_000 });
  await world.screenshot('30-vsix-server-setup');
  const marker = join(envDir(), 'wave-bundled.json');
  const deadline = Date.now() + 12 * 60_000;
  while (!existsSync(marker) && Date.now() < deadline) await page.waitForTimeout(1000);
  assert.ok(existsSync(marker), `the environment was made (${marker})`);
  assert.match(JSON.parse(readFileSync(marker, 'utf8')).wheel, /^wave_ls-.*\.whl$/);
  await view.locator('.input').click();
  await page.keyboard.type(MESSAGES.untrusted, { delay: 5 });
  await page.keyboard.press('Enter');
  await view.locator('.msg-assistant', { hasText: 'It is a tiny calculator' }).waitFor({ timeout: 120_000 });
  await world.screenshot('31-vsix-server-chat');
});

test('a restart reuses the environment', async () => {
  const marker = join(envDir(), 'wave-bundled.json');
  const before = statSync(marker).mtimeMs;
  await page.keyboard.press('F1');
  await page.locator('.quick-input-widget input').fill('>Wave: Restart Server');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Wave: Restart Server' }).first().waitFor();
  await page.keyboard.press('Enter');
  await view.locator('.input').click();
  await page.keyboard.type(MESSAGES.afterRestart, { delay: 5 });
  await page.keyboard.press('Enter');
  await view.locator('.msg-assistant', { hasText: 'Still here' }).waitFor({ timeout: 120_000 });
  assert.equal(statSync(marker).mtimeMs, before, 'not installed again');
});
