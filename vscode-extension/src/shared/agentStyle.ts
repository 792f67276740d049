/**
 * How a subagent looks in the chat: its frontmatter `color` as a theme colour, and the
 * notes of its delegation block (it hit its `maxTurns`; what its model tier became).
 *
 * `color` comes with `wave/agents/list` items, `@` completion items (`data.color`) and an
 * Agent block's details (`color`, `maxTurnsReached`, `modelNote`). Claude Code's colours map
 * to the theme's chart colours (pink and cyan to the terminal's magenta and cyan, which
 * every theme defines), so they follow light, dark and high-contrast themes.
 */

import type { AgentDetails, CompletionItem } from './wire';

export const AGENT_COLORS: Readonly<Record<string, string>> = {
  red: '--vscode-charts-red',
  blue: '--vscode-charts-blue',
  green: '--vscode-charts-green',
  yellow: '--vscode-charts-yellow',
  purple: '--vscode-charts-purple',
  orange: '--vscode-charts-orange',
  pink: '--vscode-terminal-ansiMagenta',
  cyan: '--vscode-terminal-ansiCyan',
};

const HEX = /^#(?:[0-9a-f]{3}|[0-9a-f]{6})$/i;

/** The CSS colour of an agent's `color` (`var(--vscode-charts-red)`), or undefined. */
export function agentColorCss(color: unknown): string | undefined {
  if (typeof color !== 'string') return undefined;
  const name = color.trim().toLowerCase();
  const variable = AGENT_COLORS[name];
  if (variable) return `var(${variable})`;
  return HEX.test(name) ? name : undefined;
}

/** What the block's detail line adds: the turn limit, and what a model tier became. */
export function agentNotes(details: AgentDetails | undefined): string[] {
  const notes: string[] = [];
  if (details?.maxTurnsReached === true) notes.push('hit its turn limit');
  if (typeof details?.modelNote === 'string' && details.modelNote.trim()) notes.push(details.modelNote.trim());
  return notes;
}

/** Agent name -> its colour, as the last completion answers said (for the input's chips). */
export class AgentColors {
  private readonly byName = new Map<string, string>();

  /** Remembers the colours of the agent items (kind 7, `[@agent:...]`) of a completion. */
  learn(items: readonly CompletionItem[]): void {
    for (const item of items) {
      const name = /^\[@agent:(.*)\]$/s.exec(item.insertText ?? '')?.[1];
      if (!name) continue;
      const color = item.data?.color;
      if (typeof color === 'string' && color) this.byName.set(name, color);
      else this.byName.delete(name);
    }
  }

  /** The colour of the agent a chip names (its mention form), if known. */
  get(name: string): string | undefined {
    return this.byName.get(name);
  }
}

/** The colours the webview's chips use (one webview, one map). */
export const agentColors = new AgentColors();
