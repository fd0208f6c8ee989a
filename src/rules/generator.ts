/**
 * Generator verification: a protected generated file may change in a commit only when
 * running the rule's `generator` on the staged sources reproduces the staged generated
 * files byte for byte. Runs in a throwaway checkout of the index, never in the work tree,
 * so the user's files are untouched whatever the generator does.
 *
 * The generator is the one committed at HEAD: a generator edited in the same change as its
 * output would otherwise vouch for whatever it was edited to write. Its files are the programs
 * its command runs (`sh gen.sh` → gen.sh, `node tools/gen.mjs schema.json` → tools/gen.mjs;
 * `npm run gen` → package.json and the programs its script runs; `make` → the Makefile); where
 * the snapshot changed one of them, HEAD's version is put back in the checkout before the
 * generator runs, and the result says which changed.
 */
import { readTextIfAny } from '../storage/read.js';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Rule } from '../config/schema.js';
import { gitEnv } from '../git/env.js';
import { parseNulList } from '../git/diff-parse.js';
import { gitAsync, gitAsyncTry, plainGitCall, type GitOptions } from '../git/run.js';
import { runCommand, type CommandWrap } from '../process/run.js';
import { compileProtect, globBase } from './protected-paths.js';

/** A generator that runs longer than this is stopped and the change is not excused (2 min: codegen is usually seconds). */
export const GENERATOR_TIMEOUT_MS = 120_000;
/** Output kept to explain a failing generator. */
const OUTPUT_TAIL_CHARS = 4000;
/** Folders restored by a package manager rather than tracked: linked into the checkout so `npm run gen` works. */
const LINKED_DEPENDENCY_DIRS = ['node_modules'];

export type GeneratorMismatch = { path: string; reason: 'differs' | 'not produced by the generator' | 'produced by the generator but not staged' };

export type GeneratorResult = {
  ok: boolean;
  /** Protected files where the regenerated output and the snapshot disagree. */
  mismatches: GeneratorMismatch[];
  /** The generator itself failed (exit code, timeout, could not start). */
  error?: string;
  /** The generator's own files that the snapshot changed: HEAD's versions were run instead. */
  generatorChanged?: string[];
  /** Tail of the generator's stdout+stderr. */
  output: string;
  ms: number;
};

export type GeneratorOptions = GitOptions & {
  timeoutMs?: number;
  wrap?: CommandWrap;
  /** Judge the work tree instead of the index: these paths are copied from it (or removed when absent there). */
  overlayFromWorktree?: string[];
};

/**
 * Checks out the staged snapshot into a temp dir, deletes the files under `rule.protect`,
 * runs `rule.generator` there (sh -c), and compares what it writes under `rule.protect`
 * with the snapshot's files byte for byte. `stagedPaths` are the changed
 * protected paths that prompted the check (kept for the report); the comparison covers the
 * whole protected set, so a generator that would add or drop a file is caught too.
 */
export async function verifyGenerator(root: string, rule: Rule, stagedPaths: string[], opts: GeneratorOptions = {}): Promise<GeneratorResult> {
  const started = Date.now();
  if (!rule.generator || !rule.protect?.length) {
    return { ok: false, mismatches: [], error: `rule ${rule.id} has no generator`, output: '', ms: 0 };
  }
  const dir = mkdtempSync(join(tmpdir(), 'hermesd-gen-'));
  try {
    await gitAsync(['checkout-index', '-a', '-f', `--prefix=${dir}/`], plainGitCall(root, opts));
    if (opts.overlayFromWorktree) overlay(root, dir, opts.overlayFromWorktree);
    const edited = await changedGeneratorFiles(root, rule.generator, { ...opts, worktree: opts.overlayFromWorktree !== undefined });
    if (edited.length > 0) await headVersions(root, dir, edited, opts);
    const generatorChanged = edited.length > 0 ? { generatorChanged: edited } : {};
    for (const name of LINKED_DEPENDENCY_DIRS) {
      if (existsSync(join(root, name)) && !existsSync(join(dir, name))) symlinkSync(join(root, name), join(dir, name));
    }
    const select = compileProtect(rule)!.covers;
    const bases = rule.protect.map(globBase);
    const before = hashTree(dir, bases, select);
    // Outputs are removed first, so a stale file the generator no longer writes is caught and
    // an up-to-date check (make, mtime-based tools) cannot skip regenerating a hand edit.
    for (const path of before.keys()) rmSync(join(dir, path), { force: true });
    const run = await runGenerator(rule.generator, dir, opts.timeoutMs ?? GENERATOR_TIMEOUT_MS, opts.signal, opts.wrap);
    if (run.error) return { ok: false, mismatches: [], error: run.error, output: run.output, ms: Date.now() - started, ...generatorChanged };
    const after = hashTree(dir, bases, select);
    const mismatches: GeneratorMismatch[] = [];
    for (const [path, hash] of before) {
      const now = after.get(path);
      if (now === undefined) mismatches.push({ path, reason: 'not produced by the generator' });
      else if (now !== hash) mismatches.push({ path, reason: 'differs' });
    }
    for (const path of after.keys()) if (!before.has(path)) mismatches.push({ path, reason: 'produced by the generator but not staged' });
    // Changed paths first: they are what the user is committing.
    const changed = new Set(stagedPaths);
    mismatches.sort((a, b) => Number(changed.has(b.path)) - Number(changed.has(a.path)) || (a.path < b.path ? -1 : 1));
    return { ok: mismatches.length === 0, mismatches, output: run.output, ms: Date.now() - started, ...generatorChanged };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Package managers whose `<pm> [run] <script>` runs a package.json script. */
const SCRIPT_RUNNERS = new Set(['npm', 'pnpm', 'yarn', 'bun']);
const MAKEFILES = ['Makefile', 'makefile', 'GNUmakefile'];
/** Programs that run the script file named after their options: that file is the generator's own code. */
const INTERPRETERS = new Set([
  'sh',
  'bash',
  'dash',
  'zsh',
  'ksh',
  'node',
  'deno',
  'tsx',
  'ts-node',
  'python',
  'python3',
  'ruby',
  'perl',
  'php',
  'Rscript',
  'lua',
  'awk',
  'go',
]);
/** How deep `npm run` scripts naming other scripts are followed. */
const SCRIPT_DEPTH = 3;

/** The simple commands of a command line (split at ;, &&, ||, |, newlines), each as its words, quotes taken off (no expansion). */
function simpleCommands(command: string): string[][] {
  return command.split(/&&|\|\||[;|\n]/).map((part) => {
    const words: string[] = [];
    for (const m of part.matchAll(/"((?:[^"\\]|\\.)*)"|'([^']*)'|([^\s()<>"']+)/g)) words.push(m[1] ?? m[2] ?? m[3] ?? '');
    // Leading VAR=value assignments are not the command.
    while (words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[0]!)) words.shift();
    return words.filter(Boolean);
  });
}

/**
 * The repository-relative files that are a generator command's own code — the programs it
 * runs, not their input: `sh gen.sh` and `./gen.sh` → gen.sh, `node tools/gen.mjs schema.json`
 * → tools/gen.mjs; for a package manager's script, package.json and the programs the script
 * runs (`scripts` gives the script's text in each package.json version asked); for make, the
 * Makefile. Candidates: some name no file.
 */
function generatorCandidates(command: string, scripts: (name: string) => string[], depth = 0): string[] {
  const out = new Set<string>();
  const add = (w: string | undefined) => {
    const p = w?.replace(/^\.\//, '');
    if (p && !p.startsWith('-') && !p.startsWith('/') && !p.startsWith('..') && !p.includes('$')) out.add(p);
  };
  for (const words of simpleCommands(command)) {
    const [cmd, ...args] = words;
    if (!cmd) continue;
    const program = cmd.replace(/^.*\//, '');
    if (INTERPRETERS.has(program)) {
      // `python -m pkg`, `node -e code`: no file of the repository's named.
      const script = args.find((a) => !a.startsWith('-'));
      if (!args.some((a) => a === '-m' || a === '-e' || a === '-c') && program !== 'go') add(script);
      else if (program === 'go' && args[0] === 'run') add(args.find((a, i) => i > 0 && !a.startsWith('-')));
    } else if (SCRIPT_RUNNERS.has(program)) {
      out.add('package.json');
      // `npm run --silent gen`, `yarn gen`, `pnpm run -r gen`: the first word after the command that is not an option.
      const rest = args.filter((x) => !x.startsWith('-'));
      const name = rest[0] === 'run' || rest[0] === 'run-script' ? rest[1] : rest[0];
      if (name && depth < SCRIPT_DEPTH) for (const text of scripts(name)) for (const f of generatorCandidates(text, scripts, depth + 1)) out.add(f);
    } else if (program === 'make' || program === 'gmake') {
      for (const f of MAKEFILES) out.add(f);
    } else if (cmd.includes('/')) {
      // A program of the repository run by its path.
      add(cmd);
    }
  }
  return [...out];
}

/** package.json's `scripts[name]` in a text (undefined when there is none). */
function scriptOf(text: string | undefined, name: string): string | undefined {
  if (!text) return undefined;
  try {
    const s = (JSON.parse(text) as { scripts?: Record<string, unknown> }).scripts?.[name];
    return typeof s === 'string' ? s : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The generator's own files (generatorCandidates) that the staged snapshot — or with
 * `worktree`, the work tree — changed since HEAD. Empty without a HEAD to compare with.
 */
export async function changedGeneratorFiles(root: string, command: string, opts: GitOptions & { worktree?: boolean } = {}): Promise<string[]> {
  const call = plainGitCall(root, opts);
  const head = await gitAsyncTry(['rev-parse', '--verify', '-q', 'HEAD^{commit}'], call);
  if (head.status !== 0) return [];
  const packageJson = async (spec: string) => {
    const r = await gitAsyncTry(['cat-file', 'blob', spec], call);
    return r.status === 0 ? r.stdout : undefined;
  };
  const [atHead, now] = await Promise.all([
    packageJson('HEAD:package.json'),
    opts.worktree ? Promise.resolve(readTextIfAny(join(root, 'package.json'))) : packageJson(':package.json'),
  ]);
  const candidates = generatorCandidates(command, (name) => [scriptOf(atHead, name), scriptOf(now, name)].filter((x): x is string => x !== undefined));
  if (candidates.length === 0) return [];
  const diff = await gitAsyncTry(
    ['--literal-pathspecs', 'diff', '--name-only', '-z', '--no-renames', ...(opts.worktree ? [] : ['--cached']), 'HEAD', '--', ...candidates],
    call,
  );
  // Files the command names, not what lies under a word that names a folder (`gen` of `npm run gen`).
  const named = new Set(candidates);
  return diff.status === 0 ? parseNulList(diff.stdout).filter((f) => named.has(f)) : [];
}

/** Puts HEAD's version of each of `files` into the checkout `dir` (removing the ones HEAD does not have). */
async function headVersions(root: string, dir: string, files: string[], opts: GitOptions): Promise<void> {
  const call = plainGitCall(root, opts);
  const listing = await gitAsync(['--literal-pathspecs', 'ls-tree', '-z', 'HEAD', '--', ...files], call);
  const atHead = new Map<string, { mode: string; id: string }>();
  for (const rec of parseNulList(listing)) {
    const m = /^(\d+) blob ([0-9a-f]+)\t(.*)$/s.exec(rec);
    if (m) atHead.set(m[3]!, { mode: m[1]!, id: m[2]! });
  }
  for (const file of files) {
    const target = join(dir, file);
    rmSync(target, { force: true, recursive: true });
    const entry = atHead.get(file);
    if (!entry) continue;
    mkdirSync(dirname(target), { recursive: true });
    if (entry.mode === '120000') symlinkSync((await gitAsync(['cat-file', 'blob', entry.id], call)).toString('utf8'), target);
    else {
      writeFileSync(target, await gitAsync(['cat-file', 'blob', entry.id], call));
      chmodSync(target, entry.mode === '100755' ? 0o755 : 0o644);
    }
  }
}

function overlay(root: string, dir: string, paths: string[]): void {
  for (const rel of paths) {
    const from = join(root, rel);
    const to = join(dir, rel);
    let st;
    try {
      st = lstatSync(from);
    } catch {
      rmSync(to, { force: true });
      continue;
    }
    rmSync(to, { force: true, recursive: true });
    mkdirSync(dirname(to), { recursive: true });
    if (st.isSymbolicLink()) symlinkSync(readlinkSync(from), to);
    else if (st.isFile()) copyFileSync(from, to);
  }
}

/** sha256 of each regular file under the glob bases that `select` accepts. */
function hashTree(dir: string, bases: string[], select: (rel: string) => boolean): Map<string, string> {
  const out = new Map<string, string>();
  const roots = bases.some((b) => b === '' || b === '.') ? [''] : [...new Set(bases)];
  const visit = (rel: string) => {
    const full = rel ? join(dir, rel) : dir;
    let st;
    try {
      st = lstatSync(full);
    } catch {
      return;
    }
    if (st.isDirectory()) {
      for (const name of readdirSync(full)) {
        if (!rel && LINKED_DEPENDENCY_DIRS.includes(name)) continue;
        visit(rel ? `${rel}/${name}` : name);
      }
    } else if (select(rel)) {
      const content = st.isSymbolicLink() ? Buffer.from(`symlink:${readlinkSync(full)}`) : readFileSync(full);
      out.set(rel, createHash('sha256').update(content).digest('hex'));
    }
  };
  for (const r of roots) visit(r);
  return out;
}

async function runGenerator(
  command: string,
  cwd: string,
  timeoutMs: number,
  signal?: AbortSignal,
  wrap?: CommandWrap,
): Promise<{ output: string; error?: string }> {
  // Own process group, so a timeout stops the generator's children too. A plain sh runs with
  // git's variables of the hook removed: the generator sees the throwaway checkout, not the commit.
  const r = await runCommand(command, { cwd, env: gitEnv(), wrap, timeoutMs, signal, output: { tailChars: OUTPUT_TAIL_CHARS } });
  const output = r.output.tail;
  const why = r.timedOut
    ? `timed out after ${timeoutMs} ms`
    : r.cancelled
      ? 'aborted'
      : r.error
        ? `could not start: ${r.error.message}`
        : r.exitCode !== 0
          ? `exited with ${r.exitCode ?? r.signal}`
          : undefined;
  return why ? { output, error: `failed: ${why}` } : { output };
}
