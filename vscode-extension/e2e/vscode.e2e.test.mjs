// End to end in a real VS Code (code-server) with the built .vsix, a real wave-ls and the
// offline model. Each scenario saves a screenshot under e2e/output/screenshots/.
// Run: node --test --test-concurrency=1 e2e/   (from vscode-extension/, after `npm run package`)
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { log, outputDir, repoRoot, World } from './harness.mjs';
import { longTranscript, MESSAGES } from './script.mjs';

const world = new World();
let page;
let view; // the chat webview's frame

const TIMEOUT = 30_000;

const chatFrame = () => world.chatFrame();

let widened = false;

async function openWaveView() {
  await page.locator('.activitybar [aria-label^="Wave"]').first().click();
  view = await chatFrame();
  if (!widened) {
    // A wider side bar, as a chat is usually given (and the pictures read better).
    widened = true;
    const box = await page.locator('.part.sidebar').boundingBox();
    await page.mouse.move(box.x + box.width + 1, box.y + 300);
    await page.mouse.down();
    await page.mouse.move(box.x + box.width + 160, box.y + 300, { steps: 8 });
    await page.mouse.up();
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

async function focusInput() {
  await view.locator('.input').click();
}

async function typeInInput(text) {
  await focusInput();
  await page.keyboard.type(text, { delay: 15 });
}

async function clearInput() {
  await focusInput();
  await page.keyboard.press('Control+A');
  await page.keyboard.press('Backspace');
  await view.locator('.input .chip').waitFor({ state: 'detached' }).catch(() => {});
}

async function waitIdle() {
  await view.locator('.btn-send').waitFor({ timeout: 60_000 });
  await view.locator('.working').waitFor({ state: 'detached', timeout: 60_000 });
}

async function answerPermission(button) {
  const card = view.locator('.permission-pending').first();
  await card.waitFor({ timeout: TIMEOUT });
  await card.locator('button', { hasText: new RegExp(`^${button}$`) }).click();
}

before(async () => {
  await world.start();
  page = world.page;
}, { timeout: 15 * 60_000 });

after(async () => {
  await world.stop();
});

test('open the view: the chat appears in the activity bar container, themed', async () => {
  await openWaveView();
  await view.locator('.empty h2', { hasText: 'Wave' }).waitFor();
  const bg = await view.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.notEqual(bg, 'rgba(0, 0, 0, 0)', 'the body takes the theme colour');
  const csp = await view.evaluate(() => document.querySelector('meta[http-equiv="Content-Security-Policy"]')?.getAttribute('content') ?? '');
  // the inner frame holds our document; VS Code also sets its own policy on the host frame
  assert.ok(!csp || /script-src 'nonce-/.test(csp), `strict CSP: ${csp}`);
  // This window is trusted (VS Code's trust is off here): the extension trusted the folder
  // on the server at start (issue 25), so its repository's settings apply and no notice shows.
  const trustFile = join(world.home, '.wave', 'trust.json');
  const deadline = Date.now() + TIMEOUT;
  while (!existsSync(trustFile) && Date.now() < deadline) await page.waitForTimeout(200);
  const kept = JSON.parse(readFileSync(trustFile, 'utf8')).folders;
  assert.equal(kept[world.project]?.trusted, true, `wave/workspace/trust at start: ${JSON.stringify(kept)}`);
  await world.screenshot('01-view');
});

test('type @Exp: Explore comes first; Enter makes a chip (MENTION-1..3)', async () => {
  await typeInInput('@');
  const dropdown = view.locator('.dropdown');
  await dropdown.waitFor();
  const groups = await dropdown.locator('.dd-group').allTextContents();
  assert.deepEqual(groups.slice(0, 2), ['Subagents', 'Files'], 'subagents before files');
  await page.keyboard.type('Exp', { delay: 40 });
  await view.locator('.dd-item.selected .dd-label', { hasText: /^Explore$/ }).waitFor();
  const first = await dropdown.locator('.dd-item .dd-label').first().textContent();
  assert.equal(first, 'Explore');
  await world.screenshot('02-dropdown');
  await page.keyboard.press('Enter');
  const chip = view.locator('.input .chip');
  await chip.waitFor();
  assert.equal(await chip.textContent(), '@Explore');
  assert.equal(await chip.getAttribute('contenteditable'), 'false');
  await dropdown.waitFor({ state: 'detached' });
  // Backspace right after the chip (after its space) removes the space, then the whole chip.
  await page.keyboard.press('Backspace');
  await page.keyboard.press('Backspace');
  await chip.waitFor({ state: 'detached' });
  await page.keyboard.type('@Exp', { delay: 40 });
  await view.locator('.dd-item.selected .dd-label', { hasText: /^Explore$/ }).waitFor();
  await page.keyboard.press('Tab');
  await chip.waitFor();
  await page.keyboard.type(MESSAGES.explore, { delay: 5 });
  await world.screenshot('03-chip');
});

test('send: the live Agent block shows progress, then the answer', async () => {
  await page.keyboard.press('Enter');
  const sent = view.locator('.msg-user').last();
  await sent.waitFor();
  assert.equal(await sent.locator('.chip').textContent(), '@Explore', 'the sent message shows the tag as a chip (MENTION-7)');
  const block = view.locator('.agent[data-agent="Explore"]');
  await block.waitFor({ timeout: TIMEOUT });
  await block.locator('.agent-live', { hasText: /Glob|Read/ }).waitFor({ timeout: TIMEOUT });
  await world.screenshot('04-agent-live');
  await view.locator('.msg-assistant', { hasText: 'The tests are in' }).waitFor({ timeout: 60_000 });
  await block.locator('.agent-summary', { hasText: /tool calls/ }).waitFor();
  await waitIdle();
  const requests = await world.modelRequests();
  const sentText = JSON.stringify(requests.map((r) => r.body?.messages));
  assert.match(sentText, /\[@agent:Explore\] where are the tests/, 'the message went out as [@agent:Explore]');
  assert.match(await view.locator('.usage').textContent(), /tokens/);
  await world.screenshot('05-agent-done');
});

test('a permission prompt: Show diff opens the diff editor; Allow changes the file', async () => {
  await typeInInput(MESSAGES.fix);
  await page.keyboard.press('Enter');
  const card = view.locator('.permission-pending');
  await card.waitFor({ timeout: TIMEOUT });
  assert.match(await card.textContent(), /calc\.py/);
  await world.screenshot('06-permission');
  await card.locator('button', { hasText: 'Show diff' }).click();
  const diff = page.locator('.monaco-diff-editor');
  await diff.first().waitFor({ timeout: TIMEOUT });
  await page.locator('.tab', { hasText: 'calc.py (proposed change)' }).waitFor();
  await page.locator('.monaco-diff-editor .line-insert, .monaco-diff-editor .char-insert').first().waitFor();
  await world.screenshot('07-diff');
  assert.match(readFileSync(join(world.project, 'calc.py'), 'utf8'), /return a - b/, 'nothing changes before Allow');
  await answerPermission('Allow');
  // Then the check command: allowed for the rest of the session.
  await answerPermission('Allow for this session');
  await view.locator('.msg-assistant', { hasText: 'Fixed:' }).waitFor({ timeout: 60_000 });
  await waitIdle();
  assert.match(readFileSync(join(world.project, 'calc.py'), 'utf8'), /def add\(a, b\):\n    return a \+ b/);
  await world.screenshot('08-allowed');
  await page.keyboard.press('Control+K');
  await page.keyboard.press('W'); // close the editors: the next screenshots show the chat
});

test('Stop cancels a long turn', async () => {
  await typeInInput(MESSAGES.long);
  await page.keyboard.press('Enter');
  await view.locator('.msg-assistant.streaming').waitFor({ timeout: TIMEOUT });
  await page.waitForTimeout(1200);
  await view.locator('.btn-stop').click();
  await view.locator('.notice', { hasText: 'Stopped.' }).waitFor({ timeout: TIMEOUT });
  await waitIdle();
  const text = await view.locator('.msg-assistant').last().textContent();
  assert.ok(text.length < 900, `the answer was cut short (${text.length} characters)`);
  await world.screenshot('09-stopped');
});

test('a draft with a tag survives switching chats, hiding the view, and still works (MENTION-8)', async () => {
  const firstChat = await view.locator('.session-select').inputValue();
  await typeInInput('@test');
  await view.locator('.dd-item.selected .dd-label', { hasText: /^test-runner$/ }).waitFor();
  // Its frontmatter colour (issue 24): a dot on the item, the chip's colour once chosen.
  assert.equal(await view.locator('.dd-item.selected .agent-dot').count(), 1, 'the colour dot');
  await world.screenshot('10-agent-colour');
  await page.keyboard.press('Enter');
  await page.keyboard.type(MESSAGES.draft, { delay: 5 });
  await view.locator('button[aria-label="New chat"]').click();
  await view.locator('.empty').waitFor();
  assert.equal(await view.locator('.input .chip').count(), 0, 'the new chat starts empty');
  await view.locator('.session-select').selectOption(firstChat);
  await view.locator('.input .chip', { hasText: '@test-runner' }).waitFor();
  assert.match(await view.locator('.input').textContent(), /run the tests later/);
  // Hide the view (the webview is destroyed) and show it again.
  await page.locator('.activitybar [aria-label^="Explorer"]').first().click();
  await page.waitForTimeout(500);
  await openWaveView();
  await view.locator('.input .chip', { hasText: '@test-runner' }).waitFor();
  assert.match(await view.locator('.input').textContent(), /run the tests later/);
  await world.screenshot('10-draft-restored');
  await focusInput();
  await page.keyboard.press('End');
  await page.keyboard.press('Enter');
  await view.locator('.msg-assistant', { hasText: 'test-runner will run the tests' }).waitFor({ timeout: TIMEOUT });
  await waitIdle();
  const bodies = JSON.stringify((await world.modelRequests()).map((r) => r.body?.messages));
  assert.match(bodies, /\[@agent:test-runner\] run the tests later/);
  assert.match(bodies, /subagent_type=test-runner|test-runner/);
});

test('a deleted agent file leaves the dropdown (MENTION-9)', async () => {
  await typeInInput('@test');
  await view.locator('.dd-label', { hasText: /^test-runner$/ }).waitFor();
  rmSync(join(world.project, '.wave', 'agents', 'test-runner.md'));
  await page.keyboard.press('Backspace');
  await page.keyboard.type('t', { delay: 20 });
  const deadline = Date.now() + 10_000;
  while ((await view.locator('.dd-label', { hasText: /^test-runner$/ }).count()) && Date.now() < deadline) {
    await page.keyboard.press('Backspace');
    await page.keyboard.type('t', { delay: 300 });
  }
  assert.equal(await view.locator('.dd-label', { hasText: /^test-runner$/ }).count(), 0);
  await world.screenshot('11-agent-deleted');
  await page.keyboard.press('Escape');
  await clearInput();
});

test('a kept worktree is listed, its changes open, Remove works', async () => {
  await typeInInput(MESSAGES.isolated);
  await page.keyboard.press('Enter');
  await answerPermission('Allow'); // the subagent's Edit, inside its worktree
  const block = view.locator('.agent[data-agent="general-purpose"]');
  await block.locator('.badge-kept').waitFor({ timeout: 60_000 });
  await waitIdle();
  await world.screenshot('12-worktree-kept');
  const header = page.locator('.pane-header', { hasText: 'Worktrees' });
  if ((await header.getAttribute('aria-expanded')) !== 'true') await header.click();
  await page.locator('.pane-header', { hasText: 'Worktrees' }).hover();
  await page.locator('.pane-header', { hasText: 'Worktrees' }).locator('[aria-label="Refresh"]').click();
  const row = page.locator('.monaco-list-row', { hasText: 'worktree-' }).first();
  await row.waitFor({ timeout: TIMEOUT });
  assert.match(await row.textContent(), /1 changed file/);
  await row.hover();
  await row.locator('[aria-label="Show Changes"]').click();
  await page.locator('.monaco-diff-editor').first().waitFor({ timeout: TIMEOUT });
  await page.locator('.monaco-diff-editor .line-insert, .monaco-diff-editor .char-insert').first().waitFor();
  await world.screenshot('13-worktree-changes');
  await row.hover();
  await row.locator('[aria-label="Remove Worktree"]').click();
  await page.locator('.monaco-dialog-box .monaco-button', { hasText: /^Remove$/ }).click();
  // It has changes: refused, then a second, explicit confirmation forces it.
  await page.locator('.monaco-dialog-box', { hasText: 'was not removed' }).waitFor();
  await world.screenshot('14-worktree-remove-confirm');
  await page.locator('.monaco-dialog-box .monaco-button', { hasText: 'Delete Changes and Remove' }).click();
  await page.locator('.monaco-list-row', { hasText: 'No kept worktrees' }).waitFor({ timeout: TIMEOUT });
  assert.ok(!existsSync(join(world.project, '.wave', 'worktrees', 'x')));
  await world.screenshot('15-worktree-removed');
});

test('the permission mode picker, and a background subagent with Stop', async () => {
  await view.locator('.mode-select').selectOption('bypassPermissions');
  await typeInInput(MESSAGES.background);
  await page.keyboard.press('Enter');
  const task = view.locator('.tasks .task', { hasText: 'general-purpose: Slow job' });
  await task.waitFor({ timeout: TIMEOUT });
  await page.locator('.statusbar-item', { hasText: '1 subagent' }).waitFor({ timeout: TIMEOUT });
  const header = page.locator('.pane-header', { hasText: 'Background Tasks' });
  if ((await header.getAttribute('aria-expanded')) !== 'true') await header.click();
  await page.locator('.monaco-list-row', { hasText: 'general-purpose: Slow job' }).waitFor({ timeout: TIMEOUT });
  await view.locator('.msg-assistant', { hasText: 'runs in the background' }).waitFor({ timeout: TIMEOUT });
  await page.waitForTimeout(1500); // the subagent's sleep is running now
  assert.equal(await view.locator('.permission-pending').count(), 0, 'bypassPermissions: the command ran without a prompt');
  await world.screenshot('16-background-task');
  await task.locator('button', { hasText: 'Stop' }).click();
  await task.waitFor({ state: 'detached', timeout: TIMEOUT });
  await view.locator('.notice', { hasText: /Background task agent-\w+ stopped/ }).waitFor({ timeout: TIMEOUT });
  await page.locator('.statusbar-item', { hasText: 'subagent' }).waitFor({ state: 'detached', timeout: TIMEOUT });
  await view.locator('.msg-assistant', { hasText: 'The background job ended' }).waitFor({ timeout: TIMEOUT });
  await waitIdle();
  await view.locator('.mode-select').selectOption('default');
  await header.click(); // collapse it again
});

test('the server restarts after a crash, with a message, and the chat goes on', async () => {
  const pids = world.waveLsPids();
  assert.equal(pids.length, 1, `one wave-ls (${pids})`);
  process.kill(pids[0], 'SIGKILL');
  await page.locator('.notification-toast', { hasText: 'stopped unexpectedly' }).waitFor({ timeout: TIMEOUT });
  await world.screenshot('17-crash-message');
  await page.waitForFunction(() => true);
  const deadline = Date.now() + 30_000;
  while (!world.waveLsPids().length && Date.now() < deadline) await page.waitForTimeout(250);
  assert.ok(world.waveLsPids().length, 'a new server runs');
  await view.locator('.msg-user', { hasText: MESSAGES.isolated }).waitFor(); // the history is back
  // Nothing runs in a new server: a turn cut off by the crash (also one the session started
  // itself for a task notice, which the kill above may hit) no longer shows as working.
  await view.locator('.working').waitFor({ state: 'detached', timeout: TIMEOUT });
  await typeInInput(MESSAGES.afterRestart);
  await page.keyboard.press('Enter');
  try {
    await view.locator('.msg-assistant', { hasText: 'Still here' }).waitFor({ timeout: TIMEOUT });
  } catch (error) {
    await world.screenshot('18-after-restart-no-answer'); // what the user saw instead
    const requests = await world.modelRequests();
    writeFileSync(join(outputDir, 'model-requests.json'), JSON.stringify(requests.slice(-4), null, 1));
    throw error;
  }
  await waitIdle();
  await world.screenshot('18-after-restart');
});

test('benchmark: @ keystroke to dropdown painted (real server)', async () => {
  await clearInput();
  const runs = 40;
  await view.evaluate(() => (window.__waveMetrics.atToPaint.length = 0));
  for (let i = 0; i < runs; i++) {
    await page.keyboard.type('@');
    await view.locator('.dropdown').waitFor();
    await page.keyboard.press('Backspace');
    await view.locator('.dropdown').waitFor({ state: 'detached' });
  }
  await page.waitForTimeout(300); // the last live answer
  const m = await view.evaluate(() => ({ ...window.__waveMetrics }));
  assert.ok(m.atToPaint.length >= runs * 0.9, `${m.atToPaint.length} samples`);
  const pct = (samples, q) => {
    const sorted = samples.slice().sort((a, b) => a - b);
    return sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)].toFixed(1);
  };
  console.log(`BENCH @ keystroke to dropdown painted: p50 ${pct(m.atToPaint, 0.5)} ms, p95 ${pct(m.atToPaint, 0.95)} ms (target <= 50 ms; ${m.atToPaint.length} runs)`);
  console.log(`BENCH @ keystroke to the server's own answer painted: p50 ${pct(m.atToLivePaint, 0.5)} ms, p95 ${pct(m.atToLivePaint, 0.95)} ms (${m.atToLivePaint.length} runs)`);
  console.log(`BENCH   of which the completion request (extension host <-> wave-ls): p50 ${pct(m.atServer, 0.5)} ms, p95 ${pct(m.atServer, 0.95)} ms`);
});

test('benchmark: a 500-message transcript renders', async () => {
  const sessionId = 'bench-500-messages';
  const dir = join(world.home, '.wave', 'sessions');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${sessionId}.jsonl`), longTranscript(sessionId, world.project, 500));
  await view.evaluate(() => (window.__waveMetrics.transcriptRender.length = 0));
  await command('Wave: Show Sessions');
  await page.locator('.quick-input-list .monaco-list-row', { hasText: 'Question 0' }).click();
  await view.locator('.msg-user', { hasText: 'Question 249' }).waitFor({ timeout: TIMEOUT });
  await page.waitForTimeout(300);
  const renders = await view.evaluate(() => window.__waveMetrics.transcriptRender.filter((r) => r.items >= 500));
  assert.ok(renders.length, 'the render was measured');
  console.log(`BENCH 500-message transcript render: ${renders[0].ms.toFixed(1)} ms for ${renders[0].items} items (target <= 300 ms)`);
  await world.screenshot('19-long-transcript');
});

test('the README screenshot', async () => {
  // The chat beside the code: a finished delegation, tool blocks, a permission prompt and its
  // diff. WAVE_E2E_README_SHOT=1 copies it to docs/images/ and the extension's media/.
  const picture = join(outputDir, 'screenshots', '07-diff.png');
  assert.ok(existsSync(picture));
  if (process.env.WAVE_E2E_README_SHOT) {
    mkdirSync(join(repoRoot, 'docs', 'images'), { recursive: true });
    copyFileSync(picture, join(repoRoot, 'docs', 'images', 'vscode-chat.png'));
    copyFileSync(picture, join(repoRoot, 'vscode-extension', 'media', 'screenshot.png'));
    log('README screenshot updated');
  }
});

test('/compact: a refusal during a turn is a line; then one compacted block and the context in the header (issue 27)', async () => {
  await view.locator('button[aria-label="New chat"]').click();
  await view.locator('.empty').waitFor();
  await clearInput();
  await typeInInput(MESSAGES.long);
  await page.keyboard.press('Enter');
  await view.locator('.msg-assistant.streaming').waitFor({ timeout: TIMEOUT });
  await typeInInput('/compact');
  await page.keyboard.press('Enter');
  await view.locator('.notice', { hasText: /^Not compacted: / }).waitFor({ timeout: TIMEOUT });
  await view.locator('.btn-stop').click();
  await waitIdle();
  await typeInInput(MESSAGES.compactChat);
  await page.keyboard.press('Enter');
  await view.locator('.msg-assistant', { hasText: 'Noted: add and mul.' }).waitFor({ timeout: 60_000 });
  await waitIdle();
  const context = view.locator('.context');
  await context.waitFor({ timeout: TIMEOUT });
  assert.match(await context.textContent(), /^ctx \S+\/\S+ · \d+%$/);
  await typeInInput(`/compact ${MESSAGES.compactInstructions}`);
  await page.keyboard.press('Enter');
  const block = view.locator('.notice', { hasText: /^conversation compacted \([\d,]+ -> [\d,]+ tokens\)$/ });
  await block.waitFor({ timeout: 60_000 });
  assert.equal(await block.count(), 1);
  assert.equal(await view.locator('.msg-user', { hasText: 'Summary:' }).count(), 0, 'the summary is for the model');
  const requests = await world.modelRequests();
  assert.ok(JSON.stringify(requests.map((r) => r.body?.messages)).includes(MESSAGES.compactInstructions), 'the instructions went to the summary request');
  await world.screenshot('23-compacted');
});
