/**
 * Secrets by value: the daemon knows the values of the repository's secret files (at any
 * depth, ignored directories included, and every version git history still holds) and of
 * its own secret environment variables, and removes them from text before the model or
 * SessionDB sees it — verbatim and in the simple encodings a command can produce (base64 at
 * any alignment, hex, reversed, spaced out, wrapped across lines). Shape-based redaction
 * (redact.ts) runs after this; the sandbox's masks stop what neither can see (a value cut
 * in two, an encryption).
 *
 *   const secrets = new SecretValues({ root, config, env });
 *   secrets.refresh();                 // one stat per directory when nothing changed
 *   secrets.redact(text).text
 *
 * In the daemon the watcher says which directories changed (`watchedBy`): the redactions that
 * SessionDB's writes trigger then look again only at those, and at the directories no watch
 * covers, so a commit's evidence costs what changed, not one stat per directory of the tree.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync, type Dirent, type Stats } from 'node:fs';
import { join } from 'node:path';
import { cleanGitEnv } from '../git/env.js';
import { refTips, type GitDirs } from '../git/refs.js';
import { parseBatch } from '../git/parse.js';
import { gitAsyncTry, gitAsyncTryBuffer, gitTry, gitTryBuffer, type GitCall } from '../git/run.js';
import { KNOWN_SECRET_MIN_CHARS, secretValuesIn } from './redact.js';
import { isSecretPath, type SecretPathsConfig } from './secret-paths.js';

/** Encoded and spaced forms are only searched for values at least this long: a short value's encodings collide with ordinary text. */
const ENCODED_MIN_CHARS = 8;
/** Directories never walked for secret files: git's own, and installed packages (not the user's secrets). */
const SKIP_DIRS = new Set(['.git', 'node_modules']);
/** Walk bound: directories visited per refresh (a huge tree keeps its last complete list past this). */
const WALK_MAX_DIRS = 50_000;
/** Secret files larger than this are not key=value files worth reading. */
const SECRET_FILE_MAX_BYTES = 256 * 1024;
/** Historical versions of secret files read at most (newest first): bounds the first scan of a long history. */
const HISTORY_MAX_BLOBS = 500;
/** A history scan of a very large repository gives up after this long; the sandbox's masks still apply. */
const HISTORY_TIMEOUT_MS = 10_000;
/** The commit and path list of a history scan (paths of secret-looking files only). */
const HISTORY_LOG_MAX_BYTES = 64 * 1024 * 1024;
/** The blobs of one history scan: at most HISTORY_MAX_BLOBS files. */
const HISTORY_BLOBS_MAX_BYTES = 256 * 1024 * 1024;
/** Redactions triggered by SessionDB writes re-check the files at most this often. */
const LAZY_REFRESH_MS = 1_000;
/** Commits whose changes are known (`committed`), kept for the next refresh. */
const COMMITS_KEPT = 64;
/**
 * A walk of every directory that looked at this many or more is reused by the
 * exact refreshes for up to WALK_REUSE_MS: one stat per directory per command would cost more
 * than the sandbox. Counted in directories, not milliseconds, so that a busy machine does not
 * change what a refresh sees.
 */
const REUSED_WALK_DIRS = 1_000;
const WALK_REUSE_MS = 2_000;
/** A walk that trusts the watcher's reports still looks at every directory at least this often (a report lost in an event storm is found then). */
const EXACT_WALK_EVERY_MS = 30_000;
/** Directories the walk of every directory looks at in one turn of the loop (a stat each, and a read where one changed) before it lets others in. */
const LOOKS_PER_TURN = 200;

/** Environment variable names whose values are secrets (the daemon's own keys): …KEY, …TOKEN, …SECRET, …PASSWORD, … */
const SECRET_ENV_NAME = /(KEY|TOKEN|SECRET|PASS(WORD|WD)?|CREDENTIALS?|AUTH|PRIVATE|COOKIE|SESSION)([_-]|$)/i;
/** Names that match the pattern but hold paths or words, not secrets. */
const NOT_SECRET_ENV = new Set(['PWD', 'OLDPWD', 'SSH_AUTH_SOCK', 'GPG_AGENT_INFO', 'XAUTHORITY', 'KEYTIMEOUT']);

export type SecretValuesOptions = {
  root: string;
  config: SecretPathsConfig;
  /** The daemon's environment: its secret variables are known values too. */
  env?: NodeJS.ProcessEnv;
  /** Extra values (the configured model API key). */
  extra?: string[];
  gitBin?: string;
  /** The git dirs: the ref tips are read from git's files where they can be (no git process). */
  dirs?: GitDirs;
};

/**
 * Which directories of the work tree changed, as a watcher reports them. `watchOf`: the watch
 * on a directory (relative to the root, '' = the root), the same object for as long as that watch
 * lasts, undefined where there is none: a change made while a watch was in place is reported.
 * `takeChanged`: the directories with a change reported since the last call; undefined when that
 * is not known (the watcher is not running, or a storm overflowed what it keeps).
 */
export type TreeChanges = {
  watchOf(rel: string): object | undefined;
  takeChanged(): ReadonlySet<string> | undefined;
};

const depth = (rel: string) => (rel ? rel.split('/').length : 0);

/** A directory as last read: its stat, its entries, and the watch that was on it from before that read (none: looked at every walk). */
type DirCache = { mtimeMs: number; ino: number; dirs: string[]; files: string[]; watch: object | undefined };

/** The values one daemon must never let out, and the redactor built from them. */
export class SecretValues {
  private readonly dirCache = new Map<string, DirCache>();
  private readonly fileValues = new Map<string, { stamp: string; values: string[] }>();
  private history: { refsKey: string; tips: string[]; values: Set<string> } | undefined;
  private compiled: { key: string; redactor: Redactor | undefined } = { key: '', redactor: undefined };
  private lastRefresh = 0;
  private secretFileList: string[] = [];
  private values: string[] = [];
  private lastWalkMs = 0;
  /** The last walk of every directory: when it began, and how many it looked at (a large one is reused by the next exact refreshes for WALK_REUSE_MS). */
  private lastExact = { at: 0, looked: 0 };
  /** Directories looked at (a stat each) by the last walk. */
  private looked = 0;
  private tree: TreeChanges | undefined;
  /** The directories read that no watch covered when they were (looked at every walk). */
  private readonly unwatched = new Set<string>();
  /** The directories read that hold secret files, and those files (relative). */
  private readonly secretDirs = new Map<string, string[]>();

  constructor(private opts: SecretValuesOptions) {}

  /** A new config (secretPaths) or environment; the next refresh rescans (the directories' secret files were judged under the old config). */
  update(opts: Partial<SecretValuesOptions>): void {
    this.opts = { ...this.opts, ...opts };
    this.fileValues.clear();
    this.dirCache.clear();
    this.unwatched.clear();
    this.secretDirs.clear();
  }

  /** The watcher whose reports the redactions' walks trust (undefined: none, every walk looks at every directory). */
  watchedBy(tree: TreeChanges | undefined): void {
    this.tree = tree;
  }

  /** How the last refresh went: directories its walk looked at (0 where it reused a large walk), and how long that walk took. */
  walkStats(): { looked: number; ms: number } {
    return { looked: this.looked, ms: this.lastWalkMs };
  }

  /** Absolute paths of the secret files in the work tree, at any depth (as of the last refresh). */
  secretFiles(): string[] {
    return this.secretFileList;
  }

  /** Every known value (as of the last refresh). */
  known(): string[] {
    return this.values;
  }

  /**
   * Re-reads what may have changed: the secret files (one stat per directory when nothing
   * did), the history when refs moved, the environment. Returns the known values.
   */
  refresh(tips?: Iterable<string>, opts: { trustWatch?: boolean } = {}): string[] {
    const values = this.presentValues(opts.trustWatch === true);
    const steps = this.historySteps(tips);
    for (let step = steps.next(); ; ) {
      if (step.done) return this.keep(values, step.value);
      const ask = step.value;
      step = steps.next('pause' in ask ? NO_ANSWER : ask.bytes ? gitTryBuffer(ask.args, ask.call) : gitTry(ask.args, ask.call));
    }
  }

  /** The read in flight (ready). */
  private reading: Promise<void> | undefined;

  /**
   * Brings the known values up to date without blocking this process where a synchronous
   * refresh would block it for long: the first time, a walk of every directory and the whole
   * history (seconds in a large repository); after, the history again where the refs moved. A
   * process that writes redacted text (the daemon's SessionDB records) starts it early and
   * awaits it before a write: the redaction's own refresh then finds the values known and
   * looks only where the watcher reports a change. Never rejects: what failed is tried again
   * by the next refresh.
   */
  ready(): Promise<void> {
    if (this.reading) return this.reading;
    const tips = this.opts.dirs ? refTips(this.opts.dirs) : undefined;
    if (this.history && tips && this.history.refsKey === refsKeyOf(tips)) return Promise.resolve();
    const first = !this.dirCache.has('');
    const reading = Promise.all([first ? this.presentValuesAsync() : new Set(this.values), this.historyAsync(tips)]).then(
      ([values, history]) => void this.keep(values, history),
      () => undefined,
    );
    this.reading = reading;
    void reading.then(() => {
      if (this.reading === reading) this.reading = undefined;
    });
    return reading;
  }

  /** `refresh`, with git's history read without blocking this process (`check --commits` reads the range's diffs meanwhile). */
  async refreshAsync(tips?: Iterable<string>): Promise<string[]> {
    const values = this.presentValues();
    return this.keep(values, await this.historyAsync(tips));
  }

  /** The history's values, its git processes run without blocking this process. */
  private async historyAsync(tips?: Iterable<string>): Promise<Set<string>> {
    const steps = this.historySteps(tips);
    for (let step = steps.next(); ; ) {
      if (step.done) return step.value;
      const ask = step.value;
      if ('pause' in ask) {
        await new Promise((resolve) => setImmediate(resolve));
        step = steps.next(NO_ANSWER);
      } else step = steps.next(await (ask.bytes ? gitAsyncTryBuffer(ask.args, ask.call) : gitAsyncTry(ask.args, ask.call)));
    }
  }

  /** The values of the work tree's secret files (re-read where they changed), the environment's and the extra ones. */
  private presentValues(trustWatch = false): Set<string> {
    this.lastRefresh = Date.now();
    // A walk that trusts the watcher looks only where it reports a change: it is never the
    // walk a large one is reused for (the redactions would miss a new secret file for
    // WALK_REUSE_MS).
    const cheap = trustWatch && this.tree !== undefined;
    if (cheap || this.lastExact.looked < REUSED_WALK_DIRS || Date.now() - this.lastExact.at > WALK_REUSE_MS) {
      const t = performance.now();
      this.secretFileList = this.walk(trustWatch);
      this.lastWalkMs = performance.now() - t;
    } else this.looked = 0;
    return this.valuesOfFiles();
  }

  /** `presentValues` after a walk of every directory made without blocking this process. */
  private async presentValuesAsync(): Promise<Set<string>> {
    await this.walkExactAsync();
    this.lastRefresh = Date.now();
    this.secretFileList = this.secretFilesFound();
    return this.valuesOfFiles();
  }

  /** The values of the secret files the walks found (each file read again only where it changed), the environment's and the extra ones. */
  private valuesOfFiles(): Set<string> {
    const files = this.secretFileList;
    const values = new Set<string>();
    const live = new Set<string>();
    for (const abs of files) {
      live.add(abs);
      for (const v of this.valuesOfFile(abs)) values.add(v);
    }
    for (const k of this.fileValues.keys()) if (!live.has(k)) this.fileValues.delete(k);
    for (const v of envSecretValues(this.opts.env ?? {})) values.add(v);
    for (const v of this.opts.extra ?? []) if (v && v.length >= KNOWN_SECRET_MIN_CHARS) values.add(v);
    return values;
  }

  private secretFilesFound(): string[] {
    return [...this.secretDirs.values()].flat().map((f) => join(this.opts.root, f));
  }

  /** The walk of every directory in flight (walkExactAsync). */
  private exactWalk: Promise<void> | undefined;
  /** The directories a synchronous look kept while that walk ran. */
  private readonly lookedMeanwhile = new Set<string>();

  /**
   * A walk of every directory, its stats and reads made without blocking this process. A
   * synchronous walk meanwhile walks as it would; where one of every directory ended while
   * this one ran, this one forgets nothing (the later walk's view stands).
   */
  private walkExactAsync(): Promise<void> {
    this.exactWalk ??= (async () => {
      const at = Date.now();
      const walk = { budget: WALK_MAX_DIRS, seen: new Set<string>(), looked: 0 };
      try {
        await this.lookAsync('', walk);
      } finally {
        this.exactWalk = undefined;
      }
      const meanwhile = new Set(this.lookedMeanwhile);
      this.lookedMeanwhile.clear();
      if (this.lastExact.at > at) return;
      // A directory a synchronous look kept meanwhile (a new one the watcher reported) stays, though this walk passed before it was made.
      for (const k of [...this.dirCache.keys()]) if (!walk.seen.has(k) && !meanwhile.has(k)) this.forgetDir(k);
      this.lastExact = { at, looked: walk.looked };
    })();
    return this.exactWalk;
  }

  private keep(values: Set<string>, history: Set<string>): string[] {
    for (const v of history) values.add(v);
    this.values = [...values].sort((a, b) => b.length - a.length);
    return this.values;
  }

  /**
   * A commit on `parent` whose changed paths are known (hermesd judged its snapshot): when the
   * refs move by such commits, none touching a secret path, the history holds no new value and
   * is not read again.
   */
  committed(commit: string, parent: string, paths: readonly string[]): void {
    this.commits.set(commit, { parent, secret: paths.some((p) => isSecretPath(p, this.opts.config)) });
    if (this.commits.size > COMMITS_KEPT) this.commits.delete(this.commits.keys().next().value!);
  }

  private readonly commits = new Map<string, { parent: string; secret: boolean }>();

  /** Replaces every known value (and its encodings) with `[REDACTED:secret-value]`. */
  redact(text: string): { text: string; count: number } {
    if (!text) return { text, count: 0 };
    if (Date.now() - this.lastRefresh > LAZY_REFRESH_MS) this.refresh(undefined, { trustWatch: true });
    const key = this.values.join('\0');
    if (this.compiled.key !== key) this.compiled = { key, redactor: compileRedactor(this.values) };
    return this.compiled.redactor?.redact(text) ?? { text, count: 0 };
  }

  private valuesOfFile(abs: string): string[] {
    let st;
    try {
      st = statSync(abs);
    } catch {
      return [];
    }
    if (!st.isFile() || st.size > SECRET_FILE_MAX_BYTES) return [];
    const stamp = `${st.ino}:${st.size}:${st.mtimeMs}`;
    const hit = this.fileValues.get(abs);
    if (hit && hit.stamp === stamp) return hit.values;
    let values: string[] = [];
    try {
      values = secretFileValues(readFileSync(abs, 'utf8'));
    } catch {
      values = [];
    }
    this.fileValues.set(abs, { stamp, values });
    return values;
  }

  /**
   * The work tree's secret files; a directory is re-read only when its mtime changed. With
   * `trustWatch` and a watcher (`watchedBy`), only the directories the watcher reports a change
   * in, those no watch covers (ignored ones) and the new ones they hold are looked at: a
   * directory a watch has covered since it was last read is not. At least one walk in
   * EXACT_WALK_EVERY_MS looks at every directory.
   */
  private walk(trustWatch = false): string[] {
    const tree = this.tree;
    // Taken before any stat: a change reported after this is looked at by the next walk.
    const reported = tree?.takeChanged();
    this.looked = 0;
    const cheap = trustWatch && tree && reported && this.dirCache.has('');
    // A walk of every directory that is due is made without blocking (a large tree takes seconds); this one looks where the watcher says meanwhile.
    if (cheap && Date.now() - this.lastExact.at > EXACT_WALK_EVERY_MS) void this.walkExactAsync();
    if (cheap) {
      // Parents before children: a directory its parent's new read dropped is not looked at.
      const todo = [...new Set([...reported, ...this.unwatched])].filter((d) => this.dirCache.has(d)).sort((a, b) => depth(a) - depth(b));
      // One bound for the whole walk, as the exact walk has.
      const walk = { budget: WALK_MAX_DIRS };
      for (const rel of todo) if (this.dirCache.has(rel)) this.look(rel, true, walk);
    } else {
      const at = Date.now();
      const seen = new Set<string>();
      this.look('', false, { budget: WALK_MAX_DIRS, seen });
      for (const k of [...this.dirCache.keys()]) if (!seen.has(k)) this.forgetDir(k);
      // Only a walk of every directory says what the next one will cost.
      this.lastExact = { at, looked: this.looked };
    }
    return this.secretFilesFound();
  }

  /**
   * Looks at directory `rel` (a stat; its entries read again when it changed) and at the
   * directories below it: every one (`onlyNew` false), or only those it did not hold before.
   */
  private look(rel: string, onlyNew: boolean, walk: { budget: number; seen?: Set<string> } = { budget: WALK_MAX_DIRS }): void {
    if (walk.budget-- <= 0) return;
    this.looked++;
    const now = this.lookOnce(rel, walk);
    if (now && this.exactWalk) this.lookedMeanwhile.add(rel);
    if (now) for (const d of now.dirs) if (!onlyNew || !this.dirCache.has(d)) this.look(d, false, walk);
  }

  /** Directory `rel` looked at (a stat; its entries read again when it changed), as `absorb` keeps it; undefined where it is gone or no directory. */
  private lookOnce(rel: string, walk: { seen?: Set<string> }): DirCache | undefined {
    const abs = rel ? join(this.opts.root, rel) : this.opts.root;
    // The watch in place before the stat: any change after it is reported.
    const watch = this.tree?.watchOf(rel);
    let st;
    try {
      st = statSync(abs);
    } catch {
      this.forgetDir(rel);
      return undefined;
    }
    let entries: Dirent[] | undefined;
    if (this.needsRead(rel, st, walk)) {
      try {
        entries = readdirSync(abs, { withFileTypes: true });
      } catch {
        this.forgetDir(rel);
        return undefined;
      }
    }
    return this.absorb(rel, st, entries, watch);
  }

  /**
   * `look` of every directory without holding this process: synchronous looks in short turns
   * of the loop, in the same order. A stat through a promise costs the process several times
   * the stat (the thread pool's round trip and the promise): a walk of a large tree made that
   * way was a burst of CPU as large as a commit's judgement.
   */
  private async lookAsync(root: string, walk: { budget: number; seen: Set<string>; looked: number }): Promise<void> {
    const todo = [root];
    let inTurn = 0;
    while (todo.length > 0) {
      if (walk.budget-- <= 0) return;
      const rel = todo.pop()!;
      walk.looked++;
      const now = this.lookOnce(rel, walk);
      // Depth first, each directory's entries in their order (the stack takes them last first).
      if (now) for (let i = now.dirs.length - 1; i >= 0; i--) todo.push(now.dirs[i]!);
      if (++inTurn >= LOOKS_PER_TURN && todo.length > 0) {
        inTurn = 0;
        await new Promise((r) => setImmediate(r));
      }
    }
  }

  /** Whether directory `rel`, just stat'ed, must have its entries read (new or changed); false also where it is no directory. */
  private needsRead(rel: string, st: Stats, walk: { seen?: Set<string> }): boolean {
    if (!st.isDirectory()) return false;
    walk.seen?.add(rel);
    const before = this.dirCache.get(rel);
    return !before || before.mtimeMs !== st.mtimeMs || before.ino !== st.ino;
  }

  /** What `look` keeps of directory `rel` from its stat and (when read) its entries; undefined where it is no directory. */
  private absorb(rel: string, st: Stats, entries: Dirent[] | undefined, watch: object | undefined): DirCache | undefined {
    if (!st.isDirectory()) {
      this.forgetDir(rel);
      return undefined;
    }
    const { root, config } = this.opts;
    const before = this.dirCache.get(rel);
    let now: DirCache;
    if (entries) {
      const dirs: string[] = [];
      const files: string[] = [];
      for (const d of entries) {
        const r = rel ? `${rel}/${d.name}` : d.name;
        if (d.isDirectory()) {
          if (!SKIP_DIRS.has(d.name)) dirs.push(r);
        } else if ((d.isFile() || d.isSymbolicLink()) && isSecretPath(r, config, { root })) files.push(r);
      }
      now = { mtimeMs: st.mtimeMs, ino: st.ino, dirs, files, watch };
      // What it no longer holds is forgotten with everything below it.
      if (before) for (const d of before.dirs) if (!dirs.includes(d)) this.forgetDir(d);
    } else now = { ...before!, watch };
    this.keepDir(rel, now);
    return now;
  }

  private keepDir(rel: string, entry: DirCache): void {
    this.dirCache.set(rel, entry);
    if (entry.watch === undefined) this.unwatched.add(rel);
    else this.unwatched.delete(rel);
    if (entry.files.length > 0) this.secretDirs.set(rel, entry.files);
    else this.secretDirs.delete(rel);
  }

  /** Forgets directory `rel` and everything below it that was read. */
  private forgetDir(rel: string): void {
    const entry = this.dirCache.get(rel);
    if (!entry) return;
    this.dirCache.delete(rel);
    this.unwatched.delete(rel);
    this.secretDirs.delete(rel);
    for (const d of entry.dirs) this.forgetDir(d);
  }

  /** Values of every version of a secret file that git history holds (incremental as refs move). `known`: the ref tips, when the caller has read them. */
  /**
   * The values every version of a secret file in git's history held: the git processes to run,
   * asked of the caller one at a time (`refresh` runs them in turn, `refreshAsync` without
   * blocking), and the values at the end. Read again only for refs that moved.
   */
  private *historySteps(known?: Iterable<string>): Generator<GitAsk, Set<string>, GitAnswer> {
    const { root } = this.opts;
    const gitBin = this.opts.gitBin ?? 'git';
    const env = cleanGitEnv();
    const call = (maxBuffer: number, input?: string): GitCall => ({ bin: gitBin, cwd: root, env, timeoutMs: HISTORY_TIMEOUT_MS, maxBuffer, input });
    let listed = known ? [...known] : this.opts.dirs ? refTips(this.opts.dirs) : undefined;
    if (!listed) {
      const refs = yield { args: ['for-each-ref', '--format=%(objectname)'], call: call(HISTORY_LOG_MAX_BYTES) };
      if (refs.status !== 0) return this.history?.values ?? new Set();
      listed = refs.stdout.toString().split('\n').filter(Boolean);
    }
    const tips = [...new Set(listed)].sort();
    const refsKey = refsKeyOf(tips);
    if (this.history && this.history.refsKey === refsKey) return this.history.values;
    const values = new Set(this.history?.values ?? []);
    const newTips = tips.filter((t) => !this.history?.tips.includes(t));
    // New tips that are each a known commit on an old tip (or on another such commit), none touching a secret path: nothing new to read.
    const old = new Set(this.history?.tips);
    const judged = (t: string, depth = 0): boolean => {
      const c = this.commits.get(t);
      return c !== undefined && !c.secret && (old.has(c.parent) || (depth < COMMITS_KEPT && judged(c.parent, depth + 1)));
    };
    if (this.history && newTips.every((t) => judged(t))) {
      this.history = { refsKey, tips, values };
      return values;
    }
    if (newTips.length > 0) {
      const range = [...newTips, ...(this.history ? ['--not', ...this.history.tips] : [])];
      // Every path each commit added or changed, judged here by isSecretPath (the one list of
      // secret files): git's glob pathspecs cost more than listing every name (each `**/` glob is
      // matched against every entry of every changed tree), and a second list of the same files
      // as pathspecs would drift from the first.
      const log = yield {
        args: ['log', '--format=%x00%H', '--name-only', '--diff-filter=AMRC', '--no-renames', ...range, '--'],
        call: call(HISTORY_LOG_MAX_BYTES),
      };
      const specs: string[] = [];
      let judged = 0;
      for (const block of log.stdout.toString().split('\0')) {
        const [commit, ...paths] = block.split('\n').filter(Boolean);
        if (!commit) continue;
        for (const p of paths) {
          if (specs.length < HISTORY_MAX_BLOBS && isSecretPath(p, this.opts.config)) specs.push(`${commit}:${p}`);
          // A long history's paths are judged in turns: the asynchronous read lets other work in between.
          if (++judged >= PATHS_PER_TURN) {
            judged = 0;
            yield PAUSE;
          }
        }
      }
      if (specs.length > 0) {
        const cat = yield { args: ['cat-file', '--batch'], call: call(HISTORY_BLOBS_MAX_BYTES, specs.join('\n') + '\n'), bytes: true };
        for (const blob of parseBatch(cat.stdout as Buffer)) {
          if (blob.length > SECRET_FILE_MAX_BYTES) continue;
          for (const v of secretFileValues(blob.toString('utf8'))) values.add(v);
        }
      }
    }
    this.history = { refsKey, tips, values };
    return values;
  }
}

/** The key of a set of ref tips (any order, repeats allowed): the history read for them is reused while it is the same. */
function refsKeyOf(tips: Iterable<string>): string {
  return createHash('sha1')
    .update([...new Set(tips)].sort().join('\n'))
    .digest('hex');
}

/** A git process `historySteps` asks for, and what it gets back. */
type GitAsk = { args: string[]; call: GitCall; bytes?: boolean } | typeof PAUSE;
/** What historySteps yields between turns of its own work: the synchronous refresh goes straight on, the asynchronous one lets the loop turn. */
const PAUSE = { pause: true } as const;
/** Paths of the history judged (isSecretPath) between two turns of the loop. */
const PATHS_PER_TURN = 2_000;
type GitAnswer = { status: number; stdout: string | Buffer };
const NO_ANSWER: GitAnswer = { status: 0, stdout: '' };

/** The values of a secret file: assignment right-hand sides, and the contents of a key or token file. */
export function secretFileValues(content: string): string[] {
  const values = new Set(secretValuesIn(content));
  // A file that is not KEY=value (a token file, a private key): its non-trivial lines are the secret.
  if (values.size === 0) {
    for (const line of content.split(/\r?\n/)) {
      const l = line.trim();
      if (l.length >= ENCODED_MIN_CHARS && !/^-----(BEGIN|END) /.test(l) && !l.startsWith('#')) values.add(l);
    }
  }
  return [...values];
}

/** Values of the environment's secret variables (the daemon's API keys and tokens). */
export function envSecretValues(env: NodeJS.ProcessEnv): string[] {
  const out: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (!value || value.length < ENCODED_MIN_CHARS || NOT_SECRET_ENV.has(name) || !SECRET_ENV_NAME.test(name)) continue;
    // Paths and plain words are not secrets even under a secret-sounding name.
    if (value.startsWith('/') || /^[a-z]+$/i.test(value) || /^(true|false|[0-9]+)$/i.test(value)) continue;
    out.push(value);
  }
  return out;
}

/** Characters a spaced-out value may be split with (`h u n t e r`, `h-u-n-t-e-r`, `de:ad:be:ef`). */
const SPACERS = /[._:,|-]/;

/** The base64 characters that depend on the value alone, for each of the three alignments it can start at. */
function base64Cores(value: string): string[] {
  const out: string[] = [];
  const bytes = Buffer.from(value, 'utf8');
  for (let pad = 0; pad < 3; pad++) {
    const enc = Buffer.concat([Buffer.alloc(pad), bytes]).toString('base64');
    // Character i carries bits [6i, 6i+6): it depends on the value alone when they lie within its bytes.
    const core = enc.slice(Math.ceil((pad * 8) / 6), Math.floor(((pad + bytes.length) * 8) / 6));
    if (core.length >= ENCODED_MIN_CHARS) out.push(core, core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return out;
}

/**
 * A multi-pattern matcher (Aho–Corasick): one pass over a text finds every pattern, so the
 * cost of a redaction does not grow with the number of values and forms.
 */
class Matcher {
  private readonly next: Array<Map<number, number>> = [new Map()];
  private readonly fail: number[] = [0];
  /** Longest pattern ending at each node (its own or through fail links); 0 for none. */
  private readonly out: number[] = [0];

  constructor(patterns: Iterable<string>) {
    for (const p of patterns) {
      let node = 0;
      for (let i = 0; i < p.length; i++) {
        const c = p.charCodeAt(i);
        let to = this.next[node]!.get(c);
        if (to === undefined) {
          to = this.next.length;
          this.next.push(new Map());
          this.fail.push(0);
          this.out.push(0);
          this.next[node]!.set(c, to);
        }
        node = to;
      }
      this.out[node] = Math.max(this.out[node]!, p.length);
    }
    const queue: number[] = [];
    for (const to of this.next[0]!.values()) queue.push(to);
    while (queue.length > 0) {
      const node = queue.shift()!;
      for (const [c, to] of this.next[node]!) {
        let f = this.fail[node]!;
        while (f !== 0 && !this.next[f]!.has(c)) f = this.fail[f]!;
        const target = this.next[f]!.get(c);
        this.fail[to] = target !== undefined && target !== to ? target : 0;
        this.out[to] = Math.max(this.out[to]!, this.out[this.fail[to]!]!);
        queue.push(to);
      }
    }
  }

  /** The node after reading `c` at `node`. */
  step(node: number, c: number): number {
    while (node !== 0 && !this.next[node]!.has(c)) node = this.fail[node]!;
    return this.next[node]!.get(c) ?? 0;
  }

  /** Length of the longest pattern that ends at `node` (0: none). */
  match(node: number): number {
    return this.out[node]!;
  }
}

const BACKSLASH = 92;
/** Whitespace a wrapped or dumped encoding may carry between its characters. */
const isSpace = (c: number) => c === 32 || (c >= 9 && c <= 13);
/** `._:,|-`: what a spaced-out value may be split with. */
const isSpacer = (c: number) => c === 46 || c === 95 || c === 58 || c === 44 || c === 124 || c === 45;
/** n, r, t: after a backslash, a line break or tab escaped in JSON. */
const isEscapeLetter = (c: number) => c === 110 || c === 114 || c === 116;

export type Redactor = { redact(text: string): { text: string; count: number } };

/**
 * The redactor of a set of values: each value verbatim, reversed, hex (either case, bytes
 * apart or together), base64 at its three alignments (standard and URL-safe), and spaced
 * out — found in the text with its whitespace (and JSON-escaped line breaks) removed, so
 * wrapped output (base64 -w76, xxd -p) is found too.
 */
export function compileRedactor(values: readonly string[]): Redactor | undefined {
  const exact = new Set<string>();
  const plain = new Set<string>();
  const spaced = new Set<string>();
  for (const value of values) {
    if (value.length < KNOWN_SECRET_MIN_CHARS) continue;
    const compact = value.replace(/\s+/g, '');
    // A short value is only removed as written: spaced out or encoded it would collide with ordinary text.
    if (compact.length < ENCODED_MIN_CHARS) {
      exact.add(value);
      continue;
    }
    plain.add(compact);
    const reversed = [...compact].reverse().join('');
    plain.add(reversed);
    const hex = Buffer.from(value, 'utf8').toString('hex');
    plain.add(hex);
    plain.add(hex.toUpperCase());
    for (const core of base64Cores(value)) plain.add(core);
    for (const v of [compact, reversed, hex, hex.toUpperCase()]) {
      const bare = v.split(SPACERS).join('');
      if (bare.length >= ENCODED_MIN_CHARS) spaced.add(bare);
    }
  }
  if (plain.size === 0 && exact.size === 0) return undefined;
  const exactMatcher = new Matcher(exact);
  const plainMatcher = new Matcher(plain);
  const spacedMatcher = new Matcher(spaced);
  return {
    redact(text) {
      if (!text) return { text, count: 0 };
      // One pass, two views: the text without whitespace (and JSON's escaped line breaks) for the
      // verbatim and encoded forms, and also without spacers for the spaced-out ones. Each view
      // remembers the original index of its characters, so a match maps back to a span.
      const plainAt = new Int32Array(text.length);
      const spacedAt = new Int32Array(text.length);
      let np = 0;
      let ns = 0;
      let p = 0;
      let q = 0;
      const spans: Array<[number, number]> = [];
      let e = 0;
      for (let i = 0; i < text.length; i++) {
        const c = text.charCodeAt(i);
        e = exactMatcher.step(e, c);
        const le = exactMatcher.match(e);
        if (le > 0) spans.push([i + 1 - le, i + 1]);
        if (c === BACKSLASH && isEscapeLetter(text.charCodeAt(i + 1))) {
          i++;
          continue;
        }
        if (isSpace(c)) continue;
        plainAt[np++] = i;
        p = plainMatcher.step(p, c);
        const lp = plainMatcher.match(p);
        if (lp > 0) spans.push([plainAt[np - lp]!, i + 1]);
        if (isSpacer(c)) continue;
        spacedAt[ns++] = i;
        q = spacedMatcher.step(q, c);
        const lq = spacedMatcher.match(q);
        if (lq > 0) spans.push([spacedAt[ns - lq]!, i + 1]);
      }
      if (spans.length === 0) return { text, count: 0 };
      spans.sort((x, y) => x[0] - y[0] || y[1] - x[1]);
      let out = '';
      let pos = 0;
      let count = 0;
      for (const [a, b] of spans) {
        if (b <= pos) continue;
        if (a >= pos) {
          out += text.slice(pos, a) + '[REDACTED:secret-value]';
          count++;
        }
        pos = b;
      }
      return { text: out + text.slice(pos), count };
    },
  };
}
