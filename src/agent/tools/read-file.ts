import { z } from 'zod';
import { confine, refuseSecret } from './confine.js';
import { withHandles } from './handles.js';
import { defineTool, ToolError } from './types.js';

/** Lines returned when the model gives no limit: a large source file in one call. */
export const READ_DEFAULT_LIMIT_LINES = 2_000;
/** A single line longer than this (minified code) is cut, so one line cannot flood the context. */
export const READ_MAX_LINE_CHARS = 2_000;
/** Characters returned by one call at most; the model pages on with `offset`. */
export const READ_MAX_CHARS = 100_000;
/** Files larger than this are not loaded at all: the model should search them instead. */
export const READ_MAX_FILE_BYTES = 10 * 1024 * 1024;
/** Bytes sniffed for a NUL to tell a binary file. */
const BINARY_SNIFF_BYTES = 8_192;

/** A NUL in the first bytes: binary. The file tools read a file once and sniff the bytes they hold. */
export function looksBinary(buf: Buffer): boolean {
  return buf.subarray(0, BINARY_SNIFF_BYTES).includes(0);
}

export const readFile = defineTool({
  name: 'read_file',
  description:
    'Read a text file of the repository. `path` is relative to the repository root. Returns the lines ' +
    `from \`offset\` (1-based line number, default 1), at most \`limit\` lines (default ${READ_DEFAULT_LIMIT_LINES}), ` +
    'with total_lines so you can page on. Very long lines are cut. Files outside the repository cannot be read.',
  parameters: z.strictObject({
    path: z.string().min(1).describe('file path relative to the repository root'),
    offset: z.number().int().min(1).optional().describe('1-based line number to start from'),
    limit: z.number().int().min(1).max(100_000).optional().describe('maximum number of lines to return'),
  }),
  execute(args, ctx) {
    const target = confine(ctx.root, args.path);
    refuseSecret(ctx, target, args.path);
    if (!target.exists) throw new ToolError(`${args.path} does not exist. Use search_files to find the right path.`);
    // Read through directory handles: a directory swapped for a link meanwhile fails the read.
    const { st, bytes } = withHandles(ctx.root, (h) => {
      const st = h.lstat(target.realRel);
      if (!st) throw new ToolError(`${args.path} does not exist. Use search_files to find the right path.`);
      if (st.isDirectory()) throw new ToolError(`${args.path} is a directory. Use search_files or terminal (ls) to list it.`);
      if (!st.isFile()) throw new ToolError(`${args.path} is not a regular file.`);
      if (st.size > READ_MAX_FILE_BYTES)
        throw new ToolError(
          `${args.path} is ${st.size} bytes, over the ${READ_MAX_FILE_BYTES}-byte limit for read_file. Use search_files or terminal (head, sed -n) on it.`,
        );
      return { st, bytes: h.readFile(target.realRel) };
    });
    if (looksBinary(bytes)) throw new ToolError(`${args.path} is a binary file (${st.size} bytes); read_file only reads text.`);
    const lines = bytes.toString('utf8').split('\n');
    if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
    const offset = args.offset ?? 1;
    const limit = args.limit ?? READ_DEFAULT_LIMIT_LINES;
    if (offset > Math.max(lines.length, 1)) throw new ToolError(`offset ${offset} is past the end of ${args.path} (${lines.length} lines).`);
    const out: string[] = [];
    let chars = 0;
    let cut = false;
    let end = offset - 1;
    for (let i = offset - 1; i < Math.min(lines.length, offset - 1 + limit); i++) {
      let line = lines[i]!;
      if (line.length > READ_MAX_LINE_CHARS) line = `${line.slice(0, READ_MAX_LINE_CHARS)}… [line cut at ${READ_MAX_LINE_CHARS} chars]`;
      if (chars + line.length + 1 > READ_MAX_CHARS && out.length > 0) {
        cut = true;
        break;
      }
      out.push(line);
      chars += line.length + 1;
      end = i + 1;
    }
    const more = end < lines.length;
    return {
      path: target.rel,
      content: out.join('\n'),
      start_line: offset,
      end_line: end,
      total_lines: lines.length,
      ...(more ? { truncated: true, hint: `${cut ? 'Output limit reached. ' : ''}Call read_file with offset ${end + 1} for more.` } : {}),
    };
  },
});
