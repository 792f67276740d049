// MCP servers end to end (issue 26): a trusted folder whose committed .mcp.json names a
// stdio MCP server (tests/support/mcp_server.py, run by the Python that has the `mcp` SDK).
// The MCP Servers view shows it waiting for approval and a notification asks; Approve keeps
// the answer, the first chat starts the server and the view lists its tools; the model calls
// one; the context menu turns it off and on again.
// Runs after vscode.e2e.test.mjs (node sorts the files by name): this world keeps its output.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { after, before, test } from 'node:test';
import { repoRoot, waveLsBinary, World } from './harness.mjs';
import { MESSAGES, mcpFiles } from './script.mjs';

const TIMEOUT = 60_000;
const python = join(dirname(waveLsBinary()), 'python');
const serverScript = join(repoRoot, 'tests', 'support', 'mcp_server.py');
const world = new World({ name: 'mcp', files: mcpFiles(python, serverScript) });
let page;
let view;


const header = () => page.locator('.pane-header', { hasText: 'MCP Servers' });
const pane = () => page.locator('.pane', { has: header() });
const serverRow = () => pane().locator('.monaco-list-row', { hasText: 'calc-tools' });

async function rowSays(pattern) {
  try {
    await serverRow().filter({ hasText: pattern }).waitFor({ timeout: TIMEOUT });
  } catch (e) {
    await world.screenshot(`mcp-failed-${String(pattern).replace(/[^a-z]+/gi, '-')}`);
    const rows = await pane().locator('.monaco-list-row').allTextContents();
    throw new Error(`the calc-tools row never matched ${pattern}; the view shows ${JSON.stringify(rows)}: ${e.message}`);
  }
}

async function command(title) {
  await page.keyboard.press('F1');
  const box = page.locator('.quick-input-widget input');
  await box.waitFor();
  await box.fill(`>${title}`);
  await page.locator('.quick-input-list .monaco-list-row', { hasText: title }).first().waitFor();
  await page.keyboard.press('Enter');
}

// The question, in the notification center: a toast hides itself after 15 s, the question
// stays there until it is answered.
const question = () => page.locator('.notifications-center .notification-list-item', { hasText: 'defines the MCP server "calc-tools"' });

function approvals() {
  const file = join(world.home, '.wave', 'mcp-approvals.json');
  return existsSync(file) ? JSON.parse(readFileSync(file, 'utf8')).projects ?? {} : {};
}

async function send(text, answer) {
  await view.locator('.input').click();
  await page.keyboard.type(text, { delay: 5 });
  await page.keyboard.press('Enter');
  await view.locator('.msg-assistant', { hasText: answer }).waitFor({ timeout: TIMEOUT });
  await view.locator('.working').waitFor({ state: 'detached', timeout: TIMEOUT });
}

before(async () => {
  await world.start();
  page = world.page;
}, { timeout: 15 * 60_000 });

after(async () => {
  await world.stop();
});

test('a project server waits for approval: the view says so and a notification asks once', async () => {
  view = await world.openChat();
  if ((await header().getAttribute('aria-expanded')) !== 'true') await header().click();
  await rowSays(/needs approval/);
  await command('Notifications: Show Notifications');
  await question().waitFor({ timeout: TIMEOUT });
  const asked = await question().textContent();
  assert.match(asked, /mcp_server\.py/, 'the prompt says what would run');
  assert.equal(await page.locator('.notifications-center .notification-list-item', { hasText: 'calc-tools' }).count(), 1, 'asked once');
  assert.deepEqual(approvals(), {}, 'nothing is approved before the user answers');
  await world.screenshot('30-mcp-needs-approval');
});

test('Approve: kept; the first chat starts the server and the view lists its tools', async () => {
  await question().locator('.monaco-button', { hasText: /^Approve$/ }).click();
  await question().waitFor({ state: 'detached' });
  await page.keyboard.press('Escape'); // the notification center closes
  await rowSays(/not running · starts with a chat/);
  const kept = approvals()[world.project];
  assert.equal(kept?.['calc-tools']?.approved, true, `kept in ~/.wave: ${JSON.stringify(approvals())}`);
  await send(MESSAGES.mcpHello, 'calc-tools MCP server is connected');
  await rowSays(/connected · 10 tools/);
  await serverRow().click(); // expands it
  await pane().locator('.monaco-list-row', { hasText: /^peek$/ }).waitFor({ timeout: TIMEOUT });
  const tools = await pane().locator('.monaco-list-row').allTextContents(); // the rows in sight
  for (const tool of ['echo', 'peek']) assert.ok(tools.includes(tool), `${tool} is listed: ${JSON.stringify(tools)}`);
  await world.screenshot('31-mcp-connected-tools');
});

test('the model calls an MCP tool; the chat shows the server and tool', async () => {
  await send(MESSAGES.mcpPeek, 'The calc-tools server answered');
  const block = view.locator('.tool[data-tool="mcp__calc-tools__peek"]');
  await block.waitFor({ timeout: TIMEOUT });
  assert.match(await block.locator('.tool-name').textContent(), /calc-tools · peek/);
  const requests = await world.modelRequests();
  const bodies = requests.filter((r) => r.method === 'POST' && r.body && Array.isArray(r.body.messages)).map((r) => r.body);
  const last = bodies[bodies.length - 1];
  assert.ok(last.tools.some((t) => t.function.name === 'mcp__calc-tools__peek'), 'the model was given the tool');
  const results = last.messages.filter((m) => m.role === 'tool').map((m) => m.content);
  assert.ok(results.includes('peeked calc.py'), `the tool's result reached the model: ${JSON.stringify(results)}`);
  await block.locator('.tool-head').click();
  await world.screenshot('32-mcp-tool-call');
});

test("the row's actions turn the server off and on again", async () => {
  await serverRow().hover();
  await serverRow().locator('[aria-label="Disable MCP Server"]').click();
  await rowSays(/disabled/);
  assert.equal(approvals()[world.project]?.['calc-tools']?.approved, false);
  await world.screenshot('33-mcp-disabled');
  await serverRow().hover();
  await serverRow().locator('[aria-label="Enable MCP Server"]').click();
  await rowSays(/connected · 10 tools/);
});
