/**
 * hermesd's hook client (src/transport/client.c), compiled into dist/client/ by `npm run build`
 * and again by the package's install (`--at-install`), so the binary is this machine's. A
 * machine without a C compiler keeps a shipped binary only when it runs here; `hermesd init`
 * tries again, and the hooks use curl where there is none (docs/hooks.md).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const built = join(root, 'dist', 'src', 'transport', 'build.js');
const atInstall = process.argv.includes('--at-install');
// A checkout's own `npm ci` runs this before anything is built: nothing to do yet.
if (!existsSync(built)) process.exit(0);
const { compileClient, PREBUILT_CLIENT } = await import(pathToFileURL(built).href);
const why = compileClient(PREBUILT_CLIENT);
if (why) {
  const runs = existsSync(PREBUILT_CLIENT) && spawnSync(PREBUILT_CLIENT, ['-V']).status === 0;
  if (!runs) rmSync(PREBUILT_CLIENT, { force: true });
  process.stderr.write(`hermesd: the hook client was not built here (${why})${runs ? '; the one shipped runs here and is kept' : '; hermesd init tries again, and the hooks use curl meanwhile'}.\n`);
  if (!atInstall) process.exit(1);
}
