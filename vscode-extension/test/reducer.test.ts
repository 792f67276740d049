// The reducer: wave/session/update notifications and $/progress -> the chat's view state.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { initialChat, reduce, runningSubagents, TRUSTED_NOTICE, type ChatAction, type ChatState, type ToolItem } from '../src/shared/reducer';
import type { SessionUpdate } from '../src/shared/wire';

type UpdateBody = SessionUpdate extends infer U ? (U extends SessionUpdate ? Omit<U, 'sessionId'> : never) : never;
const S = 's1';
const up = (u: UpdateBody): ChatAction => ({ type: 'update', update: { sessionId: S, ...u } as SessionUpdate });
const run = (actions: ChatAction[], state: ChatState = initialChat(S)) => actions.reduce(reduce, state);
const summary = (s: ChatState) => s.items.map((i) => `${i.kind}:${i.kind === 'tool' ? `${i.name}/${i.status}` : 'text' in i ? i.text : i.kind === 'permission' ? i.state : ''}`);

describe('messages', () => {
  test('deltas stream into one assistant message that the final message replaces', () => {
    let s = run([
      { type: 'sendStarted' },
      up({ kind: 'userMessage', message: { role: 'user', content: 'hi [@agent:Explore]' } }),
      up({ kind: 'assistantDelta', delta: 'Hel' }),
      up({ kind: 'assistantDelta', delta: 'lo' }),
    ]);
    assert.deepEqual(summary(s), ['user:hi [@agent:Explore]', 'assistant:Hello']);
    assert.equal(s.items[1].kind === 'assistant' && s.items[1].streaming, true);
    assert.ok(s.busy && s.sending);
    s = run([up({ kind: 'assistantMessage', message: { role: 'assistant', content: 'Hello there.' } })], s);
    assert.deepEqual(summary(s), ['user:hi [@agent:Explore]', 'assistant:Hello there.']);
    assert.equal(s.items[1].kind === 'assistant' && s.items[1].streaming, false);
    s = run([up({ kind: 'turnEnded', status: 'completed', text: 'Hello there.' }), { type: 'sendFinished', result: { status: 'completed', text: '' } }], s);
    assert.ok(!s.busy && !s.sending);
    assert.equal(s.items.length, 2);
  });

  test('reminders and memory are hidden; task notices show as a line', () => {
    const s = run([
      up({ kind: 'userMessage', message: { role: 'user', content: '<system-reminder>x</system-reminder>', meta: { reminder: 'agent' } } }),
      up({ kind: 'userMessage', message: { role: 'user', content: 'memory', meta: { isMeta: true } } }),
      up({ kind: 'userMessage', message: { role: 'user', content: 'A background agent completed a task', meta: { isMeta: true, taskNotification: 'agent-1234abcd', status: 'completed' } } }),
    ]);
    assert.deepEqual(summary(s), ['notice:Background task agent-1234abcd completed.']);
  });

  test('a round with only tool calls leaves no empty assistant message', () => {
    const s = run([
      up({ kind: 'assistantDelta', delta: ' ' }),
      up({ kind: 'assistantMessage', message: { role: 'assistant', content: '', tool_calls: [{ id: 'c1', function: { name: 'Read', arguments: '{}' } }] } }),
    ]);
    assert.deepEqual(summary(s), []);
  });
});

describe('tool blocks', () => {
  test('one block per call, updated in place, with its result', () => {
    const s = run([
      up({ kind: 'toolBlock', toolCallId: 'c1', name: 'Read', arguments: '{"file_path":"a.py"}', status: 'pending', shortResult: '' }),
      up({ kind: 'toolBlock', toolCallId: 'c2', name: 'Grep', arguments: '{"pattern":"x"}', status: 'running', shortResult: '' }),
      up({ kind: 'toolBlock', toolCallId: 'c1', name: 'Read', arguments: '{"file_path":"a.py"}', status: 'completed', shortResult: 'Read 3 lines', result: '1\tx' }),
    ]);
    assert.deepEqual(summary(s), ['tool:Read/completed', 'tool:Grep/running']);
    const read = s.items[0] as ToolItem;
    assert.equal(read.result, '1\tx');
    assert.equal(read.shortResult, 'Read 3 lines');
  });

  test('an Agent block follows $/progress from begin to end, and its details', () => {
    const token = 'wave/agent/call-9';
    let s = run([
      up({ kind: 'toolBlock', toolCallId: 'call-9', name: 'Agent', arguments: '{"subagent_type":"Explore","description":"Find tests"}', status: 'running', shortResult: '', details: { subagentType: 'Explore', description: 'Find tests', subagentId: 'sub-1' } }),
      { type: 'progress', token, value: { kind: 'begin', title: 'Explore: Find tests' } },
      { type: 'progress', token, value: { kind: 'report', message: 'Glob **/test_*.py · 120 tokens' } },
    ]);
    let block = s.items[0] as ToolItem;
    assert.equal(block.progress?.message, 'Glob **/test_*.py · 120 tokens');
    assert.equal(runningSubagents(s), 1);
    s = run(
      [
        { type: 'progress', token, value: { kind: 'report', message: 'Read test_calc.py · 300 tokens' } },
        up({ kind: 'toolBlock', toolCallId: 'call-9', name: 'Agent', arguments: '{}', status: 'completed', shortResult: 'Done', result: 'test_calc.py', details: { status: 'completed', totalTokens: 420, toolCalls: 2, summary: 'Done (2 tool calls · 420 tokens · 1.2s)', worktree: { path: '/r/.wave/worktrees/a', kept: false } } }),
        { type: 'progress', token, value: { kind: 'end', message: 'Done (2 tool calls · 420 tokens · 1.2s)' } },
      ],
      s,
    );
    block = s.items[0] as ToolItem;
    assert.equal(block.status, 'completed');
    assert.equal(block.progress?.end, 'Done (2 tool calls · 420 tokens · 1.2s)');
    assert.equal(block.details?.subagentType, 'Explore'); // kept from the first update
    assert.equal(block.details?.worktree?.kept, false);
    assert.equal(runningSubagents(s), 0);
  });

  test('progress of other tokens is ignored', () => {
    const s = run([{ type: 'progress', token: 'other', value: { kind: 'begin', title: 'x' } }]);
    assert.equal(s.items.length, 0);
  });

  test('a finished id seen running again is a new block', () => {
    const s = run([
      up({ kind: 'toolBlock', toolCallId: 'c1', name: 'Bash', arguments: '{}', status: 'completed', shortResult: 'ok' }),
      up({ kind: 'toolBlock', toolCallId: 'c1', name: 'Bash', arguments: '{}', status: 'running', shortResult: '' }),
    ]);
    assert.deepEqual(summary(s), ['tool:Bash/completed', 'tool:Bash/running']);
  });

  test('background subagents count through their task', () => {
    const task = { taskId: 'agent-1', sessionId: S, kind: 'subagent' as const, subagentType: 'test-runner', status: 'running' as const, description: 'Run', startedAt: 1 };
    let s = run([up({ kind: 'task', task })]);
    assert.equal(runningSubagents(s), 1);
    s = run([up({ kind: 'task', task: { ...task, status: 'completed' } })], s);
    assert.equal(s.tasks.length, 1);
    assert.equal(runningSubagents(s), 0);
  });
});

describe('turns, prompts and usage', () => {
  test('a permission prompt is answered in place; the end of a turn cancels an open one', () => {
    const request = { sessionId: S, toolName: 'Edit', arguments: { file_path: 'a.py' }, summary: 'edit a.py', preview: { path: '/r/a.py', diff: '' } };
    let s = run([
      { type: 'permissionAsked', key: 'p1', request },
      { type: 'permissionAnswered', key: 'p1', answer: { allowed: true, remember: 'session' } },
      { type: 'permissionAsked', key: 'p2', request },
      { type: 'permissionAnswered', key: 'p2', answer: { allowed: false, message: 'not now' } },
      { type: 'permissionAsked', key: 'p3', request },
    ]);
    assert.deepEqual(summary(s), ['permission:allowedSession', 'permission:denied', 'permission:pending']);
    assert.equal(s.items[1].kind === 'permission' && s.items[1].reason, 'not now');
    s = run([up({ kind: 'turnEnded', status: 'cancelled', text: '' })], s);
    assert.deepEqual(summary(s), ['permission:allowedSession', 'permission:denied', 'permission:cancelled', 'notice:Stopped.']);
  });

  test('a failed turn says why; a refused send too', () => {
    let s = run([{ type: 'sendStarted' }, up({ kind: 'turnEnded', status: 'failed', text: '', error: 'model 404' })]);
    assert.deepEqual(summary(s), ['notice:The turn failed: model 404']);
    s = run([{ type: 'sendStarted' }, { type: 'sendFailed', error: 'busy' }]);
    assert.deepEqual(summary(s), ['notice:busy']);
    assert.ok(!s.busy && !s.sending);
  });

  test('usage keeps the session total', () => {
    const s = run([up({ kind: 'usage', usage: { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3 }, total: { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 } })]);
    assert.equal(s.usage?.total.total_tokens, 30);
  });

  test('a history becomes items: tool calls with their results, reminders hidden', () => {
    const s = run([
      {
        type: 'history',
        messages: [
          { role: 'system', content: 'sys' },
          { role: 'user', content: '[@agent:Explore] where?' },
          { role: 'user', content: 'reminder', meta: { reminder: 'agent' } },
          { role: 'assistant', content: 'Asking Explore.', tool_calls: [{ id: 't1', function: { name: 'Agent', arguments: '{"subagent_type":"Explore"}' } }] },
          { role: 'tool', content: 'found it\nmore', tool_call_id: 't1' },
          { role: 'assistant', content: 'Here.' },
        ],
      },
    ]);
    assert.deepEqual(summary(s), ['user:[@agent:Explore] where?', 'assistant:Asking Explore.', 'tool:Agent/completed', 'assistant:Here.']);
    assert.equal((s.items[2] as ToolItem).shortResult, 'found it');
  });

  test('the same actions give the same state (host and webview agree)', () => {
    const actions: ChatAction[] = [up({ kind: 'assistantDelta', delta: 'a' }), { type: 'notice', text: 'n', tone: 'info' }];
    assert.deepEqual(run(actions), run(actions));
  });
});

describe('workspace trust (issue 25)', () => {
  const held = { root: '/w', decision: null, needsDecision: true, heldBack: [{ kind: 'hooks', path: '/w/.wave/settings.json', detail: "'hooks' in a committed settings file" }] };

  test('what is held back is one notice, kept through a history reload, replaced by the next', () => {
    let s = run([up({ kind: 'workspaceTrust', trusted: false, ...held })]);
    assert.deepEqual(s.trust, { root: '/w', decision: null, heldBack: held.heldBack });
    assert.equal(s.items.length, 0, 'not a transcript item: one notice above it');
    s = run([{ type: 'history', messages: [{ role: 'user', content: 'hi' }] }], s);
    assert.equal(s.trust?.heldBack.length, 1, 'a resumed history keeps it');
    const refused = { ...held, decision: false, needsDecision: false };
    s = run([up({ kind: 'workspaceTrust', trusted: false, ...refused })], s);
    assert.equal(s.trust?.decision, false);
  });

  test('trusting lifts it and says so once; a trusted folder with nothing shown stays quiet', () => {
    let s = run([up({ kind: 'workspaceTrust', trusted: false, ...held })]);
    s = run([up({ kind: 'workspaceTrust', root: '/w', trusted: true, decision: true, needsDecision: false, heldBack: [] })], s);
    assert.equal(s.trust, undefined);
    assert.deepEqual(summary(s), [`notice:${TRUSTED_NOTICE}`]);
    s = run([up({ kind: 'workspaceTrust', root: '/w', trusted: true, decision: true, needsDecision: false, heldBack: [] })], s);
    assert.equal(s.items.length, 1, 'not twice');
    const quiet = run([up({ kind: 'workspaceTrust', root: '/w', trusted: true, decision: true, needsDecision: false, heldBack: [] })]);
    assert.equal(quiet.items.length, 0);
    assert.equal(quiet.trust, undefined);
  });
});

describe('MCP servers (issue 26)', () => {
  test('an mcpStatus update, or a kind this extension does not know, leaves the chat as it was', () => {
    const before = run([up({ kind: 'userMessage', message: { role: 'user', content: 'hi' } })]);
    const after = run(
      [
        up({ kind: 'mcpStatus', name: 'srv', scope: 'project', transport: 'stdio', status: 'connected', tools: ['mcp__srv__echo'] }),
        { type: 'update', update: { sessionId: S, kind: 'someFutureKind', tokens: 1 } as unknown as SessionUpdate },
      ],
      before,
    );
    assert.deepEqual(after, before);
  });
});

describe('context window (issue 27)', () => {
  test('compacted shows one line, live and from a loaded history (not the summary text)', () => {
    let s = run([up({ kind: 'userMessage', message: { role: 'user', content: 'hi' } }), up({ kind: 'compacted', tokensBefore: 12345, tokensAfter: 2100 })]);
    assert.deepEqual(summary(s), ['user:hi', 'notice:conversation compacted (12,345 -> 2,100 tokens)']);
    s = run([
      {
        type: 'history',
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: 'hello' },
          { role: 'user', content: 'This session was compacted ... SUMMARY', meta: { kind: 'compacted', kept: 2, tokensBefore: 900, tokensAfter: 300, reason: 'manual' } },
        ],
      },
    ]);
    assert.deepEqual(summary(s), ['user:hi', 'assistant:hello', 'notice:conversation compacted (900 -> 300 tokens)']);
  });

  test('a notice during a streamed answer (a refused /compact) does not split the answer', () => {
    const s = run([
      { type: 'sendStarted' },
      up({ kind: 'assistantDelta', delta: 'Calculators ' }),
      { type: 'notice', text: 'Not compacted: a turn is running', tone: 'error' },
      up({ kind: 'assistantDelta', delta: 'began' }),
      up({ kind: 'assistantMessage', message: { role: 'assistant', content: 'Calculators began' } }),
    ]);
    assert.deepEqual(summary(s), ['assistant:Calculators began', 'notice:Not compacted: a turn is running']);
  });

  test('contextUsage keeps the latest figures for the header', () => {
    const s = run([up({ kind: 'contextUsage', tokens: 1000, windowTokens: 8192 }), up({ kind: 'contextUsage', tokens: 4096, windowTokens: 8192 })]);
    assert.deepEqual(s.context, { tokens: 4096, windowTokens: 8192 });
    assert.equal(s.items.length, 0);
  });
});
