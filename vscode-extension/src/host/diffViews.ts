/**
 * VS Code diff editors for the server's diffs: a permission prompt's `preview` (the file as
 * it is, beside what the call would make of it) and a kept worktree's changes (each file at
 * the base commit, beside the file in the worktree). The "other side" of each diff is a
 * read-only virtual document computed from the unified diff.
 */

import * as fs from 'fs';
import * as path from 'path';
import * as vscode from 'vscode';
import type { WorktreeDiff } from '../shared/wire';
import { applyHunks, parsePatch, reverseHunks, type FilePatch } from '../shared/unifiedDiff';

export const DIFF_SCHEME = 'wave-diff';

export class DiffDocuments implements vscode.TextDocumentContentProvider, vscode.Disposable {
  private readonly contents = new Map<string, string>();
  private seq = 0;
  private readonly registration = vscode.workspace.registerTextDocumentContentProvider(DIFF_SCHEME, this);

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.contents.get(uri.toString()) ?? '';
  }

  /**
   * A virtual document at `file`'s path (so it gets the right language, and a diff against
   * the real file is not taken for a rename), holding `text`; `label` says which version.
   */
  create(label: string, file: string, text: string): vscode.Uri {
    const uri = vscode.Uri.from({ scheme: DIFF_SCHEME, path: file.startsWith('/') ? file : `/${file}`, query: `${label}#${++this.seq}` });
    this.contents.set(uri.toString(), text);
    if (this.contents.size > 400) this.contents.delete(this.contents.keys().next().value as string);
    return uri;
  }

  dispose(): void {
    this.registration.dispose();
  }
}

function readText(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

async function showRawDiff(diff: string, why: string): Promise<void> {
  const doc = await vscode.workspace.openTextDocument({ language: 'diff', content: diff });
  await vscode.window.showTextDocument(doc, { preview: true });
  void vscode.window.showWarningMessage(`Showing the raw diff: ${why}`);
}

/** Opens the diff editor on a permission prompt's `preview {path, diff}`. */
export async function showPreviewDiff(docs: DiffDocuments, preview: { path: string; diff: string }): Promise<void> {
  const [patch] = parsePatch(preview.diff);
  const current = readText(preview.path);
  if (!patch) return showRawDiff(preview.diff, 'it has no hunks.');
  let proposed: string;
  try {
    proposed = applyHunks(current ?? '', patch.hunks);
  } catch (e) {
    return showRawDiff(preview.diff, `the file changed since the request (${e instanceof Error ? e.message : String(e)}).`);
  }
  const left = current === undefined ? docs.create('new file', preview.path, '') : vscode.Uri.file(preview.path);
  const right = docs.create('proposed', preview.path, proposed);
  const name = path.basename(preview.path);
  await vscode.commands.executeCommand('vscode.diff', left, right, `${name} (proposed change)`, { preview: true });
}

export interface WorktreeFileDiff {
  path: string;
  status: string;
  left: vscode.Uri;
  right: vscode.Uri;
}

function patchPath(p: FilePatch): string {
  return p.newPath ?? p.oldPath ?? '';
}

/** Each changed file of a worktree as a (base, now) pair of documents. */
export function worktreeFileDiffs(docs: DiffDocuments, worktree: string, diff: WorktreeDiff): WorktreeFileDiff[] {
  const patches = new Map(parsePatch(diff.patch).map((p) => [patchPath(p), p]));
  const short = diff.baseCommit.slice(0, 8);
  return diff.files.map((file) => {
    const abs = path.join(worktree, file.path);
    const patch = patches.get(file.path);
    const now = file.status === 'deleted' ? '' : readText(abs);
    const rightUri = file.status === 'deleted' || now === undefined ? docs.create('deleted', abs, '') : vscode.Uri.file(abs);
    let base = '';
    if (file.binary || patch?.binary) base = '(binary file)';
    else if (patch && now !== undefined) {
      try {
        base = applyHunks(now, reverseHunks(patch.hunks));
      } catch (e) {
        base = `(the base version could not be rebuilt from the diff: ${e instanceof Error ? e.message : String(e)})`;
      }
    }
    const left = docs.create(file.status === 'added' ? 'added' : short, abs, file.status === 'added' ? '' : base);
    return { path: file.path, status: file.status, left, right: rightUri };
  });
}

export async function openFileDiff(d: WorktreeFileDiff, worktreeName: string): Promise<void> {
  await vscode.commands.executeCommand('vscode.diff', d.left, d.right, `${d.path} (${worktreeName}: ${d.status})`, { preview: true });
}

/** All of a worktree's changes in one multi-file diff editor (one diff per file). */
export async function openAllDiffs(diffs: WorktreeFileDiff[], worktreeName: string): Promise<void> {
  if (!diffs.length) {
    void vscode.window.showInformationMessage(`Worktree ${worktreeName} has no changes.`);
    return;
  }
  try {
    await vscode.commands.executeCommand(
      'vscode.changes',
      `Changes in worktree ${worktreeName}`,
      diffs.map((d) => [d.right, d.left, d.right]),
    );
  } catch {
    for (const d of diffs) await openFileDiff(d, worktreeName);
  }
}
