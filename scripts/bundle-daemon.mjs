/**
 * The bundled builds, after tsc:
 * - the daemon (its idle footprint): dist/src/server/main.js and everything it imports,
 *   bundled and minified into dist/daemon/. A daemon is resident per work tree; V8 keeps every
 *   loaded module's source text and scope data, so fewer, smaller modules idle smaller (about
 *   5 MiB less RSS than the per-file tsc output, docs/benchmarks.md). better-sqlite3 stays
 *   external: a native addon, loaded from node_modules as before.
 * - `hermesd mcp` (its start is on every agent session's critical path): dist/src/mcp/main.js
 *   into dist/mcp/main.cjs — CommonJS: Node loads a CommonJS entry ~2.5 ms sooner than an ES module
 *   one, where every import is a module job — (dist/mcp/main.js imports it, for launchers written
 *   before), the MCP SDK in a chunk of its own that loads at the first tool call, and the
 *   SDK server's answers to `initialize` and `tools/list` recorded into dist/mcp/answers.json
 *   (src/mcp/answers.ts), which the front gives without loading it.
 * - the CLI (every `hermesd` command is a process start; package.json's bin, dist/cli/main.js):
 *   dist/src/cli/launch.js into dist/cli/main.js, CommonJS (dist/cli/package.json says so), which
 *   has `status` and `--version` answered by dist/cli/quick.cjs (dist/src/cli/quick.js, CommonJS
 *   too, required only for them); every other command line imports the full one,
 *   dist/src/cli/main.js bundled into dist/cli/program.mjs, each dynamically imported module in a
 *   chunk of its own (.mjs), so a command loads no more than it uses.
 * - the range check (`check --commits` and the server's pre-receive hook start a Node process for
 *   one judgement, and loading ~200 small modules cost them more than the judging): dist/src/rules/
 *   range.js into dist/range/, with init's default rules as they parse (dist/range/init-defaults.json:
 *   the template's text and its config), so a base without a config needs no YAML parser.
 * The CLI and the range check keep the per-file build's errors module (one copy: the CLI maps a
 * thrown error to its exit code by its class). In-process tests use the per-file build in dist/src.
 */
import { rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

/** The named errors' module of the per-file build: bundles that throw to the CLI share this one copy (exit codes by class). */
const errors = join(root, 'dist', 'src', 'errors', 'index.js');
const errorsStayShared = {
  name: 'hermesd-errors-stay-shared',
  resolveId: (id, importer) => (importer && join(dirname(importer), id) === errors ? { id: errors, external: true } : null),
};

/**
 * Bundles dist/src/<input> and what it imports into dist/<name>/; `shareErrors`: the errors module
 * stays the per-file build's; `commonjs`: CommonJS files (.cjs), which need no banner.
 */
async function bundle(name, input, external, { shareErrors = false, commonjs = false, fileNames, plugins = [], keep = false } = {}) {
  const out = join(root, 'dist', name);
  if (!keep) rmSync(out, { recursive: true, force: true });
  await build({
    input: join(root, 'dist', 'src', ...input),
    platform: 'node',
    external,
    plugins: [...(shareErrors ? [errorsStayShared] : []), ...plugins],
    logLevel: 'warn',
    output: {
      dir: out,
      format: commonjs ? 'cjs' : 'esm',
      ...(commonjs ? { entryFileNames: '[name].cjs', chunkFileNames: '[name]-[hash].cjs' } : {}),
      ...fileNames,
      // Every chunk sits in dist/<name>/, one folder below dist/src's.
      ...(shareErrors ? { paths: (id) => (id === errors ? '../src/errors/index.js' : id) } : {}),
      // Local names shortened, function and class names kept: stack traces in the log still name them.
      minify: { mangle: { keepNames: { function: true, class: true } }, compress: true, codegen: { removeWhitespace: true } },
      // Some dependencies are CommonJS and read these; an ES module has none of its own.
      banner: commonjs
        ? undefined
        : [
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

// jsonc-parser stays in node_modules (below): the daemon reads agents' settings at their session start (other-agents/instruction-files.ts).
await bundle('daemon', ['server', 'main.js'], ['better-sqlite3', 'jsonc-parser']);
await bundle('mcp', ['mcp', 'main.js'], [], { commonjs: true });
// The launcher `hermesd init --agents` wrote before the server was CommonJS starts dist/mcp/main.js.
writeFileSync(join(root, 'dist', 'mcp', 'main.js'), "import './main.cjs';\n");
// Packages that read their own files at run time stay in node_modules: jsonc-parser's UMD build
// requires its modules by relative path, husky copies its runner from beside its index.js.
// The CLI and the range check (which the CLI loads for check --commits) share the errors module.
await bundle('cli', ['cli', 'main.js'], ['better-sqlite3', 'jsonc-parser', 'husky'], {
  shareErrors: true,
  fileNames: { entryFileNames: 'program.mjs', chunkFileNames: '[name]-[hash].mjs' },
});
// The first file and the answers it gives itself: two CommonJS files (their own copy of what
// `status` needs, the named errors among them: nothing they throw reaches the full command line).
// The first file requires quick.cjs for `status` and `--version` and imports program.mjs for the
// rest; what quick.cjs imports only on a rarer path (status without a daemon) stays the per-file
// build's.
const program = join(root, 'dist', 'src', 'cli', 'main.js');
/** A plugin: dynamic imports out of the bundle, to program.mjs or to the per-file build. */
const dynamicImportsStayOut = {
  name: 'hermesd-cli-first-file',
  resolveId: (id, importer, { kind }) => {
    if (!importer || kind !== 'dynamic-import') return null;
    const file = join(dirname(importer), id);
    if (file === program) return { id: './program.mjs', external: true };
    return { id: relative(join(root, 'dist', 'cli'), file), external: true };
  },
};
await bundle('cli', ['cli', 'launch.js'], [], {
  commonjs: true,
  keep: true,
  fileNames: { entryFileNames: 'main.js', codeSplitting: false },
  plugins: [dynamicImportsStayOut],
});
await bundle('cli', ['cli', 'quick.js'], [], {
  commonjs: true,
  keep: true,
  fileNames: { entryFileNames: 'quick.cjs', codeSplitting: false },
  plugins: [dynamicImportsStayOut],
});
writeFileSync(join(root, 'dist', 'cli', 'package.json'), '{ "type": "commonjs" }\n');
await bundle('range', ['rules', 'range.js'], [], { shareErrors: true });
// init's default rules as they parse (src/rules/range.ts, defaultRules): a range whose base has no
// config is judged by them without loading the YAML parser, while the template has this text.
{
  const { isDeepStrictEqual } = await import('node:util');
  const { readFileSync } = await import('node:fs');
  const { INIT_CONFIG_TEMPLATE, INIT_DEFAULTS_RECORD } = await import(join(root, 'dist', 'src', 'version.js'));
  const { loadCommittedConfig } = await import(join(root, 'dist', 'src', 'config', 'load.js'));
  const text = readFileSync(INIT_CONFIG_TEMPLATE, 'utf8');
  const config = loadCommittedConfig(INIT_CONFIG_TEMPLATE, text);
  if (!isDeepStrictEqual(JSON.parse(JSON.stringify(config)), config))
    throw new Error(`${INIT_CONFIG_TEMPLATE} parses to more than JSON holds: it cannot be recorded`);
  writeFileSync(INIT_DEFAULTS_RECORD, JSON.stringify({ text, config }) + '\n');
}
const { recordAnswers } = await import(join(root, 'dist', 'src', 'mcp', 'sdk-server.js'));
writeFileSync(join(root, 'dist', 'mcp', 'answers.json'), JSON.stringify(await recordAnswers()) + '\n');
