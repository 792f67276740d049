// Bundles the extension host (CommonJS for VS Code) and the webview (one script, one
// stylesheet), or the unit tests; prints each bundle's size.
//   node scripts/build.mjs [--production] [--watch] [--tests]
import * as esbuild from 'esbuild';
import { readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

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

if (watch) {
  for (const options of builds) await (await esbuild.context(options)).watch();
  console.log('watching…');
} else {
  await Promise.all(builds.map((options) => esbuild.build(options)));
  if (!tests) {
    for (const file of ['dist/extension.js', 'dist/webview.js', 'dist/webview.css']) console.log(`bundle ${file}: ${kb(file)}`);
    const webview = statSync('dist/webview.js').size + statSync('dist/webview.css').size;
    console.log(`webview total: ${(webview / 1024).toFixed(1)} KB (aim: under 300 KB)`);
  }
}
