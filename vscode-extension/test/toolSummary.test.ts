// A tool block's one-line target (issue 29 point 3): the server's `target`, computed from
// the tool's descriptor, is what the chat shows; no table of tools and argument names here.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { initialChat, reduce, type ChatState, type ToolItem } from '../src/shared/reducer';
import type { SessionUpdate } from '../src/shared/wire';
import { parseArgs, toolTarget } from '../src/webview/toolSummary';

const S = 's1';
function block(extra: Record<string, unknown>): ChatState {
  const update = { sessionId: S, kind: 'toolBlock', toolCallId: 'c1', status: 'pending', shortResult: '', ...extra } as SessionUpdate;
  return reduce(initialChat(S), { type: 'update', update });
}

describe('tool targets', () => {
  test("a block shows the server's target, not a guess from its arguments", () => {
    // `path` written first: a guess from the arguments would show it.
    const s = block({ name: 'Grep', arguments: '{"path":"src","pattern":"def answer"}', target: 'def answer', toolKind: 'search' });
    const item = s.items[0] as ToolItem;
    assert.equal(item.target, 'def answer');
    assert.equal(toolTarget(item.target, parseArgs(item.arguments), '/w'), 'def answer');
  });

  test("any tool's target: an MCP tool's key argument, a task id", () => {
    const mcp = block({ name: 'mcp__docs__search', arguments: '{"limit":"5","q":"hooks"}', target: 'hooks' }).items[0] as ToolItem;
    assert.equal(toolTarget(mcp.target, parseArgs(mcp.arguments)), 'hooks');
    const task = block({ name: 'TaskOutput', arguments: '{"block":false,"task_id":"bash-1"}', target: 'bash-1' }).items[0] as ToolItem;
    assert.equal(toolTarget(task.target, parseArgs(task.arguments)), 'bash-1');
  });

  test('a path under the workspace is shown relative to it; an empty target shows nothing', () => {
    assert.equal(toolTarget('/w/src/app.py', { file_path: '/w/src/app.py' }, '/w'), 'src/app.py');
    assert.equal(toolTarget('', { pattern: 'x' }, '/w'), '');
  });

  test('from an older server (no target): the first text argument, as written', () => {
    const item = block({ name: 'Read', arguments: '{"offset":3,"file_path":"/w/a.py"}' }).items[0] as ToolItem;
    assert.equal(item.target, undefined);
    assert.equal(toolTarget(item.target, parseArgs(item.arguments), '/w'), 'a.py');
    assert.equal(toolTarget(undefined, {}), '');
  });
});
