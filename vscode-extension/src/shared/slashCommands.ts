/**
 * Commands the chat input handles itself instead of sending them to the model: today only
 * `/compact [instructions]` (`wave/session/compact`). Pure, so it is tested without VS Code.
 */

export type SlashCommand = { name: 'compact'; instructions?: string };

/** `/compact`, `/compact keep the test plan` -> the command; anything else -> null. */
export function parseSlashCommand(text: string): SlashCommand | null {
  const match = /^\/compact(?:\s+([\s\S]*))?$/.exec(text.trim());
  if (!match) return null;
  const instructions = (match[1] ?? '').trim();
  return instructions ? { name: 'compact', instructions } : { name: 'compact' };
}

/** What the chat says when `wave/session/compact` refused or failed (the server's text). */
export function compactErrorText(message: string): string {
  const reason = message.replace(/^wave\/session\/compact:\s*/, '').trim();
  return `Not compacted: ${reason || 'the server refused.'}`;
}
