/**
 * Where `wave-ls` is: the setting `wave.server.path`, else a workspace folder's
 * `.venv/bin/wave-ls` (only in a trusted workspace: in Restricted Mode a cloned repository
 * could ship that file), else `wave-ls` on `PATH`. Pure (the file check is passed in) so the
 * order is tested without VS Code. In Restricted Mode VS Code itself ignores a workspace's
 * `wave.server.path` (a restricted setting, see package.json).
 */

import * as path from 'path';

export interface DiscoveryInput {
  /** The setting, `~` already expanded. */
  settingPath: string;
  folders: string[];
  /** `vscode.workspace.isTrusted`; false: the folders' `.venv` is not used. */
  workspaceTrusted?: boolean;
  pathEnv: string;
  platform: NodeJS.Platform;
  isExecutable: (file: string) => boolean;
}

export type Discovery =
  | { found: true; command: string; source: 'setting' | 'venv' | 'path' }
  | { found: false; reason: string };

function executableNames(platform: NodeJS.Platform): string[] {
  return platform === 'win32' ? ['wave-ls.exe', 'wave-ls.cmd', 'wave-ls'] : ['wave-ls'];
}

export function discoverServer(input: DiscoveryInput): Discovery {
  const names = executableNames(input.platform);
  const setting = input.settingPath.trim();
  if (setting) {
    if (input.isExecutable(setting)) return { found: true, command: setting, source: 'setting' };
    return { found: false, reason: `wave.server.path is set to ${setting}, which is not an executable file.` };
  }
  const venvBin = input.platform === 'win32' ? path.join('.venv', 'Scripts') : path.join('.venv', 'bin');
  for (const folder of input.workspaceTrusted === false ? [] : input.folders) {
    for (const name of names) {
      const file = path.join(folder, venvBin, name);
      if (input.isExecutable(file)) return { found: true, command: file, source: 'venv' };
    }
  }
  const sep = input.platform === 'win32' ? ';' : ':';
  for (const dir of input.pathEnv.split(sep).filter(Boolean)) {
    for (const name of names) {
      const file = path.join(dir, name);
      if (input.isExecutable(file)) return { found: true, command: file, source: 'path' };
    }
  }
  return {
    found: false,
    reason:
      input.workspaceTrusted === false
        ? 'wave-ls was not found: not in wave.server.path, not on PATH (a workspace .venv is used only once the workspace is trusted).'
        : 'wave-ls was not found: not in wave.server.path, not in a workspace .venv, not on PATH.',
  };
}
