/**
 * Commits judged where no hook of a clone ran: `hermesd check --commits <range>` (CI, any clone,
 * a bare repository) and the server's pre-receive and update hooks. Every commit of the range is
 * judged against its parent (a merge: its added lines are what differs from every parent, what it
 * brought itself; the paths it changes, those that differ from any parent), all of them with one
 * git process (three with merges: engine.ts, checkCommitDiffs), under the rules as committed in
 * the range's base: a commit cannot loosen the rules that judge it, and a change to
 * .hermes/config.yaml inside the range is reported as such. A base without that file, or no base
 * at all (a new ref where HEAD names no commit), is judged by init's default rules, never by none
 * and never by the pushed tip's own. A server's pinned rules (`<git-dir>/hermesd/
 * server-config.yaml`, from init --server) judge beside them: the committed file can add rules,
 * not remove them. A push is judged on every object it adds: tags are peeled, a blob a ref names
 * is judged as content, a tree as its new blobs, an annotated tag by its message. No daemon, no
 * work tree.
 *
 *   const verdict = await checkRange({ cwd, root }, 'origin/main..HEAD');   // check --commits
 *   const refs = await judgePush({ cwd: gitDir, quarantine }, parseRefUpdates(stdin), { pinned });   // pre-receive
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { HermesConfig, Rule } from '../config/schema.js';
import { ConfigError, UsageError } from '../errors/index.js';
import { parseNulList } from '../git/diff-parse.js';
import { startDiffTree, type CommitDiff, type StartedDiffs } from '../git/diff-tree.js';
import type { Quarantine } from '../git/env.js';
import { GitFailed, gitAsync, gitAsyncTry, plainGitCall } from '../git/run.js';
import { readStoredObjects } from '../git/stored-diff.js';
import { INIT_CONFIG_TEMPLATE, INIT_DEFAULTS_RECORD } from '../version.js';
import type { CommitDiffResult, Violation, WholeObject } from './engine.js';

/**
 * The rule engine and the config loader (zod, yaml, the schemas: most of a range check's
 * start-up), loaded on first use, while git already works (checkRange starts the diffs first).
 */
let judging: Promise<{ engine: typeof import('./engine.js'); load: typeof import('../config/load.js') }> | undefined;
const judgingModules = () => (judging ??= Promise.all([import('./engine.js'), import('../config/load.js')]).then(([engine, load]) => ({ engine, load })));

/** The repository's rules, as a path inside a commit's tree. */
export const RULES_FILE = '.hermes/config.yaml';
/** Earlier versions of a config that does not parse, tried for the last one that does. */
const RULES_FALLBACK_MAX_VERSIONS = 20;

/** Where a range is judged: the directory git runs in (a work tree, or a bare repository's git dir), the work tree's top if any, a push's quarantine. */
export type RangePlace = { cwd: string; root?: string; quarantine?: Quarantine };

export type RangeCommit = { commit: string; parents: string[] };

/**
 * A violation and the commit that brought it; in a push, also what a ref names that is not a commit
 * (`object`: a tag's message, a blob, a tree's blob), whose `commit` is then that tag, blob or tree.
 */
export type RangeViolation = Violation & { commit: string; object?: ObjectKind };

type ObjectKind = 'tag' | 'tree' | 'blob';

/**
 * The rules that judge a range: the config committed in `commit` (or its last version that
 * parses, from `from`), or init's defaults; and a server's pinned rules.
 */
export type RangeRules = {
  config: HermesConfig;
  /** The commit whose rules judge (the range's base); none: a new ref with no base (HEAD names no commit). */
  commit?: string;
  /** Whether that commit has a .hermes/config.yaml. */
  found: boolean;
  /** init's default rules judge in place of the base's: it has no .hermes/config.yaml, or there is no base. */
  defaults?: boolean;
  /** The commit whose version of the file was used, when the base's own does not parse. */
  from?: string;
  /** The server's pinned config (its path), which judges beside the committed rules. */
  pinned?: string;
  warnings: string[];
};

/** What judges a range, as a verdict reports it. */
export type RulesUsed = Omit<RangeRules, 'config' | 'warnings'> & { list: Array<{ id: string; message: string }> };

export type RangeVerdict = {
  /** The commits judged, oldest first. */
  commits: string[];
  /** In a push: what its refs name that is not a commit, judged as content (tags peeled: the tag, and the tree or blob it names). */
  objects?: Array<{ ref: string; id: string; type: ObjectKind }>;
  /** Which rules judged: committed where (or init's defaults, and a server's pin), and their ids and messages. */
  rules: RulesUsed;
  violations: RangeViolation[];
  /** What was not fully judged, and generated files whose generator cannot run here. */
  warnings: string[];
  /** Commits of the range that change .hermes/config.yaml: the range is judged by the base's rules all the same. */
  configChanges: string[];
  /** Whether the values of this clone's secret files were looked for, and why not. */
  secretValues: { judged: boolean; note: string };
};

const call = (place: RangePlace) => plainGitCall(place.cwd, { quarantine: place.quarantine });

/** A range's first line of git's complaint, for an error a person reads. */
const gitReason = (err: unknown) => (err instanceof GitFailed ? (err.stderr.trim().split('\n')[0] ?? '') : String(err)).replace(/^fatal: /, '');

/**
 * The revisions of a range (`A..B`, `A...B`): what it includes, what it excludes, and its base
 * (the first excluded revision), whose rules judge it. A single revision is refused: it has
 * no base, and "every commit ever" is rarely what CI means.
 */
export async function resolveRange(place: RangePlace, range: string): Promise<{ base: string; include: string[]; exclude: string[] }> {
  if (!range || range.startsWith('-') || /\s/.test(range)) throw new UsageError(`--commits takes one range such as origin/main..HEAD (got "${range}").`);
  let out: string;
  try {
    out = (await gitAsync(['rev-parse', '--revs-only', range, '--'], call(place))).toString('utf8');
  } catch (err) {
    throw new UsageError(`"${range}" is not a range of this repository: ${gitReason(err)}.${(await isShallow(place)) ? SHALLOW_HINT : ''}`);
  }
  const revs = out.split('\n').filter(Boolean);
  const include = revs.filter((r) => !r.startsWith('^'));
  const exclude = revs.filter((r) => r.startsWith('^')).map((r) => r.slice(1));
  if (include.length === 0 || exclude.length === 0) {
    throw new UsageError(
      `"${range}" names no base: give BASE..TIP (e.g. origin/main..HEAD). The commits of TIP that BASE lacks are judged, under the rules committed in BASE.`,
    );
  }
  return { base: exclude[0]!, include, exclude };
}

const SHALLOW_HINT =
  ' This clone is shallow: fetch the history the range needs (actions/checkout: fetch-depth: 0; GitLab: GIT_DEPTH: 0; or git fetch --unshallow).';

async function isShallow(place: RangePlace): Promise<boolean> {
  return (await gitAsyncTry(['rev-parse', '--is-shallow-repository'], call(place))).stdout.trim() === 'true';
}

/** The commits reachable from `include` and from none of `exclude` (revisions, or `--all`), oldest first, with their parents. */
export async function listCommits(place: RangePlace, include: readonly string[], exclude: readonly string[]): Promise<RangeCommit[]> {
  const args = ['rev-list', '--reverse', '--topo-order', '--parents', ...include, ...(exclude.length ? ['--not', ...exclude] : []), '--'];
  let out: string;
  try {
    out = (await gitAsync(args, call(place))).toString('utf8');
  } catch (err) {
    throw new UsageError(
      `cannot list the commits of ${[...include, ...exclude.map((e) => (e.startsWith('-') ? e : `^${e}`))].join(' ')}: ${gitReason(err)}.${(await isShallow(place)) ? SHALLOW_HINT : ''}`,
    );
  }
  const commits: RangeCommit[] = [];
  for (const line of out.split('\n')) {
    const [commit, ...parents] = line.trim().split(' ');
    if (commit) commits.push({ commit, parents });
  }
  // A shallow clone shows its boundary commits without parents: judged against nothing, their whole tree would look new.
  if (commits.some((c) => c.parents.length === 0) && (await isShallow(place))) {
    const cut = new Set(await gitAsyncTry(['rev-parse', '--git-path', 'shallow'], call(place)).then((r) => readShallow(place.cwd, r.stdout.trim())));
    const at = commits.find((c) => cut.has(c.commit));
    if (at)
      throw new UsageError(
        `the range reaches ${at.commit.slice(0, 10)}, where this shallow clone's history is cut, so its parent cannot be compared with.${SHALLOW_HINT}`,
      );
  }
  return commits;
}

/** The commit ids a shallow clone's `shallow` file lists (its history's cut). */
function readShallow(cwd: string, file: string): string[] {
  try {
    return readFileSync(resolve(cwd, file), 'utf8').split('\n').filter(Boolean);
  } catch {
    return [];
  }
}

/** `<commit>:<path>` as text, or undefined when the commit has no such file. */
async function fileAt(place: RangePlace, commit: string, path: string): Promise<string | undefined> {
  const r = await gitAsyncTry(['cat-file', 'blob', `${commit}:${path}`], call(place));
  return r.status === 0 ? r.stdout : undefined;
}

/** init's default rules (the config `hermesd init` writes), read once. */
let initDefaults: Promise<HermesConfig> | undefined;

/**
 * The config `hermesd init` writes, as the rules of a base that has none. A broken install is a
 * ConfigError, never "no rules". The template is read each time; what it parses to comes from the
 * build's record while the text is the one recorded (no YAML parser to load: most of a range
 * check's start-up), else from parsing it.
 */
function defaultRules(): Promise<HermesConfig> {
  return (initDefaults ??= (async () => {
    let text: string;
    try {
      text = readFileSync(INIT_CONFIG_TEMPLATE, 'utf8');
    } catch (err) {
      const why = (err as NodeJS.ErrnoException).code ?? String(err);
      throw new ConfigError(`init's default config ${INIT_CONFIG_TEMPLATE} cannot be read (${why}); it judges a base without ${RULES_FILE}: reinstall.`);
    }
    return recordedDefaults(text) ?? (await judgingModules()).load.loadCommittedConfig(INIT_CONFIG_TEMPLATE, text);
  })());
}

/**
 * What the build recorded init's template to parse to (INIT_DEFAULTS_RECORD), when `text` is the
 * text it recorded (the template, or a committed config as init wrote it); else undefined.
 */
export function recordedDefaults(text: string, record = INIT_DEFAULTS_RECORD): HermesConfig | undefined {
  try {
    const recorded = JSON.parse(readFileSync(record, 'utf8')) as { text?: unknown; config?: HermesConfig };
    return recorded.text === text && recorded.config ? recorded.config : undefined;
  } catch {
    return undefined; // no record (the per-file build before bundling, a source checkout): parsed
  }
}

/**
 * The rules committed in `commit`, or init's defaults where it has no .hermes/config.yaml or
 * there is no `commit`. A config that does not parse is never read as "no rules": the last
 * earlier version that parses judges (with a warning that says so), and when none does, a
 * ConfigError naming the file, line and key. `pin`: a server's pinned rules, which judge too.
 */
export async function rulesAt(place: RangePlace, commit: string | undefined, pin?: PinnedRules): Promise<RangeRules> {
  const committed = await committedRules(place, commit);
  if (!pin) return committed;
  return { ...committed, config: { ...committed.config, rules: distinctRules([...committed.config.rules, ...pin.config.rules]) }, pinned: pin.path };
}

async function committedRules(place: RangePlace, commit: string | undefined): Promise<RangeRules> {
  const [text, { load }] = await Promise.all([commit ? fileAt(place, commit, RULES_FILE) : undefined, judgingModules()]);
  const { loadCommittedConfig } = load;
  if (commit === undefined || text === undefined) {
    return { config: await defaultRules(), ...(commit ? { commit } : {}), found: false, defaults: true, warnings: [] };
  }
  const short = commit.slice(0, 10);
  try {
    // A config as init wrote it (the template's text, unedited) parses to what the build recorded.
    return { config: recordedDefaults(text) ?? loadCommittedConfig(`${short}:${RULES_FILE}`, text), commit, found: true, warnings: [] };
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    const log = await gitAsyncTry(
      ['log', '--first-parent', `--max-count=${RULES_FALLBACK_MAX_VERSIONS}`, '--format=%H', commit, '--', RULES_FILE],
      call(place),
    );
    for (const earlier of log.stdout.split('\n').filter(Boolean)) {
      const older = await fileAt(place, earlier, RULES_FILE);
      if (older === undefined || older === text) continue;
      try {
        const config = loadCommittedConfig(`${earlier.slice(0, 10)}:${RULES_FILE}`, older);
        return {
          config,
          commit,
          found: true,
          from: earlier,
          warnings: [`${RULES_FILE} does not parse in ${short} (${err.message}); judged by its last version that does, from ${earlier.slice(0, 10)}.`],
        };
      } catch {
        // an older broken version: keep looking
      }
    }
    throw err;
  }
}

/** A server's pinned rules: the file, and the config it holds. */
export type PinnedRules = { path: string; config: HermesConfig };

/**
 * The server's pinned rules at `path`, or undefined where there is no such file (no pin: the
 * committed rules alone judge). One that does not parse is a ConfigError naming the file, line
 * and key: a push is refused rather than judged without them.
 */
export async function pinnedRules(path: string | undefined): Promise<PinnedRules | undefined> {
  if (!path) return undefined;
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ConfigError(`the server's pinned rules ${path} cannot be read (${(err as NodeJS.ErrnoException).code ?? String(err)}).`);
  }
  const { load } = await judgingModules();
  return { path, config: load.loadCommittedConfig(path, text) };
}

/** Rules without repeats: a rule both the pin and the committed file hold judges once. */
function distinctRules(rules: readonly Rule[]): Rule[] {
  const seen = new Set<string>();
  return rules.filter((r) => {
    const key = JSON.stringify(r);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Regex source that matches `s` literally. */
const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/**
 * This clone's secret files (the guard's index: .env files, keys), read from the work tree, and
 * the values they and every version of them in git history hold (`all`: git's history read
 * without blocking, while the range's diffs stream in). A fresh clone (CI) or a bare repository
 * has none: skipped, and said (`note`).
 */
async function secretFilesHere(place: RangePlace, config: HermesConfig): Promise<{ note: string } | { files: number; inTree: number; all: Promise<string[]> }> {
  if (!place.root) return { note: 'skipped: no work tree here, so no secret files whose values to look for' };
  const { SecretValues } = await import('../security/secret-values.js');
  const secrets = new SecretValues({ root: place.root, config, env: {} });
  const inTree = secrets.refresh([]).length; // the work tree's secret files alone: history only where there are some
  const files = secrets.secretFiles().length;
  if (files === 0) return { note: 'skipped: this clone has no secret files (.env, keys) whose values to look for' };
  return { files, inTree, all: secrets.refreshAsync() };
}

/** The rule that refuses the values of this clone's `files` secret files, where there are any. */
function secretValueRule(values: string[], files: number): { rule?: Rule; note: string } {
  if (values.length === 0) return { note: `none known: the ${files} secret file(s) here hold no values to look for` };
  return {
    rule: {
      id: 'secret-value',
      message: "A value of one of this clone's secret files (.env, keys) is committed here: take it out of the commit and rotate the secret.",
      forbid: values.map(literal).join('|'),
    },
    note: `judged: ${values.length} value(s) of ${files} secret file(s) in this clone`,
  };
}

const pathsOf = (changes: CommitDiffResult['changes']) => new Set(changes.flatMap((ch) => (ch.oldPath !== undefined ? [ch.oldPath, ch.path] : [ch.path])));

/**
 * Each commit against its first parent; a merge against all of its parents at once (git's
 * combined diff: only the lines that differ from every parent are the merge's own, what its
 * branches brought is judged in their own commits) and, for the paths it changes, against each
 * (a file taken from one parent is a change on the other's branch); a root commit against the
 * empty tree.
 */
const rangeDiffs = (commits: readonly RangeCommit[]): CommitDiff[] =>
  commits.map((c) =>
    c.parents.length === 1
      ? { commit: c.commit, parent: c.parents[0] }
      : c.parents.length > 1
        ? { commit: c.commit, merge: true, parents: c.parents }
        : { commit: c.commit },
  );

/** What a verdict says of the rules that judged (without the config itself). */
const rulesUsed = (rules: RangeRules): Omit<RulesUsed, 'list'> => ({
  ...(rules.commit ? { commit: rules.commit } : {}),
  found: rules.found,
  ...(rules.defaults ? { defaults: true } : {}),
  ...(rules.from ? { from: rules.from } : {}),
  ...(rules.pinned ? { pinned: rules.pinned } : {}),
});

/** Judges `commits` (oldest first) under `rules`: violations, changes to the rules file, what could not be judged here. */
export async function judgeRange(place: RangePlace, rules: RangeRules, commits: readonly RangeCommit[], started?: StartedDiffs): Promise<RangeVerdict> {
  const [here, { engine, load }] = await Promise.all([secretFilesHere(place, rules.config), judgingModules()]);
  const judge = (config: HermesConfig, diffs: readonly CommitDiff[] | StartedDiffs) =>
    engine.checkCommitDiffs(place.cwd, config, diffs, { quarantine: place.quarantine });
  const withRule = (rule: Rule | undefined): HermesConfig => (rule ? { ...rules.config, rules: [...rules.config.rules, rule] } : rules.config);
  let secret: { rule?: Rule; note: string };
  let results: CommitDiffResult[];
  if ('note' in here) {
    secret = here;
    results = await judge(rules.config, started ?? rangeDiffs(commits));
  } else if (here.inTree > 0) {
    // The work tree's secret files hold values: the range is judged once, with them and their history's.
    secret = secretValueRule(await here.all, here.files);
    results = await judge(withRule(secret.rule), started ?? rangeDiffs(commits));
  } else {
    // They hold none now: the range is judged while their history is read (git never waits on a
    // full pipe for it); a value found only in history is one more pass, for that rule alone.
    const [values, found] = await Promise.all([here.all, judge(rules.config, started ?? rangeDiffs(commits))]);
    secret = secretValueRule(values, here.files);
    const more = secret.rule ? await judge({ ...rules.config, rules: [secret.rule] }, rangeDiffs(commits)) : undefined;
    results = more ? found.map((r, i) => ({ ...r, violations: engine.sortViolations([...r.violations, ...more[i]!.violations]) })) : found;
  }
  const config = withRule(secret.rule);
  const verdict: RangeVerdict = {
    commits: commits.map((c) => c.commit),
    rules: { ...rulesUsed(rules), list: config.rules.map((r) => ({ id: r.id, message: r.message })) },
    violations: [],
    warnings: [...rules.warnings],
    configChanges: [],
    secretValues: { judged: secret.rule !== undefined, note: secret.note },
  };
  commits.forEach((c, i) => {
    const short = c.commit.slice(0, 10);
    const found = results[i]!;
    // The same finding twice: a rule the pin and the committed file both hold, with other options, finds the same line.
    const said = new Set<string>();
    for (const v of found.violations) {
      const finding = `${v.rule}\0${v.file}\0${v.line}\0${v.message}`;
      if (!said.has(finding)) verdict.violations.push({ ...v, commit: c.commit });
      said.add(finding);
    }
    const unverified = (g: CommitDiffResult['generated'][number]) =>
      `${short} ${g.file}: a file rule ${g.rule} protects changed; its generator (\`${g.generator}\`) cannot run here, so the change is not refused ` +
      '(the pre-commit hook verifies it where hermesd init ran).';
    const warnings = new Set([...found.generated.map(unverified), ...found.warnings.map((w) => `${short} ${w}`)]);
    verdict.warnings.push(...warnings);
    if (pathsOf(found.changes).has(RULES_FILE)) verdict.configChanges.push(c.commit);
  });
  const last = verdict.configChanges[verdict.configChanges.length - 1];
  if (last) {
    const text = await fileAt(place, last, RULES_FILE);
    try {
      if (text !== undefined) load.loadCommittedConfig(`${last.slice(0, 10)}:${RULES_FILE}`, text);
    } catch (err) {
      verdict.warnings.push(
        `the ${RULES_FILE} of ${last.slice(0, 10)} does not parse: ${(err as Error).message} (where it lands, hooks judge with the last version that does).`,
      );
    }
  }
  return verdict;
}

/**
 * `hermesd check --commits <range>`: the range's commits under the rules of its base (and, in a
 * bare repository with `init --server`, its pinned rules: `pinned`, the file's path). git starts
 * diffing (with the patch, whatever the rules turn out to need) as soon as the commits are listed,
 * and works while the engine and the config load.
 */
export async function checkRange(place: RangePlace, range: string, opts: { pinned?: string } = {}): Promise<RangeVerdict & { range: string; base: string }> {
  void judgingModules();
  const { base, include, exclude } = await resolveRange(place, range);
  const commits = await listCommits(place, include, exclude);
  const started = startDiffTree(place.cwd, rangeDiffs(commits), { patch: true, quarantine: place.quarantine });
  try {
    return { range, base, ...(await judgeRange(place, await rulesAt(place, base, await pinnedRules(opts.pinned)), commits, started)) };
  } finally {
    started.stop(); // read to the end by then, unless the rules could not be read
  }
}

/** One line of a pre-receive hook's input (or an update hook's arguments): a ref moved from `old` to `new`. */
export type RefUpdate = { ref: string; old: string; new: string };

const isZero = (id: string) => /^0+$/.test(id);

/** A pre-receive hook's stdin: `<old> <new> <ref>` per line. */
export function parseRefUpdates(stdin: string): RefUpdate[] {
  const out: RefUpdate[] = [];
  for (const line of stdin.split('\n')) {
    const [old, next, ref] = line.trim().split(' ');
    if (old && next && ref) out.push({ ref, old, new: next });
  }
  return out;
}

export type PushVerdict = { ref: string; verdict: RangeVerdict };

/** An object's id and type (none: missing), as `git cat-file --batch-check` names it. */
type Kind = { id: string; type?: string };

/** The ids and types of `names` (ids, `<id>^{}` to peel a tag), with one `git cat-file --batch-check`, in order. */
async function kindsOf(place: RangePlace, names: readonly string[]): Promise<Kind[]> {
  if (names.length === 0) return [];
  const out = await gitAsync(['cat-file', '--batch-check=%(objectname) %(objecttype)'], { ...call(place), input: names.join('\n') + '\n' });
  return out
    .toString('utf8')
    .split('\n')
    .slice(0, names.length)
    .map((line) => {
      const [id = '', type] = line.split(' ');
      return type === 'missing' || type === 'ambiguous' || type === undefined ? { id } : { id, type };
    });
}

/** The tags of the chains that start at `ids` (a tag of a tag…): each round reads the tags found so far, one `git cat-file --batch`. */
async function tagChains(place: RangePlace, ids: readonly string[]): Promise<Map<string, string[]>> {
  const chains = new Map<string, string[]>(ids.map((id) => [id, [id]]));
  let round = ids.map((id) => ({ start: id, tag: id }));
  while (round.length > 0) {
    const next: typeof round = [];
    let k = 0;
    await readStoredObjects(
      place.cwd,
      round.map((r) => r.tag),
      (object) => {
        const r = round[k++]!;
        // A tag's header names what it tags: `object <id>` then `type <type>`.
        const head = object.bytes?.subarray(0, 400).toString('latin1') ?? '';
        const target = /^object ([0-9a-f]+)\ntype tag\n/.exec(head)?.[1];
        const chain = chains.get(r.start)!;
        if (target && !chain.includes(target)) {
          chain.push(target);
          next.push({ start: r.start, tag: target });
        }
      },
      { quarantine: place.quarantine },
    );
    round = next;
  }
  return chains;
}

/** The blobs of `tree` the repository does not have yet (not reachable from its refs), with their paths in the tree. */
async function newBlobsOf(place: RangePlace, tree: string): Promise<Array<{ id: string; path: string }>> {
  const [fresh, listing] = await Promise.all([
    gitAsync(['rev-list', '--objects', tree, '--not', '--all'], call(place)),
    gitAsync(['ls-tree', '-r', '-z', '--full-tree', tree], call(place)),
  ]);
  // rev-list prints a path after each id, unquoted: only the ids are read from it; ls-tree gives the paths, NUL-separated.
  const ids = new Set(
    fresh
      .toString('utf8')
      .split('\n')
      .map((l) => l.slice(0, l.indexOf(' ') === -1 ? l.length : l.indexOf(' '))),
  );
  const out: Array<{ id: string; path: string }> = [];
  for (const entry of parseNulList(listing)) {
    const m = /^(\d+) blob ([0-9a-f]+)\t(.*)$/s.exec(entry);
    if (m && ids.has(m[2]!)) out.push({ id: m[2]!, path: m[3]! });
  }
  return out;
}

/**
 * What a ref names beside commits, judged as content under `rules`: each tag of its chain by its
 * message, and the blob or tree it peels to (a blob as a file at the ref's name, a tree by its new
 * blobs at their paths). A violation's `commit` is the tag, blob or tree it was found in.
 */
async function judgeObjects(
  place: RangePlace,
  rules: RangeRules,
  u: RefUpdate,
  own: Kind,
  peeled: Kind,
): Promise<{ objects: NonNullable<RangeVerdict['objects']>; violations: RangeViolation[] }> {
  const objects: NonNullable<RangeVerdict['objects']> = [];
  /** Each object to read, with what a violation in it names: the kind and id of what the ref names (the tag, the blob, the tree) and where. */
  const wholes: Array<WholeObject & { kind: ObjectKind; shown: string; note: string }> = [];
  if (own.type === 'tag') {
    for (const tag of (await tagChains(place, [own.id])).get(own.id)!) {
      objects.push({ ref: u.ref, id: tag, type: 'tag' });
      wholes.push({ id: tag, path: u.ref, message: true, kind: 'tag', shown: tag, note: `in the tag message of ${u.ref}` });
    }
  }
  if (peeled.type === 'blob') {
    objects.push({ ref: u.ref, id: peeled.id, type: 'blob' });
    wholes.push({ id: peeled.id, path: u.ref, kind: 'blob', shown: peeled.id, note: `in the blob ${u.ref} names` });
  } else if (peeled.type === 'tree') {
    objects.push({ ref: u.ref, id: peeled.id, type: 'tree' });
    for (const b of await newBlobsOf(place, peeled.id)) wholes.push({ ...b, kind: 'tree', shown: peeled.id, note: `in the tree ${u.ref} names` });
  }
  if (wholes.length === 0) return { objects, violations: [] };
  const { engine } = await judgingModules();
  const results = await engine.checkObjects(place.cwd, rules.config, wholes, { quarantine: place.quarantine });
  const said = new Set<string>();
  const violations = results
    .flatMap((r, i) => r.violations.map((v) => ({ ...v, message: `${v.message} (${wholes[i]!.note})`, commit: wholes[i]!.shown, object: wholes[i]!.kind })))
    .filter((v) => {
      const finding = `${v.rule}\0${v.file}\0${v.line}\0${v.message}`;
      if (said.has(finding)) return false;
      said.add(finding);
      return true;
    });
  return { objects, violations };
}

/**
 * A push, judged as a server hook judges it: for each ref it moves, every object new to the
 * repository. Its new commits, under the rules committed where the ref was (a new ref: where HEAD
 * is; where HEAD names no commit, init's defaults: never the rules the push itself brings), and
 * beside them the server's pinned rules (`opts.pinned`: the file, where there is one). A tag is
 * peeled: its message is judged, and what it names; a blob a ref names is judged as content, a
 * tree by its blobs the repository did not have. A deletion brings nothing. Commits two refs
 * share are judged once.
 */
export async function judgePush(place: RangePlace, updates: readonly RefUpdate[], opts: { pinned?: string } = {}): Promise<PushVerdict[]> {
  const live = updates.filter((u) => !isZero(u.new));
  if (live.length === 0) return [];
  // One batch for every type: what each ref names, what that peels to, what it named before (peeled: a moved tag's commit), and HEAD's commit.
  const names = [...live.flatMap((u) => [u.new, `${u.new}^{}`, isZero(u.old) ? 'HEAD^{commit}' : `${u.old}^{}`]), 'HEAD^{commit}'];
  const [kinds, pin] = await Promise.all([kindsOf(place, names), pinnedRules(opts.pinned)]);
  const head = kinds[kinds.length - 1]!;
  const rulesOf = new Map<string, Promise<RangeRules>>();
  const out: PushVerdict[] = [];
  const judged = new Set<string>();
  for (const [i, u] of live.entries()) {
    const [own, peeled, was] = [kinds[3 * i]!, kinds[3 * i + 1]!, kinds[3 * i + 2]!];
    // (git checks that a push brings every object its refs name before the hooks run: this is a repository that lost one.)
    if (!own.type || !peeled.type) throw new UsageError(`${u.ref}: ${u.new} is not in this repository, so the push cannot be judged.`);
    // The base: the commit the ref named before; for a new ref (or one that named no commit), HEAD's, if it has one.
    const base = was.type === 'commit' ? was.id : head.type === 'commit' ? head.id : undefined;
    if (!rulesOf.has(base ?? '')) rulesOf.set(base ?? '', rulesAt(place, base, pin));
    const rules = await rulesOf.get(base ?? '')!;
    const key = (c: RangeCommit) => `${rules.commit ?? ''}\0${rules.from ?? ''}\0${c.commit}`;
    const commits = peeled.type === 'commit' ? await listCommits(place, [u.new], ['--all']) : [];
    const fresh = commits.filter((c) => !judged.has(key(c)));
    for (const c of fresh) judged.add(key(c));
    const verdict = await judgeRange(place, rules, fresh);
    if (own.type !== 'commit') {
      const { objects, violations } = await judgeObjects(place, rules, u, own, peeled);
      verdict.objects = objects;
      verdict.violations.push(...violations);
    }
    out.push({ ref: u.ref, verdict });
  }
  return out;
}
