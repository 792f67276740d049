// An agent's colour (frontmatter `color`) and its delegation block's notes (issue 24).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AGENT_COLORS, AgentColors, agentColorCss, agentColors, agentNotes } from '../src/shared/agentStyle';
import { initialChat, reduce, type ChatAction, type ToolItem } from '../src/shared/reducer';
import { renderUserText } from '../src/webview/markup';

describe('colour', () => {
  test("each of Claude Code's colours is a theme colour", () => {
    const names = ['red', 'blue', 'green', 'yellow', 'purple', 'orange', 'pink', 'cyan'];
    assert.deepEqual(Object.keys(AGENT_COLORS), names);
    assert.equal(agentColorCss('red'), 'var(--vscode-charts-red)');
    assert.equal(agentColorCss(' Cyan '), 'var(--vscode-terminal-ansiCyan)');
    assert.equal(agentColorCss('pink'), 'var(--vscode-terminal-ansiMagenta)');
    for (const name of names) assert.match(agentColorCss(name) ?? '', /^var\(--vscode-[A-Za-z-]+\)$/);
  });

  test('anything else is no colour (never CSS from a file)', () => {
    assert.equal(agentColorCss('#1e90ff'), '#1e90ff');
    for (const bad of ['chartreuse', 'red; background: url(x)', '', undefined, 3, '#12345']) {
      assert.equal(agentColorCss(bad), undefined, String(bad));
    }
  });

  test('completion items teach the chips their colour', () => {
    const colors = new AgentColors();
    colors.learn([
      { label: 'painter', kind: 7, insertText: '[@agent:painter]', data: { color: 'cyan' } },
      { label: 'Python Expert', kind: 7, insertText: '[@agent:Python-Expert]', data: { color: 'red' } },
      { label: 'plain', kind: 7, insertText: '[@agent:plain]' },
      { label: 'a.txt', kind: 17, insertText: '[@file:a.txt]', data: { color: 'blue' } },
    ]);
    assert.equal(colors.get('painter'), 'cyan');
    assert.equal(colors.get('Python-Expert'), 'red'); // by the form the chip holds
    assert.equal(colors.get('plain'), undefined);
    assert.equal(colors.get('a.txt'), undefined);
    colors.learn([{ label: 'painter', kind: 7, insertText: '[@agent:painter]' }]);
    assert.equal(colors.get('painter'), undefined); // the colour was removed from the file
  });

  test("a sent message's chip shows the agent's colour", () => {
    agentColors.learn([{ label: 'painter', kind: 7, insertText: '[@agent:painter]', data: { color: 'green' } }]);
    const html = renderUserText('ask [@agent:painter] and [@agent:other]');
    assert.match(html, /class="chip chip-agent chip-colored" style="--agent-color: var\(--vscode-charts-green\)"/);
    assert.match(html, /<span class="chip chip-agent" title="Subagent other">@other<\/span>/);
  });
});

describe('delegation block notes', () => {
  test('the turn limit and the model note', () => {
    assert.deepEqual(agentNotes(undefined), []);
    assert.deepEqual(agentNotes({ maxTurnsReached: false }), []);
    assert.deepEqual(agentNotes({ maxTurnsReached: true, modelNote: 'sonnet -> inherit: no model set for this tier' }), [
      'hit its turn limit',
      'sonnet -> inherit: no model set for this tier',
    ]);
  });

  test('the details of later updates keep the colour and add the notes', () => {
    const up = (details: Record<string, unknown>, status: 'running' | 'completed'): ChatAction => ({
      type: 'update',
      update: { sessionId: 's', kind: 'toolBlock', toolCallId: 'c1', name: 'Agent', arguments: '{}', status, details },
    });
    const s = [up({ subagentType: 'painter', color: 'cyan' }, 'running'), up({ maxTurnsReached: true, modelNote: 'opus -> big (env: WAVE_MODEL_OPUS)' }, 'completed')].reduce(
      reduce,
      initialChat('s'),
    );
    const block = s.items[0] as ToolItem;
    assert.equal(agentColorCss(block.details?.color), 'var(--vscode-terminal-ansiCyan)');
    assert.deepEqual(agentNotes(block.details), ['hit its turn limit', 'opus -> big (env: WAVE_MODEL_OPUS)']);
  });
});
