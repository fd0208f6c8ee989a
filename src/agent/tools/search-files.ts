import { z } from 'zod';
import { gitAsync } from '../../git/run.js';
import { isSecretPath } from '../../security/secret-paths.js';
import { confine } from './confine.js';
import { DirHandles } from './handles.js';
import { looksBinary } from './read-file.js';
import { defineTool, ToolError } from './types.js';

/** Matches returned per call: enough to locate things, small enough for the context. */
export const SEARCH_MAX_MATCHES = 100;
/** Matching file paths returned per call. */
export const SEARCH_MAX_FILES = 100;
/** The file list of a huge monorepo still fits. */
const LISTING_MAX_BYTES = 256 * 1024 * 1024;
/** Files larger than this are not searched (bytes): lockfiles, bundles, data. */
export const SEARCH_MAX_FILE_BYTES = 1024 * 1024;
/** Characters of a matching line shown. */
const SEARCH_LINE_CHARS = 300;

function compile(pattern: string): { re: RegExp; literal: boolean } {
  try {
    return { re: new RegExp(pattern), literal: false };
  } catch {
    return { re: new RegExp(pattern.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')), literal: true };
  }
}

export const searchFiles = defineTool({
  name: 'search_files',
  description:
    'Search the repository for a JavaScript regular expression: in file contents (line matches with ' +
    'line numbers) and in file paths. Only files git would see are searched (tracked, or untracked and ' +
    `not ignored); binary files and files over ${SEARCH_MAX_FILE_BYTES} bytes are skipped. \`path\` limits the search to a ` +
    `file or directory. At most ${SEARCH_MAX_MATCHES} matches are returned.`,
  parameters: z.strictObject({
    pattern: z.string().min(1).describe('regular expression (JavaScript syntax); an invalid one is searched literally'),
    path: z.string().min(1).optional().describe('file or directory relative to the repository root (default: the whole repository)'),
  }),
  async execute(args, ctx) {
    const where = confine(ctx.root, args.path ?? '.');
    if (!where.exists) throw new ToolError(`${args.path} does not exist.`);
    const { re, literal } = compile(args.pattern);
    let listing: string;
    try {
      const out = await gitAsync(['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--', where.realRel], {
        cwd: ctx.root,
        maxBuffer: LISTING_MAX_BYTES,
        signal: ctx.signal,
      });
      listing = out.toString('utf8');
    } catch (err) {
      throw new ToolError(`Could not list the repository's files: ${(err as Error).message}`);
    }
    const files = [...new Set(listing.split('\0').filter(Boolean))];
    const matches: Array<{ path: string; line: number; text: string }> = [];
    const pathMatches: string[] = [];
    let truncated = false;
    // Files are read through directory handles: a directory swapped for a link meanwhile is skipped, never followed.
    const handles = new DirHandles(ctx.root);
    try {
      for (const rel of files) {
        if (ctx.signal.aborted) break;
        if (re.test(rel) && pathMatches.length < SEARCH_MAX_FILES) pathMatches.push(rel);
        if (matches.length >= SEARCH_MAX_MATCHES) {
          truncated = true;
          continue;
        }
        // hermesd guard: the contents of secret files are not searched.
        if (isSecretPath(rel, ctx.config, { root: ctx.root })) continue;
        let text: string;
        try {
          const st = handles.lstat(rel);
          // Symlinks are not followed: their target may be outside the repository.
          if (!st || !st.isFile() || st.size > SEARCH_MAX_FILE_BYTES) continue;
          const buf = handles.readFile(rel);
          if (looksBinary(buf)) continue;
          text = buf.toString('utf8');
        } catch {
          continue;
        }
        if (!re.test(text)) continue;
        const lines = text.split('\n');
        for (let i = 0; i < lines.length; i++) {
          if (!re.test(lines[i]!)) continue;
          if (matches.length >= SEARCH_MAX_MATCHES) {
            truncated = true;
            break;
          }
          const line = lines[i]!;
          matches.push({ path: rel, line: i + 1, text: line.length > SEARCH_LINE_CHARS ? line.slice(0, SEARCH_LINE_CHARS) + '…' : line });
        }
      }
    } finally {
      handles.close();
    }
    return {
      pattern: args.pattern,
      ...(literal ? { note: 'pattern is not a valid regular expression; it was searched literally' } : {}),
      matches,
      files: pathMatches,
      files_searched: files.length,
      ...(truncated ? { truncated: true, hint: `Only the first ${SEARCH_MAX_MATCHES} matches are shown; narrow the pattern or the path.` } : {}),
    };
  },
});
