/**
 * `hermesd memory list|add|replace|remove [--target memory|user] [--allow-empty]`: a client of /v1/memory.
 * A refused write exits 1 with the reason on stderr (and, in human form, the entries or
 * matches the reason refers to).
 */
import { Option, type Command } from 'commander';
import { RemoteError } from '../../errors/index.js';
import { action, color, globals, output, daemon, type GlobalOptions } from '../runtime.js';

type Target = 'memory' | 'user';
type Usage = { chars: number; limit: number };
type Listing = { target: Target; entries: string[]; usage: Usage };
type WriteResult = Listing & { success: true; message?: string };
type RefusalDetails = Partial<Listing> & { reason?: string; matches?: string[]; backup?: string };

const targetOption = () => new Option('-t, --target <target>', 'which store').choices(['memory', 'user']).default('memory');

const fmt = (n: number) => n.toLocaleString('en-US');
const title = (t: Target) => (t === 'user' ? 'USER' : 'MEMORY');

function usageLine(target: Target, usage: Usage): string {
  const pct = usage.limit > 0 ? Math.min(100, Math.floor((usage.chars / usage.limit) * 100)) : 0;
  return `${title(target)} [${pct}% — ${fmt(usage.chars)}/${fmt(usage.limit)} chars]`;
}

function entryLines(entries: string[]): string {
  return entries.map((e, i) => `${String(i + 1).padStart(2)}. ${e.replace(/\n/g, '\n    ')}`).join('\n');
}

function humanList(l: Listing): string {
  if (l.entries.length === 0) return `${usageLine(l.target, l.usage)}\n${color.dim('(no entries)')}`;
  return `${usageLine(l.target, l.usage)}\n${entryLines(l.entries)}`;
}

/** Sends a write; a refusal becomes exit 1 with the reason (and what it refers to) on stderr. */
async function write(cmd: Command, body: Record<string, unknown>): Promise<void> {
  const opts = globals(cmd) as GlobalOptions & { target: Target };
  const client = await daemon();
  let result: WriteResult;
  try {
    result = await client.call<WriteResult>('POST', '/v1/memory', { ...body, target: opts.target });
  } catch (err) {
    if (err instanceof RemoteError && err.code === 'memory-refused') {
      const d = (err.details ?? {}) as RefusalDetails;
      const lines = [`hermesd: ${err.message}`];
      if (!opts.json) {
        if (d.matches?.length) lines.push('Matching entries:', ...d.matches.map((m) => `  - ${m}`));
        else if ((d.reason === 'no-match' || d.reason === 'over-budget') && d.entries && d.usage) {
          lines.push(`Current entries, ${usageLine(d.target ?? opts.target, d.usage)}:`, entryLines(d.entries) || '  (none)');
        }
      }
      process.stderr.write(lines.join('\n') + '\n');
      process.exitCode = 1;
      return;
    }
    throw err;
  }
  output(opts, result, () => `${result.message ?? 'Done.'} ${usageLine(result.target, result.usage)}`);
}

export function register(program: Command): void {
  const memory = program.command('memory').description('the memory stores: MEMORY.md (environment and agent facts) and USER.md (user preferences)');

  memory
    .command('list')
    .description('print the entries of a store and its usage')
    .addOption(targetOption())
    .action(
      action(async (_opts: unknown, cmd: Command) => {
        const opts = globals(cmd) as GlobalOptions & { target: Target };
        const l = await (await daemon()).call<Listing>('GET', `/v1/memory?target=${opts.target}`);
        output(opts, { target: l.target, entries: l.entries, usage: l.usage }, () => humanList(l));
      }),
    );

  memory
    .command('add')
    .description('add an entry (a short declarative fact); refused when empty, over budget or failing the threat scan')
    .argument('<content>', 'the entry')
    .addOption(targetOption())
    .action(action(async (content: string, _opts: unknown, cmd: Command) => write(cmd, { action: 'add', content })));

  memory
    .command('replace')
    .description('replace the one entry containing <old_text> with <content>')
    .argument('<old_text>', 'a unique part of the entry (an exact whole entry always wins)')
    .argument('<content>', 'the new entry')
    .addOption(targetOption())
    .action(action(async (oldText: string, content: string, _opts: unknown, cmd: Command) => write(cmd, { action: 'replace', old_text: oldText, content })));

  memory
    .command('remove')
    .description('remove the one entry containing <old_text>')
    .argument('<old_text>', 'a unique part of the entry (an exact whole entry always wins)')
    .addOption(targetOption())
    .option('--allow-empty', 'allow removing the last entry, leaving the store empty')
    .action(
      action(async (oldText: string, opts: { allowEmpty?: boolean }, cmd: Command) =>
        write(cmd, { action: 'remove', old_text: oldText, ...(opts.allowEmpty ? { allow_empty: true } : {}) }),
      ),
    );
}
