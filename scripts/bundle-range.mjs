/**
 * The range check's build: dist/src/rules/range.js and what it loads (the engine,
 * the config schema with zod and yaml, the detectors), bundled and minified into dist/range/.
 * `hermesd check --commits` and the server's pre-receive hook start a Node process for one
 * judgement, and loading ~200 small modules cost them more than the judging (docs/benchmarks.md,
 * commits). The named errors stay the per-file build's, so the CLI knows them (exit codes).
 */
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', 'range');
const errors = join(root, 'dist', 'src', 'errors', 'index.js');
rmSync(out, { recursive: true, force: true });
await build({
  input: join(root, 'dist', 'src', 'rules', 'range.js'),
  platform: 'node',
  plugins: [
    {
      name: 'hermesd-errors-stay-shared',
      resolveId: (id, importer) => (importer && join(dirname(importer), id) === errors ? { id: errors, external: true } : null),
    },
  ],
  logLevel: 'warn',
  output: {
    dir: out,
    format: 'esm',
    // From dist/range/, where the CLI's own copy is.
    paths: (id) => (id === errors ? '../src/errors/index.js' : id),
    minify: { mangle: { keepNames: { function: true, class: true } }, compress: true, codegen: { removeWhitespace: true } },
    banner: "import { createRequire as __hermesdRequire } from 'node:module'; const require = __hermesdRequire(import.meta.url);",
  },
  write: true,
});
