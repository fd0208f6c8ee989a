import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { dirname, join } from 'node:path';

/** The package root: where package.json, hooks/ and templates/ live (dist/src/.. /..). */
export const PACKAGE_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export const VERSION: string = (JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** The CLI entry point, for spawning the daemon and for hooks that must find this install. */
export const CLI_ENTRY = join(PACKAGE_ROOT, 'dist', 'src', 'cli', 'main.js');
export const DAEMON_ENTRY = join(PACKAGE_ROOT, 'dist', 'src', 'server', 'main.js');
