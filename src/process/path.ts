/** Programs found on PATH, as a shell would find them. */
import { accessSync, constants } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';

/**
 * The first executable `name` in PATH's absolute directories, as the path found there: not
 * resolved further, since a multi-call binary (busybox) knows what to be from its name.
 */
export function findOnPath(name: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  for (const dir of (env.PATH ?? '/usr/local/bin:/usr/bin:/bin').split(delimiter)) {
    if (!isAbsolute(dir)) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here
    }
  }
  return undefined;
}
