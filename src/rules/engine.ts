/**
 * The rule engine: judges a set of changes against the repository's rules. Plain
 * functions over a config and a work tree root; the agent's file tools call
 * `protectedBy`, the pre-commit hook and `hermesd check` call `checkStaged` /
 * `checkWorktree`. It knows nothing of the daemon.
 *
 * Fast path (pre-commit): ONE git process, `diff --cached --raw -z -U0`, gives what changed
 * (with renames and modes) and the added lines, parsed as a stream; files git shows as binary
 * are read from the object store (src/git/stored-diff.ts: what git stores, whatever
 * attributes, encodings, replace refs or grafts make it show). The work tree is never read
 * for a staged check.
 */
import { join } from 'node:path';
import picomatch from 'picomatch';
import { GLOB_OPTIONS, type HermesConfig, type Rule } from '../config/schema.js';
import { diffTreeSplitter, GITLINK_MODE, parseNulList, parseRawZ, patchParser, textLinesOf, type Change, type PatchVisitor } from '../git/diff-parse.js';
import { lineSplitter } from '../git/parse.js';
import { startDiffTree, type CommitDiff, type StartedDiffs } from '../git/diff-tree.js';
import { gitAsync, plainGitCall, type GitOptions } from '../git/run.js';
import { cacheTreeOf, stagedTreeOf } from '../git/index-file.js';
import { addedLinesOfFile, judgeUnshown, MAX_JUDGED_FILE_BYTES, readStoredObjects, seeingVisitor, storedDiff, type PatchSeen } from '../git/stored-diff.js';
import type { CommandWrap } from '../process/run.js';
import { verifyGenerator, type GeneratorResult } from './generator.js';
import { compileProtect, type CompiledProtect } from './protected-paths.js';
import { SecretScanner } from './secrets-judge.js';

export type Violation = {
  rule: string;
  file: string;
  /** 1-based line in the new file; 0 when the violation is about the whole file (protect). */
  line: number;
  message: string;
};

export type CheckResult = {
  violations: Violation[];
  /** What the judgement notes beside its violations (findings past the listed number, generators not run); not violations. */
  warnings: string[];
  /** Changed paths that were judged. */
  files: number;
};

const MIB = 1024 * 1024;
/** The empty tree of a SHA-1 repository: the base a root commit is compared with. */
const EMPTY_TREE_SHA1 = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
/** One file repeating a forbidden pattern does not need a thousand lines of report. */
export const MAX_VIOLATIONS_PER_FILE_RULE = 50;

export type CheckOptions = GitOptions & {
  /** Run `generator` commands to excuse regenerated protected files (default true). */
  runGenerators?: boolean;
  generatorTimeoutMs?: number;
  /** How generators run (the guard's sandbox for a commit made in one). */
  wrap?: CommandWrap;
};

type Matcher = (path: string) => boolean;
type CompiledRule = { rule: Rule; protect?: CompiledProtect<Rule>; exclude?: Matcher; paths?: Matcher; forbid?: RegExp; secrets?: { allow: RegExp[] } };

const compiled = new WeakMap<HermesConfig, CompiledRule[]>();

/** The config's rules with globs and regexes compiled once per config object. */
export function compileRules(config: HermesConfig): CompiledRule[] {
  let out = compiled.get(config);
  if (!out) {
    const glob = (gs: string[] | undefined) => (gs && gs.length ? picomatch(gs, GLOB_OPTIONS) : undefined);
    out = config.rules.map((rule) => ({
      rule,
      protect: compileProtect(rule),
      exclude: glob(rule.exclude),
      paths: rule.forbid !== undefined || rule.secrets === true ? (glob(rule.paths) ?? (() => true)) : undefined,
      forbid: rule.forbid !== undefined ? new RegExp(rule.forbid) : undefined,
      secrets: rule.secrets === true ? { allow: (rule.allow ?? []).map((a) => new RegExp(a)) } : undefined,
    }));
    compiled.set(config, out);
  }
  return out;
}

/** The first rule whose `protect` globs cover `relPath` (tools refuse to write it, quoting the rule). */
export function protectedBy(config: HermesConfig, relPath: string): Rule | undefined {
  for (const c of compileRules(config)) {
    if (c.protect?.covers(relPath)) return c.rule;
  }
  return undefined;
}

/** The content rules (forbid, secrets) that apply to `path`. */
function contentRulesFor(rules: CompiledRule[], path: string): CompiledRule[] {
  return rules.filter((c) => (c.forbid || c.secrets) && c.paths!(path) && !c.exclude?.(path));
}

/**
 * Judges added lines: forbid rules line by line, secrets rules on runs of consecutive lines
 * (src/rules/secrets-judge.ts). Violations are bounded per file and per rule; call `end()`
 * after the last line.
 */
class ContentJudge {
  readonly violations: Violation[] = [];
  private readonly warned = new Set<string>();
  private current:
    | { path: string; all: CompiledRule[]; rules: CompiledRule[]; scanners: SecretScanner[]; bytes: number; counts: Map<string, number>; stopped: boolean }
    | undefined;

  constructor(private readonly rules: CompiledRule[]) {}

  get warnings(): string[] {
    return [...this.warned];
  }

  /**
   * The content violations, minus lines that are not content: a submodule's patch is its
   * commit id. (The patch streams in before the raw listing that says which paths those are, so
   * they are dropped here.) A symlink's patch is its target, which git stores as a blob: content.
   */
  contentViolations(changes: Change[]): Violation[] {
    const skip = new Set(changes.filter((c) => c.newMode === GITLINK_MODE).map((c) => c.path));
    return skip.size ? this.violations.filter((v) => !skip.has(v.file)) : this.violations;
  }

  get active(): boolean {
    return this.rules.some((c) => c.forbid || c.secrets);
  }

  file(path: string): boolean {
    this.end();
    const rules = contentRulesFor(this.rules, path);
    if (rules.length === 0) return false;
    const counts = new Map<string, number>();
    const cur = { path, all: rules, rules: rules.filter((c) => c.forbid), scanners: [] as SecretScanner[], bytes: 0, counts, stopped: false };
    this.current = cur;
    for (const c of rules) {
      if (!c.secrets) continue;
      cur.scanners.push(
        new SecretScanner(path, c.secrets.allow, (f) =>
          this.found(cur, c, f.line, `${c.rule.message} (${f.ruleId}: ${f.line === 0 ? 'the file itself' : f.masked})`),
        ),
      );
    }
    return true;
  }

  /**
   * An added line. `cut`: what follows was not read (a line, or a file, over MAX_JUDGED_FILE_BYTES;
   * line 0: the whole file): each content rule of the file refuses it, since a file passed unread
   * would be a way around them.
   */
  line(line: number, text: string, cut: boolean): void {
    const cur = this.current;
    if (!cur || cur.stopped) return;
    cur.bytes += text.length + 1;
    if (cut || cur.bytes > MAX_JUDGED_FILE_BYTES) {
      cur.stopped = true;
      const bound = `${MAX_JUDGED_FILE_BYTES / MIB} MiB`;
      const why = `not judged: ${cur.path} is over the ${bound} of one file hermesd reads; keep such files out of git (Git LFS) or out of this rule's paths`;
      for (const c of cur.all) this.found(cur, c, line, `${c.rule.message} (${why})`);
      return;
    }
    for (const c of cur.rules) {
      c.forbid!.lastIndex = 0;
      if (c.forbid!.test(text)) this.found(cur, c, line, c.rule.message);
    }
    for (const s of cur.scanners) s.line(line, text);
  }

  /** The file's last run of lines (secrets judge runs whole). */
  end(): void {
    const cur = this.current;
    this.current = undefined;
    for (const s of cur?.scanners ?? []) s.flush();
  }

  private found(cur: { path: string; counts: Map<string, number> }, c: CompiledRule, line: number, message: string): void {
    const n = (cur.counts.get(c.rule.id) ?? 0) + 1;
    cur.counts.set(c.rule.id, n);
    if (n <= MAX_VIOLATIONS_PER_FILE_RULE) this.violations.push({ rule: c.rule.id, file: cur.path, line, message });
    else if (n === MAX_VIOLATIONS_PER_FILE_RULE + 1)
      this.warned.add(
        `${cur.path}: more than ${MAX_VIOLATIONS_PER_FILE_RULE} lines match rule ${c.rule.id}; only the first ${MAX_VIOLATIONS_PER_FILE_RULE} are listed.`,
      );
  }
}

/** Protect rules: any change touching a protected path (either side of a rename). */
function protectViolations(rules: CompiledRule[], changes: Change[]): Map<CompiledRule, Violation[]> {
  const byRule = new Map<CompiledRule, Violation[]>();
  for (const c of rules) {
    if (!c.protect) continue;
    const found: Violation[] = [];
    const seen = new Set<string>();
    for (const ch of changes) {
      for (const p of ch.oldPath !== undefined ? [ch.oldPath, ch.path] : [ch.path]) {
        if (seen.has(p) || !c.protect.covers(p)) continue;
        seen.add(p);
        found.push({ rule: c.rule.id, file: p, line: 0, message: c.rule.message });
      }
    }
    if (found.length) byRule.set(c, found);
  }
  return byRule;
}

/** Drops protect violations a generator excuses; explains the ones it does not. */
async function applyGenerators(
  root: string,
  byRule: Map<CompiledRule, Violation[]>,
  mode: { source: 'index' } | { source: 'worktree'; overlay: () => Promise<string[]> },
  opts: CheckOptions,
  warnings: string[],
): Promise<Violation[]> {
  const out: Violation[] = [];
  for (const [c, found] of byRule) {
    if (!c.rule.generator || opts.runGenerators === false) {
      out.push(...found);
      continue;
    }
    const result: GeneratorResult = await verifyGenerator(
      root,
      c.rule,
      found.map((v) => v.file),
      {
        indexFile: opts.indexFile,
        signal: opts.signal,
        timeoutMs: opts.generatorTimeoutMs,
        wrap: opts.wrap,
        overlayFromWorktree: mode.source === 'worktree' ? await mode.overlay() : undefined,
      },
    );
    if (result.ok) continue;
    const gen = `generator \`${c.rule.generator}\``;
    // The generator itself changed: its output was judged with HEAD's generator, and a change to the generator is the user's to commit.
    const edited = result.generatorChanged?.length
      ? ` The generator itself changed in this commit (${result.generatorChanged.join(', ')}): generated files are judged with the generator as committed at HEAD. A change to a generator needs the user's commit: commit it on its own first (then the next commit's output is judged with it), or commit this once with HERMESD_SKIP=1.`
      : '';
    if (result.error) {
      // Nothing was regenerated, so no change under the rule is excused.
      for (const v of found) out.push({ ...v, message: `${v.message} (${gen} ${result.error})${edited}` });
    } else {
      // Files the generator reproduced are excused; the ones it did not are the violations.
      for (const m of result.mismatches) {
        out.push({ rule: c.rule.id, file: m.path, line: 0, message: `${c.rule.message} (${gen}: regenerated file ${m.reason})${edited}` });
      }
    }
    if (result.error && result.output)
      warnings.push(`generator of rule ${c.rule.id} (${c.rule.generator}): ${result.output.trim().split('\n').slice(-5).join(' | ')}`);
  }
  return out;
}

/** Violations in the order every report gives them: by file, line, then rule. */
export function sortViolations(vs: Violation[]): Violation[] {
  return vs.sort((a, b) => (a.file < b.file ? -1 : a.file > b.file ? 1 : a.line - b.line || (a.rule < b.rule ? -1 : a.rule > b.rule ? 1 : 0)));
}

/**
 * One git process for both answers (src/git/stored-diff.ts): the listing of what changed,
 * and each added line judged as the patch streams. Without forbid rules only the listing
 * is asked for.
 */
async function diffAndJudge(root: string, range: string[], judge: ContentJudge, opts: GitOptions & { worktree?: boolean }): Promise<Change[]> {
  const changes = await storedDiff(
    root,
    range,
    judge.active ? { file: (path) => judge.file(path), added: (_path, line, text, cut) => judge.line(line, text, cut) } : undefined,
    opts,
  );
  judge.end();
  return changes;
}

/**
 * Judges exactly the staged snapshot (the index against HEAD), as pre-commit sees it.
 * Reads nothing from the work tree. `since`: a tree already judged; only what the index
 * changed since then is judged (the re-check after a formatter re-staged files).
 */
export async function checkStaged(root: string, config: HermesConfig, opts: CheckOptions & { since?: string } = {}): Promise<CheckResult> {
  return (await judgeStaged(root, config, opts)).result;
}

/** `checkStaged`, and the changes it judged (undefined: no rule, so no diff was read). */
export async function judgeStaged(
  root: string,
  config: HermesConfig,
  opts: CheckOptions & { since?: string } = {},
): Promise<{ result: CheckResult; changes?: Change[] }> {
  const rules = compileRules(config);
  if (rules.length === 0) return { result: { violations: [], warnings: [], files: 0 } };
  const judge = new ContentJudge(rules);
  const changes = await diffAndJudge(root, opts.since ? ['--cached', opts.since] : ['--cached'], judge, opts);
  const warnings = judge.warnings;
  const protect = await applyGenerators(root, protectViolations(rules, changes), { source: 'index' }, opts, warnings);
  return { result: { violations: sortViolations([...protect, ...judge.contentViolations(changes)]), warnings, files: changes.length }, changes };
}

/**
 * Judges the work tree's changes against HEAD: tracked changes (staged or not) plus
 * untracked files that are not ignored.
 */
export async function checkWorktree(root: string, config: HermesConfig, opts: CheckOptions = {}): Promise<CheckResult> {
  const rules = compileRules(config);
  if (rules.length === 0) return { violations: [], warnings: [], files: 0 };
  const judge = new ContentJudge(rules);
  const base = await headOrEmptyTree(root, opts);
  const [changes, untracked] = await Promise.all([
    diffAndJudge(root, [base], judge, { ...opts, worktree: true }),
    gitAsync(['ls-files', '--others', '--exclude-standard', '-z'], plainGitCall(root, opts)).then(parseNulList),
  ]);
  if (judge.active) for (const path of untracked) judgeUntracked(root, path, judge);
  const all: Change[] = [...changes, ...untracked.map((path) => ({ status: 'A' as const, path, oldMode: '000000', newMode: '100644' }))];
  const warnings = judge.warnings;
  const overlay = async () => {
    const dirty = await gitAsync(['diff', '--name-only', '-z', '--no-relative'], plainGitCall(root, opts)).then(parseNulList);
    return [...new Set([...dirty, ...untracked])];
  };
  const protect = await applyGenerators(root, protectViolations(rules, all), { source: 'worktree', overlay }, opts, warnings);
  return { violations: sortViolations([...protect, ...judge.contentViolations(all)]), warnings, files: all.length };
}

/**
 * What `git commit` would record beyond what the index stages: a valid cache tree ("TREE"
 * extension) is committed as it is, and one written by something other than git can name a
 * tree other than the index's entries — which `git diff --cached`, and so `checkStaged`, does
 * not show. When the two differ, the tree the cache names is judged against HEAD as a commit
 * is. `trees`: what was judged (the staged files' tree, and the cache tree's when it differs),
 * for the record of what the pre-commit passed.
 */
export async function checkCommittedTree(
  root: string,
  config: HermesConfig,
  indexFile: string,
  opts: GitOptions & { snapshot?: { tree?: string; cacheTree?: string } } = {},
): Promise<CheckResult & { trees: string[] }> {
  // `snapshot`: both trees from the read the staged verdict was found by (one snapshot, one read of the file); else read now.
  const committed = opts.snapshot ? opts.snapshot.cacheTree : cacheTreeOf(indexFile);
  const staged = committed ? (opts.snapshot ? opts.snapshot.tree : stagedTreeOf(indexFile)) : undefined;
  if (!committed || !staged || committed === staged) return { violations: [], warnings: [], files: 0, trees: staged ? [staged] : [] };
  const base = await headOrEmptyTree(root, opts);
  const r = await checkCommit(root, config, committed, { ...opts, base });
  const note = ` (in tree ${committed.slice(0, 10)}, which the index's cache tree names and git would commit; the staged files \`git diff --cached\` shows are tree ${staged.slice(0, 10)})`;
  return {
    violations: r.violations.map((v) => ({ ...v, message: v.message + note })),
    warnings: [
      ...r.warnings,
      `the index's cache tree names tree ${committed.slice(0, 10)}, not the staged files' tree ${staged.slice(0, 10)}: git would commit the cache tree's, so it was judged too. To commit what is staged, rebuild the index: git reset -q, then git add the files again.`,
    ],
    files: r.files,
    trees: [staged, committed],
  };
}

// --- added by the guard: post-commit re-check of a commit the pre-commit hook never saw ---
/**
 * Judges one commit against its first parent (a root commit against the empty tree): what
 * post-commit re-checks when the pre-commit hook was skipped. Generators are not run (the
 * work tree may already differ); protect violations of generator rules say so.
 */
export async function checkCommit(root: string, config: HermesConfig, commit = 'HEAD', opts: GitOptions & { base?: string } = {}): Promise<CheckResult> {
  const rules = compileRules(config);
  if (rules.length === 0) return { violations: [], warnings: [], files: 0 };
  const judge = new ContentJudge(rules);
  // `base`: judge only what changed since that tree or commit (what the pre-commit did not see).
  const parent =
    opts.base ??
    (await gitAsync(['rev-parse', '--verify', '-q', `${commit}^1`], plainGitCall(root, opts))
      .then((b) => b.toString('utf8').trim())
      .catch(() => EMPTY_TREE_SHA1));
  const changes = await diffAndJudge(root, [parent, commit], judge, opts);
  return {
    violations: sortViolations([...unverifiedProtect(rules, changes), ...judge.contentViolations(changes)]),
    warnings: judge.warnings,
    files: changes.length,
  };
}
// --- end guard addition ---

/** Protect violations of a commit judged after the fact: a generator rule's say that its generator was not run. */
function unverifiedProtect(rules: CompiledRule[], changes: Change[]): Violation[] {
  const out: Violation[] = [];
  for (const [c, found] of protectViolations(rules, changes)) {
    const note = c.rule.generator ? ` (generator \`${c.rule.generator}\` not verified: the pre-commit hook did not run)` : '';
    out.push(...found.map((v) => ({ ...v, message: v.message + note })));
  }
  return out;
}

/**
 * A line patchParser has no use for, whatever its state: `-` starts a removed line (of one
 * parent at least, in a merge's combined diff) or the `---` header. A thousand commits' patches
 * are half removed lines; not handing them over saves their allocation.
 */
const removedLine = (first: number | undefined) => first === 0x2d;

/**
 * A diff's verdict, with what it changed (a range reports changes to the rules file itself), and
 * apart from its violations, the protected paths it changed under rules with a generator, which
 * a range cannot run (it says so instead of refusing; the pre-commit hook verifies them).
 */
export type CommitDiffResult = CheckResult & { changes: Change[]; generated: Array<Violation & { generator: string }> };

/**
 * Judges many commit diffs with ONE git process, `git diff-tree --stdin` (git/diff-tree.ts),
 * each as checkCommit judges one (generators are not run: a generator rule's findings come
 * apart, in `generated`): a range of a thousand commits costs one process, not a thousand
 * (three with merges: a merge's added lines are its combined diff's, the paths it changes
 * those that differ from any of its parents, listed against each). The patch streams through
 * the same judge as every other check; nothing of it is kept. The processes are read at once.
 * Files the patch shows as binary are then read from their blobs, as storedDiff does, with one
 * `git cat-file` per process, for all its diffs. `diffs`: what to diff, or a diff-tree already
 * started for them. Results in the order of the diffs.
 */
export async function checkCommitDiffs(
  root: string,
  config: HermesConfig,
  diffs: readonly CommitDiff[] | StartedDiffs,
  opts: GitOptions = {},
): Promise<CommitDiffResult[]> {
  const rules = compileRules(config);
  const list = 'parts' in diffs ? diffs.diffs : diffs;
  const judges = list.map(() => new ContentJudge(rules));
  const patched = judges[0]?.active ?? false;
  if (list.length === 0) return [];
  const started = 'parts' in diffs ? diffs : startDiffTree(root, list, { ...opts, patch: patched });
  if (patched && !started.patch) throw new Error('checkCommitDiffs: the diffs were started without the patch its content rules read');
  /** Each merge listed against each of its parents: the paths it changes on either branch. */
  const perParent: Buffer[][] = list.map(() => []);
  const seen: PatchSeen[] = list.map(() => ({ shown: new Set<string>(), nulLines: new Set<string>() }));
  const visitors: PatchVisitor[] = judges.map((judge, i) =>
    seeingVisitor({ file: (path) => judge.file(path), added: (_path, line, text, cut) => judge.line(line, text, cut) }, seen[i]!),
  );
  const changesOf: Change[][] = list.map(() => []);
  /**
   * One part read through (the parts at once: each judges its own commits): its patches judged as
   * they stream, then the files they showed as binary, from their blobs, with one `git cat-file`
   * that starts as soon as the part ends (while git still diffs the others).
   */
  const readPart = async (part: StartedDiffs['parts'][number]): Promise<void> => {
    const ids = part.indexes.map((i) => list[i]!.commit);
    if (part.perParent) {
      const split = diffTreeSplitter(ids, { patch: () => undefined, end: (k, raw) => perParent[part.indexes[k]!]!.push(raw) });
      await part.git.read((chunk) => split.push(chunk));
      split.end();
      return;
    }
    let lines: { index: number; split: ReturnType<typeof lineSplitter> } | undefined;
    const linesOfDiff = (index: number) => {
      if (lines?.index !== index) {
        lines?.split.end();
        lines = { index, split: lineSplitter(patchParser(visitors[index]!), MAX_JUDGED_FILE_BYTES, removedLine) };
      }
      return lines.split;
    };
    const split = diffTreeSplitter(ids, {
      patch: (k, chunk) => linesOfDiff(part.indexes[k]!).push(chunk),
      end: (k, raw) => {
        if (lines?.index === part.indexes[k]) lines.split.end();
        changesOf[part.indexes[k]!] = parseRawZ(raw);
      },
    });
    await part.git.read((chunk) => split.push(chunk));
    split.end();
    if (patched)
      await judgeUnshown(
        root,
        part.indexes.map((i) => ({ changes: changesOf[i]!, seen: seen[i]!, visitor: visitors[i]! })),
        opts,
      );
  };
  await Promise.all(started.parts.map(readPart));
  const out: CommitDiffResult[] = [];
  for (let i = 0; i < list.length; i++) {
    const changes = changesOf[i]!;
    const judge = judges[i]!;
    judge.end();
    // A merge changes every path that differs from one of its parents, whatever the combined diff shows.
    const touched = list[i]!.merge ? unionOfChanges(perParent[i]!.map((raw) => parseRawZ(raw))) : changes;
    const violations: Violation[] = [...judge.contentViolations(changes)];
    const generated: CommitDiffResult['generated'] = [];
    // Each rule on its own: a rule with a generator excuses none of another's findings, whatever their ids.
    for (const [c, found] of protectViolations(rules, touched)) {
      if (c.rule.generator) generated.push(...found.map((v) => ({ ...v, generator: c.rule.generator! })));
      else violations.push(...found);
    }
    out.push({ violations: sortViolations(violations), warnings: judge.warnings, files: touched.length, changes: touched, generated });
  }
  return out;
}

/** An object judged whole as new content: its id, the path rules see it at; `message`: a tag, of which only the message (after its header) is text. */
export type WholeObject = { id: string; path: string; message?: boolean };

/**
 * Judges objects whole, as new files (every line added), by the content rules: what a push adds
 * that is not a commit (a blob a ref names, the new blobs of a tree a ref names, an annotated
 * tag's message; rules/range.ts). One `git cat-file --batch` for all of them, one held at a time;
 * one over MAX_JUDGED_FILE_BYTES is refused unread, as a file is. Results in the order given.
 */
export async function checkObjects(root: string, config: HermesConfig, objects: readonly WholeObject[], opts: GitOptions = {}): Promise<CheckResult[]> {
  const rules = compileRules(config);
  const out: CheckResult[] = objects.map(() => ({ violations: [], warnings: [], files: 1 }));
  if (!rules.some((c) => c.forbid || c.secrets)) return out;
  let k = 0;
  await readStoredObjects(
    root,
    objects.map((o) => o.id),
    (object) => {
      const i = k++;
      const o = objects[i]!;
      const judge = new ContentJudge(rules);
      // (A missing object cannot be: git checks that a push brings every object its refs reach before its hooks run.)
      if (object.type === undefined || !judge.file(o.path)) return;
      if (!object.bytes) judge.line(0, '', true);
      else {
        const header = o.message ? object.bytes.indexOf('\n\n') : -1;
        const text = o.message ? (header === -1 ? Buffer.alloc(0) : object.bytes.subarray(header + 2)) : object.bytes;
        textLinesOf(text).forEach((line, n) => judge.line(n + 1, line, false));
      }
      judge.end();
      out[i] = { violations: sortViolations(judge.violations), warnings: judge.warnings, files: 1 };
    },
    opts,
  );
  return out;
}

/** Changes listed against several parents, one per path (and old path of a rename). */
function unionOfChanges(lists: Change[][]): Change[] {
  const out = new Map<string, Change>();
  for (const list of lists) for (const c of list) out.set(`${c.oldPath ?? ''}\0${c.path}`, out.get(`${c.oldPath ?? ''}\0${c.path}`) ?? c);
  return [...out.values()];
}

/** An untracked file: every line is added, read as a stored file is (decoded, binary or not). */
function judgeUntracked(root: string, path: string, judge: ContentJudge): void {
  if (!judge.file(path)) return;
  const read = addedLinesOfFile(join(root, path)); // undefined: removed since git listed it, or neither a file nor a symlink
  if (!read) return;
  for (const { line, text } of read.lines) judge.line(line, text, false);
  if (read.tooLarge) judge.line(0, '', true);
  judge.end();
}

/** HEAD, or the empty tree in a repository without commits yet. */
async function headOrEmptyTree(root: string, opts: GitOptions): Promise<string> {
  try {
    await gitAsync(['rev-parse', '--verify', '-q', 'HEAD^{commit}'], plainGitCall(root, opts));
    return 'HEAD';
  } catch {
    const out = await gitAsync(['hash-object', '-t', 'tree', '--stdin'], plainGitCall(root, opts)).catch(() => Buffer.from(EMPTY_TREE_SHA1));
    return out.toString('utf8').trim();
  }
}
