/**
 * Message text -> HTML strings for the chat view.
 *
 * Assistant text is Markdown rendered by markdown-it with raw HTML off (every `<` the model
 * writes comes out as `&lt;`), links limited to http(s)/mailto/relative paths (opened by the
 * extension host, never by the webview), images shown as links (no remote resources), and
 * code blocks highlighted by highlight.js (class names only: colours come from the theme).
 * User text is plain text whose mention tags become chips (SPEC MENTION-7).
 */

import MarkdownIt from 'markdown-it';
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import c from 'highlight.js/lib/languages/c';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import java from 'highlight.js/lib/languages/java';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import markdown from 'highlight.js/lib/languages/markdown';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';
import { agentColorCss, agentColors } from '../shared/agentStyle';
import { parseTags, tagLabel } from '../shared/tags';

const LANGUAGES = { bash, c, diff, go, java, javascript, json, markdown, python, rust, typescript, xml, yaml };
for (const [name, language] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, language);
hljs.registerAliases(['sh', 'shell', 'zsh', 'console'], { languageName: 'bash' });
hljs.registerAliases(['py'], { languageName: 'python' });
hljs.registerAliases(['js', 'jsx', 'mjs'], { languageName: 'javascript' });
hljs.registerAliases(['ts', 'tsx'], { languageName: 'typescript' });
hljs.registerAliases(['html', 'svg'], { languageName: 'xml' });
hljs.registerAliases(['yml'], { languageName: 'yaml' });
hljs.registerAliases(['md'], { languageName: 'markdown' });
hljs.registerAliases(['cpp', 'cc', 'h', 'hpp'], { languageName: 'c' });
hljs.registerAliases(['patch'], { languageName: 'diff' });

export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch] as string);
}

const SAFE_LINK = /^(https?:|mailto:|#)/i;
const ANY_SCHEME = /^[a-z][a-z0-9+.-]*:/i;

/** Links the extension host may open: web and mail links, and paths in the workspace. */
export function isSafeLink(href: string): boolean {
  const url = href.trim();
  if (SAFE_LINK.test(url)) return true;
  return !ANY_SCHEME.test(url) && !url.startsWith('//');
}

export function highlight(code: string, lang: string): string {
  const language = lang && hljs.getLanguage(lang) ? lang : '';
  if (!language) return escapeHtml(code);
  try {
    return hljs.highlight(code, { language, ignoreIllegals: true }).value;
  } catch {
    return escapeHtml(code);
  }
}

const md = new MarkdownIt({ html: false, linkify: true, breaks: false, typographer: false });
md.validateLink = isSafeLink;
// Only explicit links (http://, www.): `calc.py` is a file name, not the Paraguayan domain.
md.linkify.set({ fuzzyLink: false, fuzzyEmail: false });

md.renderer.rules.fence = (tokens, idx) => {
  const token = tokens[idx];
  const lang = token.info.trim().split(/\s+/, 1)[0] ?? '';
  const label = lang ? `<span class="code-lang">${escapeHtml(lang)}</span>` : '<span class="code-lang"></span>';
  return (
    `<div class="code-block"><div class="code-head">${label}<button class="code-copy" type="button" title="Copy">Copy</button></div>` +
    `<pre><code class="hljs${lang ? ` language-${escapeHtml(lang)}` : ''}">${highlight(token.content, lang)}</code></pre></div>\n`
  );
};
md.renderer.rules.code_block = (tokens, idx) =>
  `<div class="code-block"><pre><code class="hljs">${escapeHtml(tokens[idx].content)}</code></pre></div>\n`;
// An image would be a remote resource: show it as a link to its address.
md.renderer.rules.image = (tokens, idx) => {
  const token = tokens[idx];
  const src = token.attrGet('src') ?? '';
  const alt = token.content || src;
  return isSafeLink(src) ? `<a href="${escapeHtml(src)}">${escapeHtml(alt)}</a>` : escapeHtml(alt);
};
const defaultLinkOpen = md.renderer.rules.link_open ?? ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));
md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  tokens[idx].attrSet('title', tokens[idx].attrGet('href') ?? '');
  return defaultLinkOpen(tokens, idx, options, env, self);
};

/** Assistant Markdown as sanitised HTML. */
export function renderMarkdown(text: string): string {
  return md.render(text);
}

/** A chip as HTML (the same look as the input's chips). */
export function chipHtml(kind: 'agent' | 'file', value: string): string {
  // The colour is one of ours (a var() or a checked #hex), never text from the message.
  const color = kind === 'agent' ? agentColorCss(agentColors.get(value)) : undefined;
  const colored = color ? ` chip-colored" style="--agent-color: ${color}` : '';
  return `<span class="chip chip-${kind}${colored}" title="${escapeHtml(kind === 'agent' ? `Subagent ${value}` : value)}">${escapeHtml(
    tagLabel({ kind, value }),
  )}</span>`;
}

/** A user message: plain text (newlines kept), its mention tags as chips. */
export function renderUserText(text: string): string {
  return parseTags(text)
    .map((s) => (s.type === 'text' ? escapeHtml(s.text) : chipHtml(s.kind, s.value)))
    .join('');
}
