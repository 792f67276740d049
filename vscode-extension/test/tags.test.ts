// The chat input's tag model (SPEC MENTION-3, MENTION-7).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  atWord,
  deleteBackward,
  deleteForward,
  insertTag,
  insertText,
  parseTags,
  serialize,
  tagLabel,
  toServerText,
  unitLength,
  type Segment,
} from '../src/shared/tags';

const text = (t: string): Segment => ({ type: 'text', text: t });
const agent = (v: string): Segment => ({ type: 'tag', kind: 'agent', value: v });
const file = (v: string): Segment => ({ type: 'tag', kind: 'file', value: v });

describe('insert', () => {
  test('a picked subagent replaces the @ word with a tag and a space', () => {
    const segs = [text('ask @Exp')];
    const w = atWord(segs, 8);
    assert.deepEqual(w, { query: 'Exp', from: 4, to: 8 });
    const edit = insertTag(segs, w!.from, w!.to, 'agent', 'Explore');
    assert.deepEqual(edit.segments, [text('ask '), agent('Explore'), text(' ')]);
    assert.equal(edit.cursor, 6); // after the tag and the space
  });

  test('no second space when one follows already', () => {
    const edit = insertTag([text('@Ex then')], 0, 3, 'agent', 'Explore');
    assert.deepEqual(edit.segments, [agent('Explore'), text(' then')]);
    assert.equal(edit.cursor, 2);
  });

  test('typed text keeps the tag whole, and pasted mention spellings become tags', () => {
    const segs = [agent('Explore'), text(' ')];
    assert.deepEqual(insertText(segs, 2, 'find tests').segments, [agent('Explore'), text(' find tests')]);
    const pasted = insertText([], 0, 'ask [@agent:test-runner] about [@file:src/a b.py]');
    assert.deepEqual(pasted.segments, [text('ask '), agent('test-runner'), text(' about '), file('src/a b.py')]);
    assert.equal(pasted.cursor, unitLength(pasted.segments));
  });
});

describe('delete', () => {
  test('Backspace right after a tag deletes it whole', () => {
    const segs = [text('hi '), agent('Explore'), text(' x')];
    const edit = deleteBackward(segs, 4);
    assert.deepEqual(edit.segments, [text('hi  x')]);
    assert.equal(edit.cursor, 3);
  });

  test('Backspace in text deletes one character, a surrogate pair as one', () => {
    assert.deepEqual(deleteBackward([text('ab')], 2).segments, [text('a')]);
    const emoji = [text('a😀')];
    assert.deepEqual(deleteBackward(emoji, 3), { segments: [text('a')], cursor: 1 });
  });

  test('Delete right before a tag deletes it whole', () => {
    const segs = [text('a'), agent('Plan'), text('b')];
    assert.deepEqual(deleteForward(segs, 1), { segments: [text('ab')], cursor: 1 });
  });

  test('at the edges nothing happens', () => {
    assert.deepEqual(deleteBackward([agent('X')], 0).segments, [agent('X')]);
    assert.deepEqual(deleteForward([agent('X')], 1).segments, [agent('X')]);
  });
});

describe('serialise and parse back', () => {
  test('tags are sent as [@agent:<name>] and [@file:<path>]', () => {
    const segs = [agent('Explore'), text(' where are the tests? see '), file('app/[id]/page.tsx')];
    const sent = serialize(segs);
    assert.equal(sent, '[@agent:Explore] where are the tests? see [@file:app/[id]/page.tsx]');
    assert.deepEqual(parseTags(sent), segs);
  });

  test('the CLI spelling is read too, with the server rules', () => {
    assert.deepEqual(parseTags('@agent:reviewer: now'), [agent('reviewer'), text(': now')]);
    assert.deepEqual(parseTags('(@agent:plug:name)'), [text('('), agent('plug:name'), text(')')]);
    assert.deepEqual(parseTags('me@agent:x and a@b.com'), [text('me@agent:x and a@b.com')]);
    assert.deepEqual(parseTags('[@agent:9bad]'), [text('[@agent:9bad]')]);
  });

  test('labels: @name for subagents, the base name for files', () => {
    assert.equal(tagLabel({ kind: 'agent', value: 'test-runner' }), '@test-runner');
    assert.equal(tagLabel({ kind: 'file', value: 'src/utils/io.py' }), 'io.py');
  });
});

describe('the @ query', () => {
  test('is the @ word ending at the cursor', () => {
    assert.equal(atWord([text('hello @')], 7)?.query, '');
    assert.equal(atWord([text('mail a@b')], 8), null);
    assert.equal(atWord([text('@Exp more')], 4)?.query, 'Exp');
    assert.equal(atWord([agent('X'), text('@pl')], 4)?.query, 'pl');
    assert.equal(atWord([text('done')], 4), null);
  });

  test('the server gets the serialised text and a UTF-16 cursor', () => {
    const segs = [agent('Explore'), text(' 😀 @fi')];
    assert.deepEqual(toServerText(segs, unitLength(segs)), { text: '[@agent:Explore] 😀 @fi', cursor: 23 });
  });
});
