/** A few inline SVG icons (no icon font: nothing to load). */

import type { JSX } from 'preact';

const paths: Record<string, string> = {
  send: 'M1.5 1.9 14.6 7.4c.5.2.5.9 0 1.1L1.5 14.1c-.5.2-1-.2-.9-.7L1.6 9 8.5 8 1.6 7 .6 2.6c-.1-.5.4-.9.9-.7z',
  stop: 'M3 3h10v10H3z',
  plus: 'M7.25 2h1.5v5.25H14v1.5H8.75V14h-1.5V8.75H2v-1.5h5.25z',
  history: 'M8 1.5a6.5 6.5 0 1 1-6.2 8.4l1.4-.4A5 5 0 1 0 4.1 4.6L5.6 6H1.5V1.9l1.5 1.5A6.5 6.5 0 0 1 8 1.5zm-.75 3h1.5v3.2l2.3 1.4-.8 1.3-3-1.8z',
  close: 'M4.1 3 8 6.9 11.9 3 13 4.1 9.1 8l3.9 3.9-1.1 1.1L8 9.1 4.1 13 3 11.9 6.9 8 3 4.1z',
  chevron: 'M6 3.5 10.5 8 6 12.5l-1-1L8.5 8 5 4.5z',
  check: 'M6.3 11.6 2.7 8l1.1-1.1 2.5 2.5 5.9-5.9 1.1 1.1z',
  error: 'M8 1.5a6.5 6.5 0 1 1 0 13 6.5 6.5 0 0 1 0-13zm2.5 3L8 7 5.5 4.5l-1 1L7 8l-2.5 2.5 1 1L8 9l2.5 2.5 1-1L9 8l2.5-2.5z',
  agent: 'M8 1a2 2 0 0 1 1 3.7V6h3a2 2 0 0 1 2 2v5a2 2 0 0 1-2 2H4a2 2 0 0 1-2-2V8a2 2 0 0 1 2-2h3V4.7A2 2 0 0 1 8 1zM5.5 9a1 1 0 1 0 0 2 1 1 0 0 0 0-2zm5 0a1 1 0 1 0 0 2 1 1 0 0 0 0-2z',
  tool: 'M10.5 1.5a4 4 0 0 0-3.8 5.2L1.5 11.9V14.5h2.6l5.2-5.2a4 4 0 0 0 5.2-3.8l-.1-.9-2.1 2.1-2.1-.7-.7-2.1 2.1-2.1z',
  branch: 'M5 2a2 2 0 0 1 .75 3.85v4.3A2 2 0 1 1 4.25 10.15v-4.3A2 2 0 0 1 5 2zm6 0a2 2 0 0 1 .75 3.85c-.1 2.2-1.9 3.6-4.5 3.9l-.2-1.5c1.9-.2 3-1 3.2-2.4A2 2 0 0 1 11 2z',
  shield: 'M8 1 14 3.5V7c0 3.7-2.6 6.7-6 8-3.4-1.3-6-4.3-6-8V3.5z',
  diff: 'M4 2h1.5v2.5H8V6H5.5v2.5H4V6H1.5V4.5H4zM1.5 11h6v1.5h-6zM10 2h4.5v12H9v-1.5h4v-9h-3z',
  file: 'M3 1.5h6.5L13 5v9.5H3zm1.5 1.5v10h7V6H8.5V3z',
  gear: 'M8 5.5a2.5 2.5 0 1 0 0 5 2.5 2.5 0 0 0 0-5zM7 1h2l.4 1.9 1.3.6 1.7-1 1.4 1.4-1 1.7.6 1.3L15 7v2l-1.9.4-.6 1.3 1 1.7-1.4 1.4-1.7-1-1.3.6L9 15H7l-.4-1.9-1.3-.6-1.7 1-1.4-1.4 1-1.7-.6-1.3L1 9V7l1.9-.4.6-1.3-1-1.7 1.4-1.4 1.7 1 1.3-.6z',
};

export function Icon({ name, title, class: cls }: { name: keyof typeof paths | string; title?: string; class?: string }): JSX.Element {
  return (
    <svg class={`icon ${cls ?? ''}`} viewBox="0 0 16 16" width="16" height="16" aria-hidden={title ? undefined : 'true'} role={title ? 'img' : undefined}>
      {title ? <title>{title}</title> : null}
      <path d={paths[name] ?? ''} fill="currentColor" fill-rule="evenodd" />
    </svg>
  );
}

export function Spinner(): JSX.Element {
  return <span class="spinner" aria-label="running" />;
}
