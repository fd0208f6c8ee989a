import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

/**
 * The package root: where package.json and templates/ live. The nearest folder above
 * this module that has both: dist/src/.. /.. for the per-file build, dist/daemon/.. /.. for the
 * daemon's bundle, src/.. when tests run the sources.
 */
function findPackageRoot(): string {
  const here = fileURLToPath(import.meta.url);
  for (let dir = dirname(here); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'templates'))) return dir;
    if (dirname(dir) === dir) throw new Error('hermesd package root not found above ' + here);
  }
}
export const PACKAGE_ROOT = findPackageRoot();

export const VERSION: string = (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** The config `hermesd init` writes; its rules (init's defaults) also judge a range whose base has no config. */
export const INIT_CONFIG_TEMPLATE = join(PACKAGE_ROOT, 'templates', 'config.yaml');
/**
 * init's default rules as the range check's bundle was built with them (scripts/bundle-daemon.mjs):
 * the template's text and the config it parses to, used where the template still has that text.
 */
export const INIT_DEFAULTS_RECORD = join(PACKAGE_ROOT, 'dist', 'range', 'init-defaults.json');
/** The CLI entry point (the bundle scripts/bundle-daemon.mjs builds from dist/src/cli/main.js), for hooks that must find this install. */
export const CLI_ENTRY = join(PACKAGE_ROOT, 'dist', 'cli', 'main.js');
/** The range check's bundle (scripts/bundle-daemon.mjs, from dist/src/rules/range.js): what check --commits and the server hook load. */
export const RANGE_ENTRY = join(PACKAGE_ROOT, 'dist', 'range', 'range.js');
/** The daemon's entry: the bundle scripts/bundle-daemon.mjs builds from dist/src/server/main.js. */
export const DAEMON_ENTRY = join(PACKAGE_ROOT, 'dist', 'daemon', 'main.js');
/** `hermesd mcp` as agents start it: the bundle of dist/src/mcp/main.js, CommonJS (no CLI in front). */
export const MCP_ENTRY = join(PACKAGE_ROOT, 'dist', 'mcp', 'main.cjs');
/**
 * glibc's allocator, for the daemon alone: blocks of 32 KiB and up come from mmap and go
 * back to the system when freed, so what parsing and compiling used at start does not stay
 * resident in an idle daemon (docs/benchmarks.md#idle). The marker tells the daemon to drop
 * the setting from its own environment, so git and the agent's commands run as the user's
 * environment says (server/main.ts); a value the user set is left as it is.
 */
export const DAEMON_ALLOCATOR_ENV = { MALLOC_MMAP_THRESHOLD_: '32768' } as const;
export const DAEMON_ALLOCATOR_MARKER = 'HERMESD_DAEMON_ALLOCATOR';
