/**
 * Generator verification: a protected generated file may change in a commit only when
 * running the rule's `generator` on the staged sources reproduces the staged generated
 * files byte for byte. Runs in a throwaway checkout of the index, never in the work tree,
 * so the user's files are untouched whatever the generator does.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import picomatch from 'picomatch';
import { GLOB_OPTIONS, type Rule } from '../config/schema.js';
import { gitEnv } from '../git/env.js';
import { gitAsync, plainGitCall, type GitOptions } from '../git/run.js';
import { runCommand, type CommandWrap } from '../process/run.js';

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
    for (const name of LINKED_DEPENDENCY_DIRS) {
      if (existsSync(join(root, name)) && !existsSync(join(dir, name))) symlinkSync(join(root, name), join(dir, name));
    }
    const isProtected = picomatch(rule.protect, GLOB_OPTIONS);
    const excluded = rule.exclude?.length ? picomatch(rule.exclude, GLOB_OPTIONS) : () => false;
    const select = (p: string) => isProtected(p) && !excluded(p);
    const bases = rule.protect.map((g) => picomatch.scan(g).base);
    const before = hashTree(dir, bases, select);
    // Outputs are removed first, so a stale file the generator no longer writes is caught and
    // an up-to-date check (make, mtime-based tools) cannot skip regenerating a hand edit.
    for (const path of before.keys()) rmSync(join(dir, path), { force: true });
    const run = await runGenerator(rule.generator, dir, opts.timeoutMs ?? GENERATOR_TIMEOUT_MS, opts.signal, opts.wrap);
    if (run.error) return { ok: false, mismatches: [], error: run.error, output: run.output, ms: Date.now() - started };
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
    return { ok: mismatches.length === 0, mismatches, output: run.output, ms: Date.now() - started };
  } finally {
    rmSync(dir, { recursive: true, force: true });
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

async function runGenerator(command: string, cwd: string, timeoutMs: number, signal?: AbortSignal, wrap?: CommandWrap): Promise<{ output: string; error?: string }> {
  // Own process group, so a timeout stops the generator's children too. A plain sh runs with
  // git's variables of the hook removed: the generator sees the throwaway checkout, not the commit.
  const r = await runCommand(command, { cwd, env: gitEnv(), wrap, timeoutMs, signal, output: { tailChars: OUTPUT_TAIL_CHARS } });
  const output = r.output.tail;
  const why = r.timedOut ? `timed out after ${timeoutMs} ms` : r.cancelled ? 'aborted' : r.error ? `could not start: ${r.error.message}` : r.exitCode !== 0 ? `exited with ${r.exitCode ?? r.signal}` : undefined;
  return why ? { output, error: `failed: ${why}` } : { output };
}
