/**
 * `hermesd memory list|add|replace|remove [--target memory|user] [--scope global|repo]`: a client of /v1/memory.
 * `--scope repo` is this repository's MEMORY.md (shared by its worktrees); USER.md has no repository scope.
 * Outside a work tree there is no daemon to ask, and the global stores ($HERMES_HOME/memories)
 * need none: the command reads and writes them itself, under the same lock as every daemon.
 * A refused write exits 1 with the reason on stderr (and, in human form, the entries or
 * matches the reason refers to).
 */
import { Option, type Command } from 'commander';
import { MemoryRefused, NotARepository, RemoteError, UsageError } from '../../errors/index.js';
import { formatCount } from '../../memory/entries.js';
import type { MemoryStore } from '../../memory/store.js';
import { findRepo, hermesHome, memoriesDir, prepareHome } from '../../paths/index.js';
import { action, color, globals, output, daemon, type GlobalOptions } from '../runtime.js';

type Target = 'memory' | 'user';
type Scope = 'global' | 'repo';
type Usage = { chars: number; limit: number };
type Listing = { target: Target; scope?: Scope; entries: string[]; usage: Usage; path?: string };
type StoreOptions = GlobalOptions & { target: Target; scope: Scope };
type WriteResult = Listing & { success: true; message?: string };
type RefusalDetails = Partial<Listing> & { reason?: string; matches?: string[]; backup?: string };

const targetOption = () => new Option('-t, --target <target>', 'which store').choices(['memory', 'user']).default('memory');
const scopeOption = () =>
  new Option('-s, --scope <scope>', "which MEMORY.md: global (every repository) or repo (this repository's own, shared by its worktrees)")
    .choices(['global', 'repo'])
    .default('global');

const title = (t: Target, scope: Scope = 'global') => (t === 'user' ? 'USER' : scope === 'repo' ? 'REPOSITORY MEMORY' : 'MEMORY');

function usageLine(target: Target, usage: Usage, scope?: Scope): string {
  const pct = usage.limit > 0 ? Math.min(100, Math.floor((usage.chars / usage.limit) * 100)) : 0;
  return `${title(target, scope)} [${pct}% — ${formatCount(usage.chars)}/${formatCount(usage.limit)} chars]`;
}

/** The store options, refused before any request when they name no store. */
function storeOptions(cmd: Command): StoreOptions {
  const opts = globals(cmd) as StoreOptions;
  if (opts.target === 'user' && opts.scope === 'repo') {
    throw new UsageError(
      "USER.md has no repository scope: the user's preferences follow them into every repository. Use --target user alone, or --scope repo for this repository's MEMORY.md.",
    );
  }
  return opts;
}

function entryLines(entries: string[]): string {
  return entries.map((e, i) => `${String(i + 1).padStart(2)}. ${e.replace(/\n/g, '\n    ')}`).join('\n');
}

function humanList(l: Listing): string {
  const head = usageLine(l.target, l.usage, l.scope) + (l.path ? `\n${color.dim(l.path)}` : '');
  if (l.entries.length === 0) return `${head}\n${color.dim('(no entries)')}`;
  return `${head}\n${entryLines(l.entries)}`;
}

/**
 * Outside a work tree, the global store itself (no daemon serves there); undefined inside one,
 * where the daemon answers. A repository's MEMORY.md outside any repository is refused. The
 * store's modules (its threat scan, the config's schema) load only here: inside a work tree the
 * command is one question to the daemon.
 */
async function storeOutsideRepository(opts: StoreOptions): Promise<MemoryStore | undefined> {
  try {
    findRepo();
    return undefined;
  } catch (err) {
    if (!(err instanceof NotARepository)) throw err;
  }
  if (opts.scope === 'repo')
    throw new UsageError(`--scope repo is a repository's own MEMORY.md, and ${process.cwd()} is in no work tree: run it inside the repository.`);
  const home = hermesHome();
  const [{ Memories }, { loadConfig }] = await Promise.all([import('../../memory/memories.js'), import('../../config/load.js')]);
  return new Memories({ globalDir: memoriesDir(home), limits: () => loadConfig({ home }).memory }).global;
}

/** A store's entries and usage: from the daemon, or from the global store itself outside a work tree. */
async function listing(opts: StoreOptions, local: MemoryStore | undefined): Promise<Listing> {
  return local ? local.list(opts.target) : (await daemon()).call<Listing>('GET', `/v1/memory?target=${opts.target}&scope=${opts.scope}`);
}

type WriteBody = { action: 'add' | 'replace' | 'remove'; content?: string; old_text?: string };

/** Sends a write (or makes it, outside a work tree); a refusal becomes exit 1 with the reason (and what it refers to) on stderr. */
async function write(cmd: Command, body: WriteBody): Promise<void> {
  const opts = storeOptions(cmd);
  const local = await storeOutsideRepository(opts);
  let result: WriteResult;
  try {
    if (local) {
      // Made one level at a time, or refused in a sentence: never Node's recursive mkdir under /proc.
      prepareHome(hermesHome());
      result = local.write(opts.target, body) as WriteResult;
    } else result = await (await daemon()).call<WriteResult>('POST', '/v1/memory', { ...body, target: opts.target, scope: opts.scope });
  } catch (err) {
    if ((err instanceof RemoteError || err instanceof MemoryRefused) && err.code === 'memory-refused') {
      const d = (err.details ?? {}) as RefusalDetails;
      const lines = [`hermesd: ${err.message}`];
      if (!opts.json) {
        if (d.matches?.length) lines.push('Matching entries:', ...d.matches.map((m) => `  - ${m}`));
        else if ((d.reason === 'no-match' || d.reason === 'over-budget') && d.entries && d.usage) {
          lines.push(`Current entries, ${usageLine(d.target ?? opts.target, d.usage, opts.scope)}:`, entryLines(d.entries) || '  (none)');
        }
      }
      process.stderr.write(lines.join('\n') + '\n');
      process.exitCode = 1;
      return;
    }
    throw err;
  }
  output(opts, result, () => `${result.message ?? 'Done.'} ${usageLine(result.target, result.usage, opts.scope)}`);
}

/**
 * `<old_text>` as the user gave it, or the entry `memory list` shows under that number: a bare
 * number within the list's range names that entry (sent as its exact text); any other text is
 * matched as before (a unique part, an exact whole entry winning).
 */
async function entryNamed(cmd: Command, oldText: string): Promise<string> {
  if (!/^\d+$/.test(oldText.trim())) return oldText;
  const opts = storeOptions(cmd);
  const l = await listing(opts, await storeOutsideRepository(opts));
  const n = Number(oldText.trim());
  if (l.entries.includes(oldText)) return oldText;
  return n >= 1 && n <= l.entries.length ? l.entries[n - 1]! : oldText;
}

export function register(program: Command): void {
  const memory = program
    .command('memory')
    .description("the memory stores: MEMORY.md (agent notes; --scope repo: this repository's environment facts) and USER.md (user preferences)");

  memory
    .command('list')
    .description('print the entries of a store and its usage')
    .addOption(targetOption())
    .addOption(scopeOption())
    .action(
      action(async (_opts: unknown, cmd: Command) => {
        const opts = storeOptions(cmd);
        const l = await listing(opts, await storeOutsideRepository(opts));
        const shown =
          opts.scope === 'repo'
            ? { target: l.target, scope: l.scope, entries: l.entries, usage: l.usage, path: l.path }
            : { target: l.target, entries: l.entries, usage: l.usage };
        output(opts, shown, () => humanList(l));
      }),
    );

  memory
    .command('add')
    .description('add an entry (a short declarative fact); refused when empty, over budget or failing the threat scan')
    .argument('<content>', 'the entry')
    .addOption(targetOption())
    .addOption(scopeOption())
    .action(action(async (content: string, _opts: unknown, cmd: Command) => write(cmd, { action: 'add', content })));

  memory
    .command('replace')
    .description('replace the one entry containing <old_text> (or numbered <old_text> in `memory list`) with <content>')
    .argument('<old_text>', 'a unique part of the entry (an exact whole entry always wins), or its number in `memory list`')
    .argument('<content>', 'the new entry')
    .addOption(targetOption())
    .addOption(scopeOption())
    .action(
      action(async (oldText: string, content: string, _opts: unknown, cmd: Command) =>
        write(cmd, { action: 'replace', old_text: await entryNamed(cmd, oldText), content }),
      ),
    );

  memory
    .command('remove')
    .description('remove the one entry containing <old_text>, or numbered <old_text> in `memory list` (the last entry too)')
    .argument('<old_text>', 'a unique part of the entry (an exact whole entry always wins), or its number in `memory list`')
    .addOption(targetOption())
    .addOption(scopeOption())
    .action(action(async (oldText: string, _opts: unknown, cmd: Command) => write(cmd, { action: 'remove', old_text: await entryNamed(cmd, oldText) })));
}
