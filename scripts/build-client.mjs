/**
 * hermesd's hook client (src/hook-client/client.c) and the record of refused writes preloaded
 * into other agents' confined shell commands (src/guard/refused-writes.c), compiled into
 * dist/client/ by `npm run build` (and so by `npm pack`, which ships them). `hermesd init`
 * copies the client into a clone when it runs on that machine, and compiles it there when it
 * does not; the hooks use curl where neither works (docs/hooks.md). The daemon does the same
 * with the library (src/guard/refused-preload.ts).
 */
import { rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const built = join(root, 'dist', 'src', 'hook-client', 'build.js');
const { compileC, compileClient, PREBUILT_CLIENT } = await import(pathToFileURL(built).href);
const why = compileClient(PREBUILT_CLIENT);
if (why) {
  // A machine without a C compiler still builds hermesd: its clones' hooks use curl.
  rmSync(PREBUILT_CLIENT, { force: true });
  process.stderr.write(`hermesd: the hook client was not built (${why}); hermesd init tries again in each clone, and the hooks use curl where it cannot.\n`);
}

// The record of writes refused inside the confinement of other agents' shell commands (src/guard/refused-writes.c).
const preload = await import(pathToFileURL(join(root, 'dist', 'src', 'guard', 'refused-preload.js')).href);
const whyNot = preload.compilePreload(preload.PREBUILT_PRELOAD);
if (whyNot) {
  rmSync(preload.PREBUILT_PRELOAD, { force: true });
  process.stderr.write(
    `hermesd: the record of refused writes was not built (${whyNot}); the daemon tries again, and reads the commands' output where it cannot.\n`,
  );
}

// The helper that starts the daemon's git processes (src/git/spawner.c); without it the daemon starts them itself.
const spawner = await import(pathToFileURL(join(root, 'dist', 'src', 'git', 'spawner.js')).href);
const noSpawner = compileC(join(root, 'src', 'git', 'spawner.c'), spawner.PREBUILT_SPAWNER, ['-O2']);
if (noSpawner) {
  rmSync(spawner.PREBUILT_SPAWNER, { force: true });
  process.stderr.write(`hermesd: the spawner was not built (${noSpawner}); the daemon starts its git processes itself.\n`);
}
