/**
 * Settings (`wave.*`) and the API key in VS Code's SecretStorage (never in settings.json),
 * and `Wave: Configure Model`, which sets all three.
 */

import * as os from 'os';
import * as vscode from 'vscode';
import type { PermissionMode } from '../shared/wire';
import { PERMISSION_MODES } from '../shared/wire';

export const API_KEY_SECRET = 'wave.apiKey';

export interface WaveSettings {
  serverPath: string;
  serverArgs: string[];
  model: string;
  baseUrl: string;
  permissionMode: PermissionMode;
}

export function expandHome(p: string): string {
  return p === '~' || p.startsWith('~/') ? os.homedir() + p.slice(1) : p;
}

export function readSettings(): WaveSettings {
  const c = vscode.workspace.getConfiguration('wave');
  const mode = c.get<string>('permissionMode', 'default');
  return {
    serverPath: expandHome(c.get<string>('server.path', '').trim()),
    serverArgs: c.get<string[]>('server.args', []).filter((a) => typeof a === 'string'),
    model: c.get<string>('model', '').trim(),
    baseUrl: c.get<string>('baseUrl', '').trim(),
    permissionMode: (PERMISSION_MODES as readonly string[]).includes(mode) ? (mode as PermissionMode) : 'default',
  };
}

/** `initializationOptions` for wave-ls: only what is set, so the server's environment fills the rest. */
export async function initializationOptions(secrets: vscode.SecretStorage): Promise<Record<string, string>> {
  const s = readSettings();
  const options: Record<string, string> = { permissionMode: s.permissionMode };
  if (s.model) options.model = s.model;
  if (s.baseUrl) options.baseUrl = s.baseUrl;
  const apiKey = await secrets.get(API_KEY_SECRET);
  if (apiKey) options.apiKey = apiKey;
  return options;
}

/** Asks for the endpoint, the model and the key; true when something changed. */
export async function configureModel(secrets: vscode.SecretStorage): Promise<boolean> {
  const current = readSettings();
  const baseUrl = await vscode.window.showInputBox({
    title: 'Wave: Configure Model (1/3)',
    prompt: 'The OpenAI-compatible endpoint (Chat Completions), e.g. https://api.openai.com/v1 or http://localhost:11434/v1',
    value: current.baseUrl || process.env.OPENAI_BASE_URL || '',
    ignoreFocusOut: true,
    validateInput: (v) => (!v.trim() || /^https?:\/\/\S+$/.test(v.trim()) ? undefined : 'An http:// or https:// address'),
  });
  if (baseUrl === undefined) return false;
  const model = await vscode.window.showInputBox({
    title: 'Wave: Configure Model (2/3)',
    prompt: 'The model id, e.g. gpt-4.1 or qwen2.5-coder:14b',
    value: current.model || process.env.WAVE_MODEL || '',
    ignoreFocusOut: true,
  });
  if (model === undefined) return false;
  const hasKey = Boolean(await secrets.get(API_KEY_SECRET));
  const apiKey = await vscode.window.showInputBox({
    title: 'Wave: Configure Model (3/3)',
    prompt: hasKey
      ? 'The API key (kept in VS Code\'s secret storage). Leave empty to keep the stored key; type "-" to remove it.'
      : 'The API key (kept in VS Code\'s secret storage, never in settings). Leave empty if the endpoint needs none.',
    password: true,
    ignoreFocusOut: true,
  });
  if (apiKey === undefined) return false;
  const config = vscode.workspace.getConfiguration('wave');
  await config.update('baseUrl', baseUrl.trim(), vscode.ConfigurationTarget.Global);
  await config.update('model', model.trim(), vscode.ConfigurationTarget.Global);
  if (apiKey.trim() === '-') await secrets.delete(API_KEY_SECRET);
  else if (apiKey.trim()) await secrets.store(API_KEY_SECRET, apiKey.trim());
  return true;
}
