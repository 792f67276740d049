/**
 * A small stand-in for the `entities` package, which markdown-it uses to decode character
 * references. Its full table of 2,000+ names is three quarters of a 100 KB bundle; model
 * answers use a handful of names. Numeric references are all decoded; an unknown name stays
 * as written (shown as text, never as markup). Aliased in scripts/build.mjs.
 */

const NAMED: Record<string, string> = {
  amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: '\u00a0', copy: '©', reg: '®', trade: '™',
  hellip: '…', mdash: '—', ndash: '–', lsquo: '‘', rsquo: '’', ldquo: '“', rdquo: '”', laquo: '«', raquo: '»',
  times: '×', divide: '÷', plusmn: '±', minus: '−', le: '≤', ge: '≥', ne: '≠', asymp: '≈', infin: '∞',
  larr: '←', rarr: '→', uarr: '↑', darr: '↓', harr: '↔', lArr: '⇐', rArr: '⇒', hArr: '⇔',
  bull: '•', middot: '·', deg: '°', sect: '§', para: '¶', dagger: '†', euro: '€', pound: '£', yen: '¥', cent: '¢',
  check: '✓', cross: '✗', star: '☆', starf: '★', alpha: 'α', beta: 'β', gamma: 'γ', delta: 'δ', lambda: 'λ', mu: 'μ', pi: 'π', sigma: 'σ',
  shy: '\u00ad', zwj: '\u200d', zwnj: '\u200c', ensp: '\u2002', emsp: '\u2003', thinsp: '\u2009', Tab: '\t', NewLine: '\n',
};

function decodeOne(entity: string, strict: boolean): string {
  const body = entity.slice(1, entity.endsWith(';') ? -1 : undefined);
  if (strict && !entity.endsWith(';')) return entity;
  if (body[0] === '#') {
    const code = body[1] === 'x' || body[1] === 'X' ? parseInt(body.slice(2), 16) : parseInt(body.slice(1), 10);
    if (!Number.isFinite(code) || code <= 0 || code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return '\ufffd';
    return String.fromCodePoint(code);
  }
  return NAMED[body] ?? entity;
}

const ENTITY = /&(?:#[xX][0-9a-fA-F]{1,6};?|#[0-9]{1,7};?|[A-Za-z][A-Za-z0-9]{1,31};?)/g;

export function decodeHTML(text: string): string {
  return text.replace(ENTITY, (e) => decodeOne(e, false));
}

export function decodeHTMLStrict(text: string): string {
  return text.replace(ENTITY, (e) => decodeOne(e, true));
}
