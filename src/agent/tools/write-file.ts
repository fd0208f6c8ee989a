import { z } from 'zod';
import { lstatSync } from 'node:fs';
import { findRealGit } from '../../git/real-git.js';
import { hardLinkedProtected } from '../../guard/protect.js';
import { guardOwnedPath } from '../../guard/sandbox-plan.js';
import { GIT_READ_REASON, gitReadHit, gitReadPaths } from '../../guard/git-reads.js';
import { findRepo } from '../../paths/index.js';
import { join, relative } from 'node:path';
import { confine, type Confined } from './confine.js';
import { withHandles } from './handles.js';
import { defineTool, ToolError, ToolRefused, type ToolContext } from './types.js';

/** Biggest file write_file takes in one call (bytes): source files, not data dumps. */
export const WRITE_MAX_BYTES = 2 * 1024 * 1024;
/** Mode of a file the agent creates (rw-r--r--), as an editor would with the usual umask. */
const NEW_FILE_MODE = 0o644;

/** Throws a ToolRefused quoting the rule when a repository rule protects the path (or its symlink target). */
export function refuseProtected(ctx: ToolContext, target: Confined, verb: string): void {
  for (const rel of new Set([target.rel, target.realRel])) {
    // hermesd guard: what the guard reads is the user's to change, never a tool's.
    if (guardOwnedPath(rel)) {
      throw new ToolRefused(
        `Refused to ${verb} ${rel}: hermesd's guard reads this file (repository config, git hooks, agents' hooks); only the user changes it, and a change that loosens the guard applies only after \`hermesd config approve\`.`,
        { path: rel },
      );
    }
    const rule = ctx.services.protectedBy(rel);
    if (rule) {
      throw new ToolRefused(`Refused to ${verb} ${rel}: it is protected by repository rule "${rule.id}": ${rule.message}`, { rule: rule.id, path: rel });
    }
  }
  // What git reads as configuration or runs as a hook (the hooks folder, an included config file): refused as other agents' writes are.
  const dirs = findRepo(target.root);
  const hit = gitReadHit(gitReadPaths({ root: target.root, gitDir: dirs.gitDir, commonDir: dirs.commonDir }, findRealGit()), [
    join(target.root, target.rel),
    target.abs,
  ]);
  if (hit !== undefined) {
    const rel = relative(target.root, hit) || hit;
    throw new ToolRefused(`Refused to ${verb} ${rel}: ${GIT_READ_REASON}`, { rule: 'git-config', path: rel });
  }
  // The same file under a second name: refused as other agents' tools are (their writes may go through the link).
  const st = target.exists ? lstatSync(target.abs, { throwIfNoEntry: false }) : undefined;
  const linked = st && st.nlink > 1 ? hardLinkedProtected(target.root, ctx.services.config, findRealGit(), st) : undefined;
  if (linked) {
    throw new ToolRefused(`Refused to ${verb} ${target.rel}: it is a hard link of a file protected by repository rule "${linked.id}": ${linked.message}`, {
      rule: linked.id,
      path: target.rel,
    });
  }
}

/**
 * Writes `content` to a confined path atomically, keeping the mode of an existing file. The
 * path is walked from the root through directory handles (handles.ts): a directory swapped
 * for a symbolic link meanwhile fails the write instead of redirecting it.
 */
export function writeConfined(target: Confined, content: string): void {
  withHandles(target.root, (h) => {
    let mode = NEW_FILE_MODE;
    const st = h.lstat(target.realRel);
    if (st) {
      if (st.isDirectory()) throw new ToolError(`${target.rel} is a directory; give a file path.`);
      if (!st.isFile()) throw new ToolError(`${target.rel} is not a regular file.`);
      mode = st.mode & 0o7777;
    }
    h.writeFileAtomic(target.realRel, content, mode);
  });
}

export const writeFile = defineTool({
  name: 'write_file',
  description:
    'Create or overwrite a file of the repository with `content` (the whole file). Parent directories ' +
    'are created. Prefer `patch` for edits to existing files. Paths protected by a repository rule ' +
    '(e.g. generated files) are refused with the rule that protects them: change the sources instead.',
  parameters: z.strictObject({
    path: z.string().min(1).describe('file path relative to the repository root'),
    content: z.string().describe('the complete new content of the file'),
  }),
  execute(args, ctx) {
    const bytes = Buffer.byteLength(args.content);
    if (bytes > WRITE_MAX_BYTES) throw new ToolError(`content is ${bytes} bytes, over the ${WRITE_MAX_BYTES}-byte limit of write_file.`);
    const target = confine(ctx.root, args.path);
    refuseProtected(ctx, target, 'write');
    const created = !target.exists;
    writeConfined(target, args.content);
    return { path: target.rel, bytes_written: bytes, created };
  },
});
