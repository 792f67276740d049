/**
 * VS Code's workspace trust, passed to wave-ls: when the window is trusted, each workspace
 * folder is trusted on the server too (`wave/workspace/trust {cwd, trusted: true}`), so
 * what its repository ships (hooks, sandbox settings, permission rules, MCP servers)
 * applies. Sent before the server takes its first request, again when the user grants
 * trust (`onDidGrantWorkspaceTrust`) and for folders added later. In Restricted Mode
 * nothing is sent for a folder the extension never trusted: the server holds those settings
 * back and the chat says which. A folder this extension trusted before whose window is no
 * longer trusted (the user took VS Code's trust back) is untrusted on the server as well.
 *
 * No `vscode` import here (the caller passes what VS Code says), so it is unit tested.
 */

export interface TrustSyncInput {
  /** `vscode.workspace.isTrusted` */
  trusted: boolean;
  /** The workspace folders on disk (`file:` URIs' paths). */
  folders: string[];
  /** Folders this extension trusted on the server before (kept in its global state). */
  trustedBefore: readonly string[];
  send: (method: string, params: { cwd: string; trusted: boolean }) => Promise<unknown>;
  log: (line: string) => void;
}

export const TRUST_METHOD = 'wave/workspace/trust';

/** Passes VS Code's trust of each folder on; the folders this extension now vouches for. */
export async function syncTrust(input: TrustSyncInput): Promise<string[]> {
  const before = new Set(input.trustedBefore);
  const targets = input.trusted ? input.folders : input.folders.filter((f) => before.has(f));
  for (const cwd of targets) {
    try {
      await input.send(TRUST_METHOD, { cwd, trusted: input.trusted });
      if (input.trusted) before.add(cwd);
      else before.delete(cwd);
    } catch (e) {
      // One folder the server refuses (gone, or an older server) must not stop the others.
      input.log(`[wave] ${TRUST_METHOD} ${cwd}: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  return [...before];
}
