// A model's reasoning (thinkingDelta updates, meta.thinking) is one folded "thinking" item,
// never part of the answer (issue 27).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { initialChat, reduce, type ChatAction, type ChatState } from '../src/shared/reducer';
import type { SessionUpdate } from '../src/shared/wire';

type UpdateBody = SessionUpdate extends infer U ? (U extends SessionUpdate ? Omit<U, 'sessionId'> : never) : never;
const S = 's1';
const up = (u: UpdateBody): ChatAction => ({ type: 'update', update: { sessionId: S, ...u } as SessionUpdate });
const run = (actions: ChatAction[], state: ChatState = initialChat(S)) => actions.reduce(reduce, state);
const shown = (s: ChatState) => s.items.map((i) => `${i.kind}:${'text' in i ? i.text : ''}${'streaming' in i && i.streaming ? '…' : ''}`);

describe('thinking', () => {
  test('reasoning streams into one thinking item before the answer, and stays out of it', () => {
    let s = run([
      { type: 'sendStarted' },
      up({ kind: 'userMessage', message: { role: 'user', content: 'say hello' } }),
      up({ kind: 'thinkingDelta', delta: 'A short ' }),
      up({ kind: 'thinkingDelta', delta: 'greeting.' }),
    ]);
    assert.deepEqual(shown(s), ['user:say hello', 'thinking:A short greeting.…']);
    s = run([up({ kind: 'assistantDelta', delta: 'Hel' }), up({ kind: 'assistantDelta', delta: 'lo!' })], s);
    assert.deepEqual(shown(s), ['user:say hello', 'thinking:A short greeting.…', 'assistant:Hello!…']);
    s = run(
      [up({ kind: 'assistantMessage', message: { role: 'assistant', content: 'Hello!', meta: { thinking: 'A short greeting.' } } })],
      s,
    );
    assert.deepEqual(shown(s), ['user:say hello', 'thinking:A short greeting.', 'assistant:Hello!']);
  });

  test('a round that only thought and called a tool keeps its thinking; the turn end settles it', () => {
    let s = run([
      { type: 'sendStarted' },
      up({ kind: 'userMessage', message: { role: 'user', content: 'list files' } }),
      up({ kind: 'thinkingDelta', delta: 'I will list them.' }),
    ]);
    s = run([up({ kind: 'turnEnded', status: 'cancelled', text: '' })], s);
    assert.deepEqual(shown(s).slice(0, 2), ['user:list files', 'thinking:I will list them.']);
  });

  test('a history shows the thinking of each answer before it', () => {
    const s = run([
      {
        type: 'history',
        messages: [
          { role: 'user', content: 'say hello' },
          { role: 'assistant', content: 'Hello!', meta: { thinking: 'A short greeting.' } },
        ],
      } as ChatAction,
    ]);
    assert.deepEqual(shown(s), ['user:say hello', 'thinking:A short greeting.', 'assistant:Hello!']);
  });
});
