// Bundles the extension host (CommonJS for VS Code) and the webview (one script, one
// stylesheet), or the unit tests; prints each bundle's size. --production also builds the
// matching wave-ls wheel from this repository into server/ (the .vsix carries it: the
// extension installs it when no wave-ls is found; WAVE_PYTHON picks the Python, default python3).
//   node scripts/build.mjs [--production] [--watch] [--tests]
import * as esbuild from 'esbuild';
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';

const production = process.argv.includes('--production');
const watch = process.argv.includes('--watch');
const tests = process.argv.includes('--tests');

const common = { bundle: true, sourcemap: !production, minify: production, logLevel: 'warning', legalComments: 'none' };

const builds = tests
  ? [
      {
        ...common,
        entryPoints: readdirSync('test').filter((f) => f.endsWith('.test.ts')).map((f) => join('test', f)),
        outdir: 'out/test',
        platform: 'node',
        format: 'cjs',
        target: 'node20',
        sourcemap: 'inline',
        alias: { entities: './src/webview/entities.ts' },
        jsx: 'automatic',
        jsxImportSource: 'preact',
      },
    ]
  : [
      {
        ...common,
        entryPoints: { extension: 'src/extension.ts' },
        outdir: 'dist',
        platform: 'node',
        format: 'cjs',
        target: 'node20',
        external: ['vscode'],
      },
      {
        ...common,
        entryPoints: { webview: 'src/webview/main.tsx' },
        outdir: 'dist',
        platform: 'browser',
        format: 'iife',
        target: 'es2022',
        jsx: 'automatic',
        jsxImportSource: 'preact',
        alias: { entities: './src/webview/entities.ts' },
      },
    ];

function kb(file) {
  return `${(statSync(file).size / 1024).toFixed(1)} KB`;
}

if (production) rmSync('dist', { recursive: true, force: true });

/** The wave-ls wheel of the repository this extension is in, into server/ (only that one). */
function buildWheel() {
  rmSync('server', { recursive: true, force: true });
  mkdirSync('server');
  const python = process.env.WAVE_PYTHON || 'python3';
  // From a copy of the files git tracks: setuptools' in-tree build/ keeps modules deleted since.
  const root = resolve('..');
  const copy = mkdtempSync(join(tmpdir(), 'wave-wheel-'));
  try {
    const tracked = execFileSync('git', ['ls-files', '-z', '--', 'pyproject.toml', 'README.md', 'LICENSE', 'wave_ls'], { cwd: root, encoding: 'utf8' });
    for (const file of tracked.split('\0').filter(Boolean)) {
      if (!existsSync(join(root, file))) continue; // deleted in the working tree
      mkdirSync(dirname(join(copy, file)), { recursive: true });
      copyFileSync(join(root, file), join(copy, file));
    }
    execFileSync(python, ['-m', 'pip', 'wheel', '--quiet', '--no-deps', '-w', resolve('server'), copy], { stdio: 'inherit' });
  } finally {
    rmSync(copy, { recursive: true, force: true });
  }
  const wheels = readdirSync('server').filter((f) => /^wave_ls-.*\.whl$/.test(f));
  if (wheels.length !== 1) throw new Error(`expected one wave-ls wheel in server/, found: ${wheels.join(', ') || 'none'}`);
  console.log(`wheel server/${wheels[0]}: ${kb(join('server', wheels[0]))}`);
}

if (watch) {
  for (const options of builds) await (await esbuild.context(options)).watch();
  console.log('watching…');
} else {
  await Promise.all(builds.map((options) => esbuild.build(options)));
  if (production) buildWheel();
  if (!tests) {
    for (const file of ['dist/extension.js', 'dist/webview.js', 'dist/webview.css']) console.log(`bundle ${file}: ${kb(file)}`);
    const webview = statSync('dist/webview.js').size + statSync('dist/webview.css').size;
    console.log(`webview total: ${(webview / 1024).toFixed(1)} KB (aim: under 300 KB)`);
  }
}
