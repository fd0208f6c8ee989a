/**
 * Protected paths under `terminal`: a snapshot of every file a `protect` rule covers
 * (content hash, mode and the bytes) before a command, and after it every such file the
 * command created, modified or deleted is put back exactly. Judged on content, not on
 * the command text, so redirects, `sed -i`, scripts and `git checkout` are all caught.
 */
import { createHash, randomBytes } from 'node:crypto';
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync, type Stats } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Rule } from '../config/schema.js';
import { changedGeneratorFiles, GENERATOR_TIMEOUT_MS, verifyGenerator } from '../rules/generator.js';
import { protectMatcher, type GuardConfig, type ProtectMatcher, type ProtectRule } from './guard-config.js';
import { spellingsOf } from '../rules/protected-paths.js';
import { cleanGitEnv } from '../git/env.js';
import { runGit } from '../git/run.js';
import { guardDir } from '../paths/index.js';
import { binShell, runCommandSync, type CommandWrap } from '../process/run.js';

/**
 * `staged`: the index entry of a protected path was changed (e.g. `git checkout <old> -- file`)
 * and has been put back. `note`: why a generator did not excuse it.
 */
export type ProtectedChange = { file: string; rule: string; message: string; change: 'created' | 'modified' | 'deleted' | 'staged'; note?: string };

type Entry = { rule: ProtectRule; sha: string; mode: number; link?: string; bytes?: Buffer; spillFile?: string };

export type ProtectedSnapshot = {
  root: string;
  matcher: ProtectMatcher;
  gitBin: string;
  entries: Map<string, Entry>;
  /** Directories above the entries, all real directories when the snapshot was taken. */
  dirs: Set<string>;
  /** Where bytes past the memory budget were copied; removed by discardSnapshot. */
  spillDir?: string;
};

/** Originals kept in memory up to this many bytes; beyond it they are copied to the spill dir. */
export const SNAPSHOT_MEMORY_MAX_BYTES = 32 * 1024 * 1024;
/** A protect glob without a directory prefix is matched against git's file list; one with a prefix is also walked (ignored files too), up to this many entries. */
const WALK_MAX_ENTRIES = 50_000;

function sha1(buf: Buffer | string): string {
  return createHash('sha1').update(buf).digest('hex');
}

/** Every existing file under the repository that some protect rule covers, tracked, untracked or ignored under a glob's base. */
function protectedFiles(root: string, matcher: ProtectMatcher, gitBin: string): Map<string, ProtectRule> {
  const out = new Map<string, ProtectRule>();
  if (matcher.empty) return out;
  const consider = (rel: string) => {
    if (out.has(rel) || rel.startsWith('.git/')) return;
    const rule = matcher.ruleFor(rel);
    if (rule) out.set(rel, rule);
  };
  let budget = WALK_MAX_ENTRIES;
  let skipped = false;
  const walk = (rel: string) => {
    if (budget-- <= 0) return;
    let st: Stats;
    try {
      st = lstatSync(join(root, rel));
    } catch {
      return;
    }
    if (st.isDirectory()) {
      if (rel === '.git' || rel.endsWith('/.git')) return;
      if (rel === 'node_modules' || rel.endsWith('/node_modules')) {
        skipped = true;
        return;
      }
      for (const name of readdirSync(join(root, rel))) walk(rel ? `${rel}/${name}` : name);
    } else {
      consider(rel);
    }
  };
  // Every spelling of a base the folded globs cover (`gen`, `GEN`, NFD forms: protected-paths.ts).
  for (const base of matcher.bases) if (base) for (const spelt of spellingsOf(root, base, (d) => readdirSync(d))) walk(spelt);
  // Every glob under a directory prefix, walked whole: git's list would add nothing (and costs a
  // process, on every other agent's shell call). A glob without a prefix, a walk cut short or one that
  // left a node_modules out needs it.
  if (matcher.bases.some((b) => !b) || budget <= 0 || skipped) {
    const ls = runGit(gitBin, ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: root, env: cleanGitEnv() });
    if (ls.code === 0) for (const rel of ls.stdout.split('\0')) if (rel) consider(rel);
  }
  // ls-files lists tracked files even when deleted from the work tree; keep only those present.
  for (const rel of [...out.keys()]) {
    try {
      lstatSync(join(root, rel));
    } catch {
      out.delete(rel);
    }
  }
  return out;
}

function readEntry(root: string, rel: string): { sha: string; mode: number; link?: string; bytes?: Buffer } | undefined {
  const abs = join(root, rel);
  let st: Stats;
  try {
    st = lstatSync(abs);
  } catch {
    return undefined;
  }
  if (st.isSymbolicLink()) {
    const link = readlinkSync(abs);
    return { sha: sha1(`link:${link}`), mode: st.mode, link };
  }
  if (!st.isFile()) return { sha: `type:${st.mode & 0o170000}`, mode: st.mode };
  const bytes = readFileSync(abs);
  return { sha: sha1(bytes), mode: st.mode, bytes };
}

/** Takes the snapshot the command will be judged against. Cheap when no rule protects anything. */
export function snapshotProtected(root: string, config: GuardConfig | undefined, opts: { gitBin?: string; spillDir?: string } = {}): ProtectedSnapshot {
  const gitBin = opts.gitBin ?? 'git';
  const matcher = protectMatcher(config);
  const snap: ProtectedSnapshot = { root, matcher, gitBin, entries: new Map(), dirs: new Set() };
  let held = 0;
  for (const [rel, rule] of protectedFiles(root, matcher, gitBin)) {
    const e = readEntry(root, rel);
    if (!e) continue;
    const entry: Entry = { rule, sha: e.sha, mode: e.mode, link: e.link };
    if (e.bytes) {
      if (held + e.bytes.length <= SNAPSHOT_MEMORY_MAX_BYTES || !opts.spillDir) {
        entry.bytes = e.bytes;
        held += e.bytes.length;
      } else {
        snap.spillDir ??= join(opts.spillDir, `snap-${process.pid}-${randomBytes(4).toString('hex')}`);
        mkdirSync(snap.spillDir, { recursive: true, mode: 0o700 });
        entry.spillFile = join(snap.spillDir, e.sha);
        writeFileSync(entry.spillFile, e.bytes);
      }
    }
    snap.entries.set(rel, entry);
    for (let i = rel.lastIndexOf('/'); i > 0; i = rel.lastIndexOf('/', i - 1)) snap.dirs.add(rel.slice(0, i));
  }
  return snap;
}

/**
 * Directories above protected files that are no longer directories (`mv dir away
 * && ln -s away dir`): each is removed (a symbolic link is unlinked, never followed), so the
 * files below are seen as deleted and put back into a real directory.
 */
function undoReplacedDirs(snap: ProtectedSnapshot): string[] {
  const replaced: string[] = [];
  for (const dir of [...snap.dirs].sort((a, b) => a.length - b.length)) {
    if (replaced.some((r) => dir.startsWith(r + '/'))) continue;
    let st: Stats | undefined;
    try {
      st = lstatSync(join(snap.root, dir));
    } catch {
      continue; // gone: the files below come back as deleted ones
    }
    if (st.isDirectory()) continue;
    rmSync(join(snap.root, dir), { force: true });
    replaced.push(dir);
  }
  return replaced;
}

function putBack(root: string, rel: string, entry: Entry): void {
  const abs = join(root, rel);
  const st = (() => {
    try {
      return lstatSync(abs);
    } catch {
      return undefined;
    }
  })();
  if (st && (st.isDirectory() || st.isSymbolicLink() || entry.link !== undefined)) rmSync(abs, { recursive: true, force: true });
  mkdirSync(dirname(abs), { recursive: true });
  if (entry.link !== undefined) {
    symlinkSync(entry.link, abs);
    return;
  }
  const bytes = entry.bytes ?? (entry.spillFile ? readFileSync(entry.spillFile) : undefined);
  if (!bytes) return;
  writeFileSync(abs, bytes);
  chmodSync(abs, entry.mode & 0o7777);
}

/**
 * Compares the work tree with the snapshot and undoes every change to a protected path:
 * modified and deleted files get their bytes and mode back, created ones are removed.
 * `wrap`: how a generator runs in a scratch checkout (the command's sandbox).
 */
export async function restoreProtected(
  snap: ProtectedSnapshot,
  opts: { generatorEnv?: NodeJS.ProcessEnv; runGenerator?: (command: string) => number | null; wrap?: CommandWrap } = {},
): Promise<ProtectedChange[]> {
  if (snap.matcher.empty) return [];
  const { root } = snap;
  const replaced = undoReplacedDirs(snap);
  const diff = () => {
    const found: Array<ProtectedChange & { entry?: Entry }> = [];
    for (const [rel, entry] of snap.entries) {
      const now = readEntry(root, rel);
      if (now && now.sha === entry.sha && (now.mode & 0o7777) === (entry.mode & 0o7777)) continue;
      const underReplaced = replaced.some((d) => rel.startsWith(d + '/'));
      found.push({ file: rel, rule: entry.rule.id, message: entry.rule.message, change: now || underReplaced ? 'modified' : 'deleted', entry });
    }
    for (const [rel, rule] of protectedFiles(root, snap.matcher, snap.gitBin)) {
      if (snap.entries.has(rel)) continue;
      found.push({ file: rel, rule: rule.id, message: rule.message, change: 'created' });
    }
    return found;
  };
  const found = diff();
  const { accepted, ran, notes } = await generatorAccepted(snap, found, opts);
  // A generator is a program: what it wrote besides its own rule's files is judged like the command's writes.
  if (ran) for (const f of diff()) if (!found.some((x) => x.file === f.file)) found.push(f);
  const changes: ProtectedChange[] = [];
  for (const f of found) {
    if (accepted.has(f.rule)) continue;
    if (f.entry) putBack(root, f.file, f.entry);
    else rmSync(join(root, f.file), { recursive: true, force: true });
    const note = notes.get(f.rule);
    changes.push({ file: f.file, rule: f.rule, message: f.message, change: f.change, ...(note ? { note } : {}) });
  }
  return changes;
}

/**
 * Rules whose changed files are exactly what their `generator` produces from the current
 * sources (the seed's "change the schema, run the generator, verify"): those changes stay.
 * The generator is the one committed at HEAD: where the command changed the generator's own
 * files, HEAD's generator is run on the sources in a scratch checkout (the work tree is left
 * as the command left it), and what it does not reproduce is put back with a note that says so.
 */
async function generatorAccepted(
  snap: ProtectedSnapshot,
  found: ProtectedChange[],
  opts: { generatorEnv?: NodeJS.ProcessEnv; runGenerator?: (command: string) => number | null; wrap?: CommandWrap },
): Promise<{ accepted: Set<string>; ran: boolean; notes: Map<string, string> }> {
  const accepted = new Set<string>();
  const notes = new Map<string, string>();
  let ran = false;
  const ruleIds = [...new Set(found.map((f) => f.rule))];
  for (const id of ruleIds) {
    const rule = snap.matcher.rules.find((r) => r.rule.id === id);
    if (!rule?.generator) continue;
    const files = () => [...protectedFiles(snap.root, snap.matcher, snap.gitBin)].filter(([, r]) => r.id === id).map(([f]) => f);
    const edited = await changedGeneratorFiles(snap.root, rule.generator, { worktree: true });
    if (edited.length > 0) {
      const asRule: Rule = { id, message: rule.rule.message, protect: rule.globs, exclude: rule.exclude, generator: rule.generator };
      const r = await verifyGenerator(snap.root, asRule, files(), {
        overlayFromWorktree: worktreeChanges(snap),
        wrap: opts.wrap,
        timeoutMs: GENERATOR_TIMEOUT_MS,
      });
      if (r.ok) accepted.add(id);
      else
        notes.set(
          id,
          `the generator itself was changed (${edited.join(', ')}), and the generator as committed at HEAD does not reproduce these files; a change to a generator is the user's to commit`,
        );
      continue;
    }
    const state = () => new Map(files().map((f) => [f, readEntry(snap.root, f)?.sha]));
    const left = state();
    ran = true;
    const status = opts.runGenerator
      ? opts.runGenerator(rule.generator)
      : runCommandSync(rule.generator, { cwd: snap.root, env: opts.generatorEnv, wrap: binShell, timeoutMs: GENERATOR_TIMEOUT_MS }).status;
    if (status !== 0) continue;
    const regenerated = state();
    if (left.size === regenerated.size && [...left].every(([f, sha]) => regenerated.get(f) === sha)) accepted.add(id);
  }
  return { accepted, ran, notes };
}

/** Tracked files that differ from the index and untracked ones: what a scratch checkout of the index takes from the work tree. */
function worktreeChanges(snap: ProtectedSnapshot): string[] {
  const env = cleanGitEnv();
  const list = (args: string[]) => runGit(snap.gitBin, args, { cwd: snap.root, env }).stdout.split('\0').filter(Boolean);
  return [...new Set([...list(['diff', '--name-only', '-z', '--no-relative']), ...list(['ls-files', '--others', '--exclude-standard', '-z'])])];
}

/**
 * The index half of protection: a protected path's staged entry must be what it was, what
 * HEAD has, or the work-tree file as restored; anything else is put back from `beforeIndex`.
 */
export function restoreProtectedIndex(snap: ProtectedSnapshot, gitDir: string, beforeIndex: Buffer | undefined): ProtectedChange[] {
  if (snap.matcher.empty) return [];
  const env = cleanGitEnv();
  let nowIndex: Buffer | undefined;
  try {
    nowIndex = readFileSync(join(gitDir, 'index'));
  } catch {
    nowIndex = undefined;
  }
  if (!nowIndex || (beforeIndex && beforeIndex.equals(nowIndex))) return [];
  const stage = (indexFile?: string) => {
    const r = runGit(snap.gitBin, ['ls-files', '-s', '-z'], { cwd: snap.root, env: indexFile ? { ...env, GIT_INDEX_FILE: indexFile } : env });
    const out = new Map<string, string>();
    for (const rec of r.stdout.split('\0')) {
      const tab = rec.indexOf('\t');
      if (tab > 0) out.set(rec.slice(tab + 1), rec.slice(0, tab));
    }
    return out;
  };
  let was = new Map<string, string>();
  if (beforeIndex) {
    const tmp = join(guardDir(gitDir), `index-protect-${process.pid}`);
    mkdirSync(dirname(tmp), { recursive: true });
    writeFileSync(tmp, beforeIndex);
    try {
      was = stage(tmp);
    } finally {
      rmSync(tmp, { force: true });
    }
  }
  const now = stage();
  const head = new Map<string, string>();
  const tree = runGit(snap.gitBin, ['ls-tree', '-r', '-z', 'HEAD'], { cwd: snap.root, env });
  for (const rec of tree.stdout.split('\0')) {
    const m = /^(\d+) blob ([0-9a-f]+)\t(.*)$/s.exec(rec);
    if (m) head.set(m[3]!, `${m[1]} ${m[2]} 0`);
  }
  const changes: ProtectedChange[] = [];
  const info: string[] = [];
  for (const path of new Set([...was.keys(), ...now.keys()])) {
    const rule = snap.matcher.ruleFor(path);
    if (!rule) continue;
    const b = was.get(path);
    const n = now.get(path);
    if (b === n || (n !== undefined && n === head.get(path))) continue;
    if (n !== undefined) {
      const work = runGit(snap.gitBin, ['hash-object', '--', path], { cwd: snap.root, env }).stdout.trim();
      if (work && n.split(' ')[1] === work) continue;
    }
    info.push(b ? `${b}\t${path}` : `0 ${'0'.repeat(40)}\t${path}`);
    changes.push({ file: path, rule: rule.id, message: rule.message, change: 'staged' });
  }
  if (info.length === 0) return changes;
  const restoring = new Set(changes.map((c) => c.file));
  const onlyProtected = [...new Set([...was.keys(), ...now.keys()])].every((p) => was.get(p) === now.get(p) || restoring.has(p));
  // When the command changed nothing else in the index, the old bytes come back verbatim (stat data included).
  if (onlyProtected && beforeIndex) writeFileSync(join(gitDir, 'index'), beforeIndex);
  else runGit(snap.gitBin, ['update-index', '--index-info'], { cwd: snap.root, env, input: info.join('\n') + '\n' });
  return changes;
}

export function discardSnapshot(snap: ProtectedSnapshot): void {
  if (snap.spillDir) rmSync(snap.spillDir, { recursive: true, force: true });
  snap.entries.clear();
}

/** One line per change, for the tool result the model reads. */
export function describeProtectedChanges(changes: ProtectedChange[]): string {
  return changes
    .map(
      (c) =>
        `${c.file} was ${c.change === 'staged' ? 'changed in the index' : c.change} by the command and has been restored: protected by rule ${c.rule} (${c.message})${c.note ? `; ${c.note}` : ''}`,
    )
    .join('\n');
}

/**
 * The rule of the protected file that `st` (an existing file with more than one name) is a hard
 * link of: a program that writes it in place writes the protected file. Asked only of a file
 * with a second name, so the walk of the protected paths is rarely paid.
 */
export function hardLinkedProtected(root: string, config: GuardConfig | undefined, gitBin: string, st: Stats): ProtectRule | undefined {
  const matcher = protectMatcher(config);
  if (matcher.empty || st.nlink < 2) return undefined;
  for (const [rel, rule] of protectedFiles(root, matcher, gitBin)) {
    try {
      const p = lstatSync(join(root, rel));
      if (p.ino === st.ino && p.dev === st.dev) return rule;
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}
