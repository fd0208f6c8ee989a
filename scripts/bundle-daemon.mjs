/**
 * The daemon's build (issue 18, idle footprint): dist/src/server/main.js and everything it
 * imports, bundled and minified into dist/daemon/. A daemon is resident per work tree; V8 keeps
 * every loaded module's source text and scope data, so fewer, smaller modules idle smaller
 * (about 5 MiB less RSS than the per-file tsc output, docs/benchmarks.md). The CLI, the
 * hooks' Node fallback and in-process tests keep using the per-file build in dist/src.
 *
 * better-sqlite3 stays external: a native addon, loaded from node_modules as before.
 */
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', 'daemon');
rmSync(out, { recursive: true, force: true });
await build({
  input: join(root, 'dist', 'src', 'server', 'main.js'),
  platform: 'node',
  external: ['better-sqlite3'],
  logLevel: 'warn',
  output: {
    dir: out,
    format: 'esm',
    // Local names shortened, function and class names kept: stack traces in the log still name them.
    minify: { mangle: { keepNames: { function: true, class: true } }, compress: true, codegen: { removeWhitespace: true } },
    // Some dependencies are CommonJS and read these; an ES module has none of its own.
    banner: [
      "import { createRequire as __hermesdRequire } from 'node:module';",
      "import { fileURLToPath as __hermesdPath } from 'node:url';",
      'const require = __hermesdRequire(import.meta.url);',
      'const __filename = __hermesdPath(import.meta.url);',
      "const __dirname = __hermesdPath(new URL('.', import.meta.url));",
    ].join(' '),
  },
  write: true,
});
