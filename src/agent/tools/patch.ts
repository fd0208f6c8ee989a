import { z } from 'zod';
import { fuzzyFindAndReplace } from '../../text/fuzzy-replace.js';
import { confine, refuseSecret } from './confine.js';
import { withHandles } from './handles.js';
import { looksBinary, READ_MAX_FILE_BYTES } from './read-file.js';
import { defineTool, ToolError } from './types.js';
import { refuseProtected, writeConfined, WRITE_MAX_BYTES } from './write-file.js';

export const patch = defineTool({
  name: 'patch',
  description:
    'Edit a file by replacing `old_string` with `new_string`. Matching is fuzzy (tolerates differences ' +
    'in indentation, trailing whitespace, quotes and escapes) but must be unambiguous: include enough ' +
    'surrounding lines to identify one place, or set replace_all to change every match. Only what you ' +
    'change between old_string and new_string is written; the rest of the matched text keeps the ' +
    "file's characters, indentation and line endings. Paths protected by a repository rule are refused " +
    'with the rule that protects them.',
  parameters: z.strictObject({
    path: z.string().min(1).describe('file path relative to the repository root'),
    old_string: z.string().min(1).describe('the text to find (copy it from read_file output)'),
    new_string: z.string().describe('the replacement text'),
    replace_all: z.boolean().optional().describe('replace every match instead of requiring exactly one'),
  }),
  execute(args, ctx) {
    const target = confine(ctx.root, args.path);
    refuseProtected(ctx, target, 'patch');
    refuseSecret(ctx, target, args.path);
    if (!target.exists) throw new ToolError(`${args.path} does not exist. Use write_file to create a file.`);
    const bytes = withHandles(ctx.root, (h) => {
      const st = h.lstat(target.realRel);
      if (!st) throw new ToolError(`${args.path} does not exist. Use write_file to create a file.`);
      if (st.isDirectory()) throw new ToolError(`${args.path} is a directory; give a file path.`);
      return st.isFile() && st.size <= READ_MAX_FILE_BYTES ? h.readFile(target.realRel) : undefined;
    });
    if (!bytes || looksBinary(bytes)) throw new ToolError(`${args.path} is binary or too large to patch.`);
    const before = bytes.toString('utf8');
    const r = fuzzyFindAndReplace(before, args.old_string, args.new_string, args.replace_all ?? false);
    if ('error' in r) throw new ToolError(`${args.path}: ${r.error}`);
    if (Buffer.byteLength(r.content) > WRITE_MAX_BYTES) throw new ToolError(`the patched file would exceed ${WRITE_MAX_BYTES} bytes.`);
    writeConfined(target, r.content);
    return { path: target.rel, replacements: r.count, strategy: r.strategy, diff: shortDiff(before, r.content) };
  },
});

/** Lines removed and added, in order, capped: enough for the model to see what changed. */
function shortDiff(before: string, after: string, maxLines = 40): string {
  const a = before.split('\n');
  const b = after.split('\n');
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length - 1;
  let endB = b.length - 1;
  while (endA >= start && endB >= start && a[endA] === b[endB]) {
    endA--;
    endB--;
  }
  const lines = [`@@ line ${start + 1} @@`, ...a.slice(start, endA + 1).map((l) => `-${l}`), ...b.slice(start, endB + 1).map((l) => `+${l}`)];
  return lines.length > maxLines ? [...lines.slice(0, maxLines), `… ${lines.length - maxLines} more diff lines`].join('\n') : lines.join('\n');
}
