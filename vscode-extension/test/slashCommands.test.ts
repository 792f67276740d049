// The chat input's own commands: /compact [instructions] (wave/session/compact).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { compactErrorText, parseSlashCommand } from '../src/shared/slashCommands';
import { contextLabel, contextTitle } from '../src/webview/toolSummary';

test('/compact with and without instructions; other text goes to the model', () => {
  assert.deepEqual(parseSlashCommand('/compact'), { name: 'compact' });
  assert.deepEqual(parseSlashCommand('  /compact  \n'), { name: 'compact' });
  assert.deepEqual(parseSlashCommand('/compact keep the test plan\nand the file list'), { name: 'compact', instructions: 'keep the test plan\nand the file list' });
  assert.equal(parseSlashCommand('/compaction'), null);
  assert.equal(parseSlashCommand('please /compact'), null);
  assert.equal(parseSlashCommand('hello'), null);
});

test("a refusal shows the server's reason without the method prefix", () => {
  assert.equal(compactErrorText('wave/session/compact: a turn is running'), 'Not compacted: a turn is running');
  assert.equal(compactErrorText(''), 'Not compacted: the server refused.');
});

test('the header shows tokens and the share of the window', () => {
  assert.equal(contextLabel({ tokens: 3100, windowTokens: 8192 }), 'ctx 3.1k/8.2k · 38%');
  assert.match(contextTitle({ tokens: 3100, windowTokens: 8192 }), /3,100 of 8,192 tokens \(38%/);
  assert.equal(contextLabel({ tokens: 5, windowTokens: 0 }), 'ctx 5/0 · 0%');
});
