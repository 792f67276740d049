/**
 * `wave/editor/lsp`: the agent's `LSP` tool asks the editor, which holds the project's
 * language servers. Each operation runs VS Code's own provider command; the answer is the
 * plain LSP JSON of that operation (positions are UTF-16, as VS Code's).
 */

import * as vscode from 'vscode';

interface LspPosition { line: number; character: number }
interface EditorLspParams {
  operation: string;
  params: { textDocument?: { uri: string }; position?: LspPosition; query?: string };
}

const range = (r: vscode.Range) => ({
  start: { line: r.start.line, character: r.start.character },
  end: { line: r.end.line, character: r.end.character },
});
const location = (l: vscode.Location | vscode.LocationLink) =>
  'targetUri' in l ? { uri: l.targetUri.toString(), range: range(l.targetSelectionRange ?? l.targetRange) } : { uri: l.uri.toString(), range: range(l.range) };

function documentSymbol(s: vscode.DocumentSymbol): unknown {
  return { name: s.name, detail: s.detail, kind: s.kind + 1, range: range(s.range), selectionRange: range(s.selectionRange), children: s.children.map(documentSymbol) };
}

function symbolInformation(s: vscode.SymbolInformation): unknown {
  return { name: s.name, kind: s.kind + 1, containerName: s.containerName, location: location(s.location) };
}

function hoverText(c: vscode.MarkdownString | vscode.MarkedString): string {
  if (typeof c === 'string') return c;
  if ('language' in c) return '```' + c.language + '\n' + c.value + '\n```';
  return c.value;
}

export async function editorLsp(raw: unknown): Promise<unknown> {
  const { operation, params } = raw as EditorLspParams;
  const uri = params?.textDocument ? vscode.Uri.parse(params.textDocument.uri) : undefined;
  const pos = params?.position ? new vscode.Position(params.position.line, params.position.character) : undefined;
  switch (operation) {
    case 'goToDefinition': {
      const found = await vscode.commands.executeCommand<(vscode.Location | vscode.LocationLink)[]>('vscode.executeDefinitionProvider', uri, pos);
      return (found ?? []).map(location);
    }
    case 'findReferences': {
      const found = await vscode.commands.executeCommand<vscode.Location[]>('vscode.executeReferenceProvider', uri, pos);
      return (found ?? []).map(location);
    }
    case 'hover': {
      const hovers = await vscode.commands.executeCommand<vscode.Hover[]>('vscode.executeHoverProvider', uri, pos);
      if (!hovers?.length) return null;
      const value = hovers.flatMap((h) => h.contents.map(hoverText)).join('\n\n---\n\n');
      return { contents: { kind: 'markdown', value }, ...(hovers[0].range ? { range: range(hovers[0].range) } : {}) };
    }
    case 'documentSymbol': {
      const found = await vscode.commands.executeCommand<(vscode.DocumentSymbol | vscode.SymbolInformation)[]>('vscode.executeDocumentSymbolProvider', uri);
      return (found ?? []).map((s) => ('children' in s ? documentSymbol(s) : symbolInformation(s)));
    }
    case 'workspaceSymbol': {
      const found = await vscode.commands.executeCommand<vscode.SymbolInformation[]>('vscode.executeWorkspaceSymbolProvider', params?.query ?? '');
      return (found ?? []).map(symbolInformation);
    }
    default:
      throw new Error(`unknown operation ${operation}`);
  }
}
