/**
 * hermesd as a hook of the repository's hook manager, the way each one expects it:
 * an entry in `.pre-commit-config.yaml` (the pre-commit framework: `repo: local`, language
 * `system`, nothing downloaded) or a command in `lefthook.yml`. Written as text between
 * marker comments, at the end of the list it belongs to, so nothing of yours is re-serialised,
 * reordered or lost; `--uninstall` takes exactly that text out again. Every edit is checked
 * by parsing the result: your entries must come out unchanged, ours must be where it should.
 *
 * The entry finds this clone's runner at run time (`<git-common-dir>/hermesd/hook`, written
 * by `hermesd init`), so the committed config works in every clone: one where hermesd is not
 * set up says so in one line and lets the commit through.
 */
import { readTextIfAny } from '../storage/read.js';
import { shQuote } from '../text/sh-quote.js';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { isMap, isSeq, parseDocument, type Document } from 'yaml';
import { ConfigError } from '../errors/index.js';

export const CONFIG_BEGIN = '# >>> hermesd (added by `hermesd init`; `hermesd init --uninstall` removes it) >>>';
export const CONFIG_END = '# <<< hermesd <<<';

/** The pre-commit framework's config file (it reads no other name). */
export const PRE_COMMIT_CONFIG = '.pre-commit-config.yaml';
/** lefthook's main config names, in the order lefthook looks for them (YAML ones: the ones we edit). */
export const LEFTHOOK_CONFIGS = ['lefthook.yml', 'lefthook.yaml', '.lefthook.yml', '.lefthook.yaml', '.config/lefthook.yml', '.config/lefthook.yaml'];
/** lefthook config formats we cannot edit as YAML text. */
export const LEFTHOOK_OTHER_CONFIGS = ['lefthook.toml', '.lefthook.toml', 'lefthook.json', '.lefthook.json', 'lefthook.jsonc'];

/** The id of our entry in either manager's config. */
export const ENTRY_ID = 'hermesd';

/**
 * The shell command a manager runs: this clone's runner, found through git (one `git
 * rev-parse`, a few ms next to the manager's own start-up), or one line saying hermesd is not
 * set up here. `hook` is the runner's hook name (pre-commit, pre-commit-final, post-commit…).
 */
export function entryCommand(hook: string, args = ''): string {
  return `h="$(git rev-parse --git-common-dir)/hermesd/hook"; if [ -f "$h" ]; then exec "$h" ${hook}${args ? ` ${args}` : ''}; fi; echo "hermesd is not set up in this clone (run: hermesd init)" >&2`;
}

/** git's hook arguments as the pre-commit framework hands them to a hook (environment variables, not arguments). */
const FRAMEWORK_ARGS: Record<string, string> = {
  'post-checkout': '"$PRE_COMMIT_FROM_REF" "$PRE_COMMIT_TO_REF" "$PRE_COMMIT_CHECKOUT_TYPE"',
  'post-merge': '"$PRE_COMMIT_IS_SQUASH_MERGE"',
  'post-rewrite': '"$PRE_COMMIT_REWRITE_COMMAND"',
};
/** …and as lefthook does (templates it fills in before running the command). */
const LEFTHOOK_ARGS: Record<string, string> = { 'post-checkout': '{1} {2} {3}', 'post-merge': '{1}', 'post-rewrite': '{1}' };

/** A YAML single-quoted scalar. */
const yamlQuote = (s: string) => `'${s.replace(/'/g, "''")}'`;

function lineStart(text: string, offset: number): number {
  return text.lastIndexOf('\n', offset - 1) + 1;
}

function insertAt(text: string, at: number, block: string): string {
  const head = text.slice(0, at);
  return (head.length && !head.endsWith('\n') ? head + '\n' : head) + block + text.slice(at);
}

function parse(file: string, text: string): Document {
  const doc = parseDocument(text);
  if (doc.errors.length)
    throw new ConfigError(
      `${file} is not valid YAML (${doc.errors[0]!.message.split('\n')[0]}); hermesd did not change it. Fix it, then run hermesd init again.`,
    );
  return doc;
}

/** Takes our marked block(s) out of a config's text; undefined when there is none. */
export function withoutConfigEntry(text: string): string | undefined {
  let out = text;
  let found = false;
  for (;;) {
    const start = out.indexOf(CONFIG_BEGIN);
    if (start < 0) break;
    const end = out.indexOf(CONFIG_END, start);
    if (end < 0) break;
    const from = lineStart(out, start);
    let to = end + CONFIG_END.length;
    if (out[to] === '\n') to++;
    out = out.slice(0, from) + out.slice(to);
    found = true;
  }
  return found ? out : undefined;
}

// --- the pre-commit framework -------------------------------------------------------------

/** Stage names changed in pre-commit 3.2 (`commit` became `pre-commit`); 3.0 refuses the new ones. */
export function preCommitStage(hook: string, frameworkVersion: string | undefined): string {
  if (hook !== 'pre-commit') return hook;
  const m = /(\d+)\.(\d+)/.exec(frameworkVersion ?? '');
  const old = m !== null && (Number(m[1]) < 3 || (Number(m[1]) === 3 && Number(m[2]) < 2));
  return old ? 'commit' : 'pre-commit';
}

/**
 * `.pre-commit-config.yaml` with a `repo: local` entry running hermesd for each of `hooks`
 * (git hook names), appended at the end of `repos:` (the framework runs hooks in order: hermesd
 * judges what the others leave; a hook of the framework that changes files fails the commit
 * by the framework's own rule, so the tree cannot change after it).
 */
export function withPreCommitEntry(text: string, hooks: readonly string[], frameworkVersion: string | undefined): string {
  const clean = withoutConfigEntry(text) ?? text;
  const doc = parse(PRE_COMMIT_CONFIG, clean);
  const repos = doc.get('repos', true);
  const hookLines = (indent: string) =>
    hooks.flatMap((hook) => [
      `${indent}- id: ${hook === 'pre-commit' ? ENTRY_ID : `${ENTRY_ID}-${hook}`}`,
      `${indent}  name: hermesd ${hook === 'pre-commit' ? '(repository rules and checks)' : `(${hook} evidence)`}`,
      `${indent}  entry: ${yamlQuote(`sh -c ${shQuote(entryCommand(hook, FRAMEWORK_ARGS[hook]))} hermesd`)}`,
      `${indent}  language: system`,
      `${indent}  pass_filenames: false`,
      `${indent}  always_run: true`,
      `${indent}  stages: [${preCommitStage(hook, frameworkVersion)}]`,
    ]);
  let out: string;
  if (repos === undefined || repos === null) {
    out = insertAt(clean, clean.length, [CONFIG_BEGIN, 'repos:', '  - repo: local', '    hooks:', ...hookLines('      '), CONFIG_END, ''].join('\n'));
  } else if (isSeq(repos) && repos.range && repos.flow !== true && repos.items.length > 0) {
    const col = repos.range[0] - lineStart(clean, repos.range[0]);
    const ind = ' '.repeat(col);
    out = insertAt(
      clean,
      repos.range[1],
      [`${ind}${CONFIG_BEGIN}`, `${ind}- repo: local`, `${ind}  hooks:`, ...hookLines(`${ind}    `), `${ind}${CONFIG_END}`, ''].join('\n'),
    );
  } else {
    throw new ConfigError(
      `${PRE_COMMIT_CONFIG}: "repos" is not a block list hermesd can append to; hermesd did not change it. Add this entry to "repos" by hand, then run hermesd init again:\n` +
        ['- repo: local', '  hooks:', ...hookLines('    ')].join('\n'),
    );
  }
  const before = doc.toJS() as { repos?: unknown[] };
  const after = parse(PRE_COMMIT_CONFIG, out).toJS() as { repos?: Array<{ repo?: string; hooks?: Array<{ id?: string }> }> };
  const kept = JSON.stringify(after.repos?.slice(0, before.repos?.length ?? 0)) === JSON.stringify(before.repos ?? []);
  const ours = after.repos?.at(-1);
  if (!kept || ours?.repo !== 'local' || ours.hooks?.[0]?.id !== (hooks[0] === 'pre-commit' ? ENTRY_ID : `${ENTRY_ID}-${hooks[0]}`)) {
    throw new ConfigError(`${PRE_COMMIT_CONFIG}: hermesd could not add its entry without changing yours; hermesd did not change it.`);
  }
  return out;
}

// --- lefthook ------------------------------------------------------------------------------

export function findLefthookConfig(root: string): { file: string; editable: boolean } | undefined {
  for (const f of LEFTHOOK_CONFIGS) if (existsSync(join(root, f))) return { file: f, editable: true };
  for (const f of LEFTHOOK_OTHER_CONFIGS) if (existsSync(join(root, f))) return { file: f, editable: false };
  return undefined;
}

/** The git hooks lefthook's config has a section for. */
export function lefthookSections(text: string): string[] {
  const doc = parseDocument(text);
  if (!isMap(doc.contents)) return [];
  return doc.contents.items.map((p) => String((p.key as { value?: unknown })?.value ?? p.key)).filter((k) => /^[a-z]+(-[a-z]+)*$/.test(k));
}

/**
 * lefthook.yml with a `hermesd` command in each of `sections` (git hook name → the runner's
 * hook name), added to the section's `jobs` (lefthook ≥ 1.10) or `commands`, or a new section
 * at the end of the file. lefthook runs commands in order and unprioritised ones last.
 */
export function withLefthookEntries(file: string, text: string, sections: ReadonlyArray<{ hook: string; run: string }>): string {
  let out = withoutConfigEntry(text) ?? text;
  const before = parse(file, out).toJS() as Record<string, unknown> | null;
  for (const { hook, run } of sections) {
    const doc = parse(file, out);
    const section = isMap(doc.contents) ? doc.contents.get(hook, true) : undefined;
    const command = yamlQuote(entryCommand(run, LEFTHOOK_ARGS[hook]));
    if (section === undefined || section === null) {
      out = insertAt(out, out.length, [CONFIG_BEGIN, `${hook}:`, '  commands:', `    ${ENTRY_ID}:`, `      run: ${command}`, CONFIG_END, ''].join('\n'));
      continue;
    }
    if (!isMap(section) || !section.range || section.flow)
      throw new ConfigError(`${file}: the "${hook}" section is not a block mapping hermesd can add to; hermesd did not change the file.`);
    const jobs = section.get('jobs', true);
    const commands = section.get('commands', true);
    if (isSeq(jobs) && jobs.range && !jobs.flow && jobs.items.length) {
      const ind = ' '.repeat(jobs.range[0] - lineStart(out, jobs.range[0]));
      out = insertAt(
        out,
        jobs.range[1],
        [`${ind}${CONFIG_BEGIN}`, `${ind}- name: ${ENTRY_ID}`, `${ind}  run: ${command}`, `${ind}${CONFIG_END}`, ''].join('\n'),
      );
    } else if (isMap(commands) && commands.range && !commands.flow && commands.items.length) {
      const ind = ' '.repeat(commands.range[0] - lineStart(out, commands.range[0]));
      out = insertAt(out, commands.range[1], [`${ind}${CONFIG_BEGIN}`, `${ind}${ENTRY_ID}:`, `${ind}  run: ${command}`, `${ind}${CONFIG_END}`, ''].join('\n'));
    } else if (jobs === undefined && commands === undefined && section.items.length) {
      // A section with scripts only (or options): add a commands list at its end.
      const first = section.items[0]!.key as { range?: [number, number, number] };
      const ind = ' '.repeat(first.range ? first.range[0] - lineStart(out, first.range[0]) : 2);
      out = insertAt(
        out,
        section.range[1],
        [`${ind}${CONFIG_BEGIN}`, `${ind}commands:`, `${ind}  ${ENTRY_ID}:`, `${ind}    run: ${command}`, `${ind}${CONFIG_END}`, ''].join('\n'),
      );
    } else {
      throw new ConfigError(`${file}: the "${hook}" section's jobs/commands are not a block list hermesd can add to; hermesd did not change the file.`);
    }
  }
  // Yours unchanged, ours in every section asked for.
  const after = parse(file, out).toJS() as Record<string, { commands?: Record<string, unknown>; jobs?: Array<{ name?: string }> }>;
  const strip = (v: unknown) => JSON.parse(JSON.stringify(v ?? null));
  for (const [key, value] of Object.entries(before ?? {})) {
    const now = strip(after[key]) as { commands?: Record<string, unknown>; jobs?: Array<{ name?: string }> } | null;
    if (now && typeof now === 'object') {
      if (now.commands) delete now.commands[ENTRY_ID];
      if (Array.isArray(now.jobs)) now.jobs = now.jobs.filter((j) => j?.name !== ENTRY_ID);
      const was = strip(value) as { commands?: unknown };
      if (was && typeof was === 'object' && !('commands' in was) && now.commands && Object.keys(now.commands).length === 0) delete now.commands;
    }
    if (JSON.stringify(now) !== JSON.stringify(strip(value)))
      throw new ConfigError(`${file}: hermesd could not add its commands without changing yours; hermesd did not change the file.`);
  }
  for (const { hook } of sections) {
    const s = after[hook];
    const ok = (s?.commands && ENTRY_ID in s.commands) || s?.jobs?.some((j) => j?.name === ENTRY_ID);
    if (!ok) throw new ConfigError(`${file}: hermesd could not add its command to "${hook}"; hermesd did not change the file.`);
  }
  return out;
}

/** Reads a config file of the work tree, or undefined. */
export function readConfig(root: string, file: string): string | undefined {
  return readTextIfAny(join(root, file));
}
