import { z } from 'zod';
import { findRealGit } from '../../git/real-git.js';
import { judgeTool, writeJudgeContext } from '../../guard/tool-judge.js';
import { cleanGitEnv } from '../../git/env.js';
import { findRepo } from '../../paths/index.js';
import { confine, type Confined } from './confine.js';
import { withHandles } from './handles.js';
import { defineTool, ToolError, ToolRefused, type ToolContext } from './types.js';

/** Biggest file write_file takes in one call (bytes): source files, not data dumps. */
export const WRITE_MAX_BYTES = 2 * 1024 * 1024;
/** Mode of a file the agent creates (rw-r--r--), as an editor would with the usual umask. */
const NEW_FILE_MODE = 0o644;

/**
 * Throws a ToolRefused quoting the rule when the write may not happen: the guard's one judgement
 * of a write (src/guard/tool-judge.ts, as for other agents' file tools): a repository rule that
 * protects the path (under any name it has: its symlink target, a hard link), the files the
 * guard reads, what git reads as configuration or runs as hooks.
 */
export function refuseProtected(ctx: ToolContext, target: Confined, verb: 'write' | 'patch'): void {
  const dirs = findRepo(target.root);
  const jc = writeJudgeContext({ ...dirs, root: target.root, config: ctx.services.config, gitBin: findRealGit(), gitEnv: cleanGitEnv() });
  // Both names confine() found: as the model spelt it (`..` taken lexically) and as open(2) reaches it.
  const denial = judgeTool(jc, { kind: 'write', verb, paths: [...new Set([target.rel, target.realRel])] }, target.root);
  if (denial) throw new ToolRefused(denial.message.replace(/^hermesd: /, ''), { rule: denial.rule, path: target.rel });
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
