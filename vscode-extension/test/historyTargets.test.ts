// A loaded history shows each call's target as its block did live (issue 29 point 3): the
// server keeps it in the call's tool message (`meta.target`); a history saved before that
// falls back to the first text argument.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { initialChat, reduce, type ToolItem } from '../src/shared/reducer';
import type { WireMessage } from '../src/shared/wire';
import { parseArgs, toolTarget } from '../src/webview/toolSummary';

function loaded(result: WireMessage): ToolItem {
  const messages: WireMessage[] = [
    { role: 'assistant', content: '', tool_calls: [{ id: 'c1', function: { name: 'Grep', arguments: '{"path":"src","pattern":"def answer"}' } }] },
    result,
  ];
  const s = reduce(initialChat('s1'), { type: 'history', messages });
  return s.items[0] as ToolItem;
}

describe('history targets', () => {
  test("a replayed call shows the target kept in its result's meta", () => {
    const item = loaded({ role: 'tool', content: 'src/app.py:1', tool_call_id: 'c1', meta: { target: 'def answer', toolKind: 'search' } });
    assert.equal(item.target, 'def answer');
    assert.equal(toolTarget(item.target, parseArgs(item.arguments)), 'def answer');
  });

  test('a history without one shows the first text argument', () => {
    const item = loaded({ role: 'tool', content: 'src/app.py:1', tool_call_id: 'c1' });
    assert.equal(item.target, undefined);
    assert.equal(toolTarget(item.target, parseArgs(item.arguments)), 'src');
  });
});
