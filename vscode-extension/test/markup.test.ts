// The message markup renderer: Markdown that never runs what the model writes.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isSafeLink, renderMarkdown, renderUserText } from '../src/webview/markup';

describe('assistant Markdown', () => {
  test('renders the usual Markdown', () => {
    const html = renderMarkdown('# Title\n\n**bold** and `code`\n\n- one\n- two\n');
    assert.match(html, /<h1>Title<\/h1>/);
    assert.match(html, /<strong>bold<\/strong>/);
    assert.match(html, /<code>code<\/code>/);
    assert.match(html, /<li>one<\/li>/);
  });

  test('raw HTML and scripts come out as text', () => {
    const html = renderMarkdown('<script>alert(1)</script>\n\n<img src=x onerror=alert(1)> <b>hi</b>');
    assert.doesNotMatch(html, /<script|<img|<b>/);
    assert.match(html, /&lt;script&gt;alert\(1\)&lt;\/script&gt;/);
  });

  test('javascript: and data: links are not links', () => {
    const html = renderMarkdown('[x](javascript:alert(1)) [y](data:text/html,hi) [z](vbscript:1)');
    assert.doesNotMatch(html, /href="(javascript|data|vbscript):/);
    assert.doesNotMatch(html, /<a /);
  });

  test('web and relative links stay (the host opens them)', () => {
    const html = renderMarkdown('[docs](https://example.com/a) and [file](src/app.py#L3)');
    assert.match(html, /<a href="https:\/\/example.com\/a"/);
    assert.match(html, /<a href="src\/app.py#L3"/);
    assert.ok(isSafeLink('mailto:a@b.c'));
    assert.ok(!isSafeLink('command:workbench.action.quit'));
    assert.ok(!isSafeLink('//evil.example/x'));
  });

  test('images are never loaded: they become links', () => {
    const html = renderMarkdown('![logo](https://example.com/logo.png)');
    assert.doesNotMatch(html, /<img/);
    assert.match(html, /<a href="https:\/\/example.com\/logo.png">logo<\/a>/);
  });

  test('fenced code is highlighted with classes only, and escaped', () => {
    const html = renderMarkdown('```python\ndef f(x):\n    return "<b>" + x\n```');
    assert.match(html, /class="hljs language-python"/);
    assert.match(html, /<span class="hljs-keyword">def<\/span>/);
    assert.match(html, /&lt;b&gt;/);
    assert.doesNotMatch(html, /style=/);
    const unknown = renderMarkdown('```nosuchlang\n<i>x</i>\n```');
    assert.match(unknown, /&lt;i&gt;x&lt;\/i&gt;/);
  });

  test('character references decode, unknown names stay text', () => {
    const html = renderMarkdown('a &amp; b &rarr; c &#x263A; &bogus;');
    assert.match(html, /a &amp; b → c ☺ &amp;bogus;/);
  });
});

describe('user text', () => {
  test('tags become chips, the rest is escaped plain text (MENTION-7)', () => {
    const html = renderUserText('[@agent:Explore] find <tests>\nin [@file:src/a.py]');
    assert.match(html, /^<span class="chip chip-agent" title="Subagent Explore">@Explore<\/span> find &lt;tests&gt;\nin /);
    assert.match(html, /<span class="chip chip-file" title="src\/a.py">a.py<\/span>$/);
  });

  test('a user message is not Markdown', () => {
    assert.equal(renderUserText('**not bold**'), '**not bold**');
  });
});
