/** `Wave: New Subagent`: writes `.wave/agents/<name>.md` from a template and opens it. */

import * as vscode from 'vscode';
import { isTaggableName } from '../shared/tags';
import { pickFolder } from './chatController';

export function subagentTemplate(name: string): string {
  return `---
name: ${name}
description: Use PROACTIVELY when <say when the main agent should delegate to ${name}>.
tools: Read, Grep, Glob, Bash
model: inherit
---
You are ${name}. <Describe the job, how to do it well, and what to report back.>

Keep your final answer short: the main agent reads it, not the user.
`;
}

export async function newSubagent(): Promise<void> {
  const folder = await pickFolder();
  if (!folder) {
    void vscode.window.showErrorMessage('Wave: open a folder first; subagents live in its .wave/agents/.');
    return;
  }
  const name = await vscode.window.showInputBox({
    title: 'Wave: New Subagent',
    prompt: 'Its name (letters, digits, "-", "_"; used as @name and subagent_type)',
    placeHolder: 'test-runner',
    validateInput: (v) => (isTaggableName(v.trim()) && !v.includes(':') ? undefined : 'Start with a letter; then letters, digits, "-" or "_"'),
  });
  if (!name) return;
  const file = vscode.Uri.joinPath(vscode.Uri.file(folder), '.wave', 'agents', `${name.trim()}.md`);
  try {
    await vscode.workspace.fs.stat(file);
    void vscode.window.showWarningMessage(`${name} already exists; opening it.`);
  } catch {
    await vscode.workspace.fs.writeFile(file, new TextEncoder().encode(subagentTemplate(name.trim())));
  }
  const doc = await vscode.workspace.openTextDocument(file);
  const editor = await vscode.window.showTextDocument(doc);
  const line = doc.getText().split('\n').findIndex((l) => l.startsWith('description:'));
  if (line >= 0) editor.selection = new vscode.Selection(line, 13, line, doc.lineAt(line).text.length);
}
