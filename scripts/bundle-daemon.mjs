/**
 * The bundled builds, after tsc:
 * - the daemon (its idle footprint): dist/src/server/main.js and everything it imports,
 *   bundled and minified into dist/daemon/. A daemon is resident per work tree; V8 keeps every
 *   loaded module's source text and scope data, so fewer, smaller modules idle smaller (about
 *   5 MiB less RSS than the per-file tsc output, docs/benchmarks.md). better-sqlite3 stays
 *   external: a native addon, loaded from node_modules as before.
 * - `hermesd mcp` (its start is on every agent session's critical path): dist/src/mcp/main.js
 *   into dist/mcp/, the MCP SDK in a chunk of its own that loads at the first tool call, and the
 *   SDK server's answers to `initialize` and `tools/list` recorded into dist/mcp/answers.json
 *   (src/mcp/answers.ts), which the front gives without loading it.
 * - the CLI (every `hermesd` command is a process start; package.json's bin): dist/src/cli/main.js
 *   into dist/cli/, each dynamically imported module in a chunk of its own, so a command that
 *   only asks the daemon reads one file and loads no more than it uses.
 * In-process tests keep using the per-file build in dist/src.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** Bundles dist/src/<input> and what it imports into dist/<name>/. */
async function bundle(name, input, external) {
  const out = join(root, 'dist', name);
  rmSync(out, { recursive: true, force: true });
  await build({
    input: join(root, 'dist', 'src', ...input),
    platform: 'node',
    external,
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
}

await bundle('daemon', ['server', 'main.js'], ['better-sqlite3']);
await bundle('mcp', ['mcp', 'main.js'], []);
// Packages that read their own files at run time stay in node_modules: jsonc-parser's UMD build
// requires its modules by relative path, husky copies its runner from beside its index.js.
await bundle('cli', ['cli', 'main.js'], ['better-sqlite3', 'jsonc-parser', 'husky']);
const { recordAnswers } = await import(join(root, 'dist', 'src', 'mcp', 'sdk-server.js'));
writeFileSync(join(root, 'dist', 'mcp', 'answers.json'), JSON.stringify(await recordAnswers()) + '\n');
