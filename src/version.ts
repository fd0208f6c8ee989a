import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

/** The package root: where package.json, hooks/ and templates/ live (dist/src/.. /..). */
export const PACKAGE_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export const VERSION: string = (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** The CLI entry point, for spawning the daemon and for hooks that must find this install. */
export const CLI_ENTRY = join(PACKAGE_ROOT, 'dist', 'src', 'cli', 'main.js');
export const DAEMON_ENTRY = join(PACKAGE_ROOT, 'dist', 'src', 'server', 'main.js');
/**
 * Node flags of the daemon process. A young generation of 2 MiB semi-spaces instead of V8's
 * 16 MiB: an idle daemon (one per work tree, often ten at once) keeps ~10 MiB less resident
 * after a burst of work, for a few more minor collections during one (issue 18's bench).
 */
export const DAEMON_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=2'];
