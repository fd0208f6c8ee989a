/**
 * Repository confinement for the file tools. A path the model gives is resolved against
 * the work tree as open(2) resolves it (every link followed where it stands), so neither
 * `..`, nor an absolute path, nor a symlink (anywhere along the path) can lead outside.
 * The git directory is refused too: writing hooks or config there escapes the rules.
 */
import { lstatSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import type { GuardConfig } from '../../guard/guard-config.js';
import { resolvePhysical } from '../../rules/protected-paths.js';
import { isSecretPath, secretPathMessage } from '../../security/secret-paths.js';
import { ToolError, ToolRefused } from './types.js';

export type Confined = {
  /** The repository root (a realpath) the paths are relative to. */
  root: string;
  /** Absolute real path (symlinks resolved) to read or write. */
  abs: string;
  /** Path relative to the root as the model named it (normalised, `/` separators). */
  rel: string;
  /** Path relative to the root after resolving symlinks (what rules are checked against too). */
  realRel: string;
  exists: boolean;
};

const toPosix = (p: string) => p.split(sep).join('/');

function inside(root: string, abs: string): boolean {
  const r = relative(root, abs);
  return r === '' || (!r.startsWith('..') && !isAbsolute(r));
}

/** Resolves `path` inside the repository `root` (a realpath) or throws a ToolError the model can act on. */
export function confine(root: string, path: string): Confined {
  if (typeof path !== 'string' || path.trim() === '') throw new ToolError('path must be a non-empty path relative to the repository root.');
  if (path.includes('\0')) throw new ToolError('path contains a NUL byte.');
  const abs = isAbsolute(path) ? resolve(path) : resolve(root, path);
  if (!inside(root, abs)) {
    throw new ToolError(
      isAbsolute(path)
        ? `${path} is outside the repository (${root}). File tools only work inside the repository; use a path relative to its root.`
        : `${path} leads outside the repository (${root}) through "..". File tools only work inside the repository.`,
    );
  }
  // As open(2) reaches it: `s/../x` through `s`'s target (rules/protected-paths.ts), a dangling link refused rather than followed.
  const { path: real, exists } = resolvePhysical(path, root);
  try {
    if (!exists && lstatSync(abs).isSymbolicLink()) throw new ToolError(`${abs} is a symbolic link whose target does not exist; refusing to follow it.`);
  } catch (e) {
    if (e instanceof ToolError) throw e;
  }
  if (!inside(root, real)) {
    throw new ToolError(`${path} resolves through a symbolic link to ${real}, which is outside the repository. File tools only work inside the repository.`);
  }
  const rel = toPosix(relative(root, abs));
  const realRel = toPosix(relative(root, real));
  for (const r of [rel, realRel]) {
    if (r === '.git' || r.startsWith('.git/'))
      throw new ToolError(`${path} is inside the git directory; the agent may not read or write git internals (use the terminal tool with git commands).`);
  }
  return { root, abs: real, rel: rel || '.', realRel: realRel || '.', exists };
}

/** hermesd guard: secret files (.env, keys, credentials, guard.secretPaths) are never read by a tool. */
export function refuseSecret(ctx: { root: string; config: GuardConfig }, target: { rel: string; realRel: string }, shown: string): void {
  for (const rel of [target.rel, target.realRel]) {
    const hit = isSecretPath(rel, ctx.config, { root: ctx.root });
    if (hit) throw new ToolRefused(secretPathMessage(shown, hit));
  }
}
