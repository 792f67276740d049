// The MCP Servers view's model (issue 26): how each status looks, tool names, mcpStatus
// merged into a list, which servers the window asks about, what .mcp.json says they run.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApprovalPrompts, approvalQuestion, heldBack, markdownText, serverLook, toolShortName, withStatus } from '../src/host/mcpModel';
import type { McpServerInfo } from '../src/shared/wire';
import { toolLabel } from '../src/webview/toolSummary';

const server = (over: Partial<McpServerInfo> = {}): McpServerInfo => ({
  name: 'srv',
  scope: 'project',
  transport: 'stdio',
  status: 'connected',
  tools: ['mcp__srv__echo', 'mcp__srv__peek'],
  ...over,
});

test('each status has its icon, description and menu', () => {
  const looks = (['starting', 'connected', 'failed', 'needs-approval', 'disabled', 'stopped'] as const).map((status) => {
    const look = serverLook(server({ status, error: status === 'failed' ? 'exited with 1\nTraceback…' : undefined }));
    return [status, look.icon, look.description, look.contextValue];
  });
  assert.deepEqual(looks, [
    ['starting', 'loading~spin', 'starting…', 'mcpServer.on'],
    ['connected', 'pass', 'connected · 2 tools', 'mcpServer.on'],
    ['failed', 'error', 'failed: exited with 1', 'mcpServer.failed'],
    ['needs-approval', 'shield', 'needs approval', 'mcpServer.needsApproval'],
    ['disabled', 'circle-slash', 'disabled', 'mcpServer.disabled'],
    ['stopped', 'circle-outline', 'not running · starts with a chat', 'mcpServer.on'],
  ]);
  assert.equal(serverLook(server({ tools: ['mcp__srv__echo'] })).description, 'connected · 1 tool');
  assert.equal(serverLook(server({ status: 'failed' })).description, 'failed: no reason given');
});

test('a server held back by workspace trust says so and offers no Enable (it would not start)', () => {
  const held = server({ status: 'disabled', error: 'held back: /p/.mcp.json comes with the repository and this folder is not trusted' });
  assert.ok(heldBack(held));
  const look = serverLook(held);
  assert.equal(look.contextValue, 'mcpServer.heldBack');
  assert.match(look.description, /not trusted/);
  assert.ok(!heldBack(server({ status: 'disabled', error: 'turned off by the user (wave/mcp/approve)' })));
});

test('the tooltip names where it comes from, what it runs and the whole error', () => {
  const look = serverLook(server({ status: 'failed', error: 'line one\nline two' }), 'python server.py');
  const text = look.tooltip.join('\n');
  assert.match(text, /\*\*srv\*\* · stdio · from the project's \.mcp\.json/);
  assert.match(text, /Runs: python server\\\.py/);
  assert.match(text, /line one\nline two/);
  assert.match(serverLook(server({ status: 'needs-approval' })).tooltip.join('\n'), /approve or deny/);
});

test('tool names lose their mcp__<server>__ prefix (the server name with Claude Code rule)', () => {
  assert.equal(toolShortName('srv', 'mcp__srv__echo'), 'echo');
  assert.equal(toolShortName('my.server', 'mcp__my_server__read_file'), 'read_file');
  assert.equal(toolShortName('srv', 'ListMcpResources'), 'ListMcpResources');
});

test('an mcpStatus update replaces its row (or adds it) and keeps the order', () => {
  const list = [server({ name: 'a' }), server({ name: 'srv', status: 'starting', tools: [] })];
  const update = { ...server({ status: 'failed', error: 'boom', tools: [] }), sessionId: 's1', kind: 'mcpStatus' } as McpServerInfo;
  const merged = withStatus(list, update);
  assert.deepEqual(merged.map((s) => [s.name, s.status]), [['a', 'connected'], ['srv', 'failed']]);
  assert.deepEqual(Object.keys(merged[1]).sort(), ['error', 'name', 'scope', 'status', 'tools', 'transport'], 'no session fields kept');
  assert.deepEqual(withStatus([], server({ name: 'new' })).map((s) => s.name), ['new']);
});

test('the window asks about each waiting project server once, whatever the answer', () => {
  const prompts = new ApprovalPrompts();
  const waiting = [server({ name: 'one', status: 'needs-approval' }), server({ name: 'two', status: 'connected' })];
  assert.deepEqual(prompts.take('/p', waiting).map((s) => s.name), ['one']);
  assert.deepEqual(prompts.take('/p', waiting), [], 'not asked again in this window');
  assert.deepEqual(prompts.take('/q', waiting).map((s) => s.name), ['one'], 'another folder is asked about on its own');
});

test('the prompt names what the server runs (the server says it: wave/mcp/list command)', () => {
  const question = approvalQuestion('calc', server({ status: 'needs-approval' }), 'python tools/server.py --quiet');
  assert.equal(question, `Wave: calc's .mcp.json defines the MCP server "srv": python tools/server.py --quiet. Start it? It runs as you, outside the sandbox.`);
  assert.match(approvalQuestion('calc', server()), /"srv" \(stdio\)\. Start it\?/);
});

test('the chat names an MCP tool by its server and tool', () => {
  assert.equal(toolLabel('mcp__calc-tools__peek'), 'calc-tools · peek');
  assert.equal(toolLabel('mcp__srv__read__file'), 'srv · read__file');
  assert.equal(toolLabel('Read'), 'Read');
});

test('what a repository writes makes no link: not in the tooltip, not in the notification', () => {
  const name = 'x](command:workbench.action.terminal.sendSequence?%7B%7D) [Approve';
  const definition = 'sh -c "curl evil" [docs](https://evil.example) ![i](https://evil.example/p.png)';
  const question = approvalQuestion('calc', server({ name, status: 'needs-approval' }), definition);
  assert.doesNotMatch(question, /\]\s*\(/, 'no "](" left for VS Code to link');
  assert.match(question, /command:workbench/, 'the text itself is still shown');
  const tooltip = serverLook(server({ name, error: '**bold** <b>x</b>' }), definition).tooltip.join('\n');
  assert.doesNotMatch(tooltip, /[^\\]\[|[^\\]\]\(|[^\\]!\[|[^\\]\*\*bold/);
  assert.equal(markdownText('a_b*c[d](e)'), 'a\\_b\\*c\\[d\\]\\(e\\)');
});
