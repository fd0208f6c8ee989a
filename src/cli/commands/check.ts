/**
 * `hermesd check [--staged | --commits <range> | --context] [--format text|json|sarif]`: the repository's
 * rules on the work tree's changes or the staged snapshot (through the daemon), or on every
 * commit of a range under the rules committed in its base (in this process: no daemon, no work
 * tree needed — CI, a bare repository; docs/ci.md); with `--context`, the instruction files each
 * agent reads against the authority (in this process too). Exit 1 on a violation, 2 on a usage or
 * config error. With GITHUB_ACTIONS=true the violations are also GitHub annotations.
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { Violation } from '../../rules/engine.js';
import type { Finding } from '../../rules/sarif.js';
import { formatRangeVerdict, formatViolations, rulesUsed } from '../../rules/format.js';
import { UsageError } from '../../errors/index.js';
import { VERSION } from '../../version.js';
import { action, color, daemon, failWith, globals, type GlobalOptions } from '../runtime.js';

type CheckAnswer = { violations: Violation[]; warnings: string[]; staged: boolean };

const FORMATS = ['text', 'json', 'sarif'] as const;
type Format = (typeof FORMATS)[number];

function formatOf(opts: { format?: string }, globalOpts: GlobalOptions): Format {
  if (opts.format === undefined) return globalOpts.json ? 'json' : 'text';
  if (!(FORMATS as readonly string[]).includes(opts.format)) throw new UsageError(`--format must be one of ${FORMATS.join(', ')} (got "${opts.format}").`);
  if (globalOpts.json && opts.format !== 'json') throw new UsageError(`--json and --format ${opts.format} ask for two outputs; give one.`);
  return opts.format as Format;
}

/**
 * Prints a result in `format`; on GitHub's runners also as annotations (on stdout beside text,
 * on stderr beside JSON or SARIF, whose stdout must stay one document: the runner reads both).
 */
async function report(
  format: Format,
  result: { violations: readonly Finding[]; warnings: readonly string[] },
  shapes: { json: () => unknown; text: () => string; rules?: ReadonlyArray<{ id: string; message: string }>; judgedBy?: string },
): Promise<void> {
  const write = (s: string) => process.stdout.write(s.endsWith('\n') ? s : s + '\n');
  if (process.env.GITHUB_ACTIONS === 'true') {
    const { githubAnnotations, githubNotice } = await import('../../rules/annotations.js');
    const lines = githubAnnotations(result);
    // Beside JSON or SARIF the run's log has no summary: a notice names the rules that judged (text prints it itself).
    if (format !== 'text' && shapes.judgedBy) lines.push(githubNotice(`judged by ${shapes.judgedBy}`));
    if (lines.length) (format === 'text' ? process.stdout : process.stderr).write(lines.join('\n') + '\n');
  }
  if (format === 'json') write(JSON.stringify(shapes.json(), null, 2));
  else if (format === 'sarif') {
    const { sarifLog } = await import('../../rules/sarif.js');
    write(JSON.stringify(sarifLog(result, { version: VERSION, rules: shapes.rules, judgedBy: shapes.judgedBy }), null, 2));
  } else {
    const text = shapes.text();
    if (text) write(text);
  }
}

/**
 * The range check: its bundle (one file instead of ~200 modules: most of a short check's time,
 * docs/benchmarks.md#commits), or the per-file build where there is none (tests of the sources).
 */
export async function rangeModule(): Promise<typeof import('../../rules/range.js')> {
  const { existsSync } = await import('node:fs');
  const { RANGE_ENTRY } = await import('../../version.js');
  return existsSync(RANGE_ENTRY) ? ((await import(RANGE_ENTRY)) as typeof import('../../rules/range.js')) : import('../../rules/range.js');
}

/** `--commits <range>`: judged in this process, from a clone or a bare repository. */
async function checkCommits(range: string, format: Format): Promise<void> {
  const loading = rangeModule(); // loads while git finds the repository
  const { findGitRepository, serverConfigPath } = await import('../../paths/index.js');
  const { checkRange } = await loading;
  const repo = findGitRepository(process.cwd());
  // In a server's bare repository, its pinned rules judge too, as its pre-receive hook judges.
  const verdict = await checkRange({ cwd: repo.root ?? repo.gitDir, root: repo.root }, range, repo.root ? {} : { pinned: serverConfigPath(repo.gitDir) });
  const { commits, ...rest } = verdict;
  const { list, ...used } = rest.rules;
  const judgedBy = rulesUsed(used);
  await report(format, verdict, {
    json: () => ({
      ...rest,
      rules: {
        commit: used.commit,
        found: used.found,
        ...(used.from ? { from: used.from } : {}),
        ids: list.map((r) => r.id),
        ...(used.defaults ? { defaults: true } : {}),
        ...(used.pinned ? { pinned: used.pinned } : {}),
        by: judgedBy,
      },
      commits: commits.length,
    }),
    text: () => {
      const text = formatRangeVerdict(verdict);
      return verdict.violations.length ? text : color.green(text);
    },
    rules: list,
    judgedBy,
  });
  if (verdict.violations.length > 0) failWith(1);
}

/**
 * `--no-daemon`: the rules judged in this process, with the config in force as the daemon would
 * judge with it (a loosening held until approved; a config that does not load, the last approved
 * rules): what a git hook runs when no daemon could start, before `hooks.onUnavailable` is asked.
 */
async function checkHere(staged: boolean, indexFile: string | undefined): Promise<CheckAnswer> {
  const [{ findRepo, hermesHome }, { configInForce }, engine] = await Promise.all([
    import('../../paths/index.js'),
    import('../../guard/approval.js'),
    import('../../rules/engine.js'),
  ]);
  const { root } = findRepo(process.cwd());
  const config = configInForce(hermesHome(), root);
  const result = staged ? await engine.checkStaged(root, config, indexFile ? { indexFile } : {}) : await engine.checkWorktree(root, config);
  return { violations: result.violations, warnings: result.warnings, staged };
}

/**
 * `--context`: where a file an agent reads on its own disagrees with the authority on a command
 * or a protected path. In this process, as `--commits` (CI runs it without a daemon).
 */
async function checkContext(format: Format): Promise<void> {
  const [{ realpathSync }, { findRepo, hermesHome }, { configInForce }, { loadConfig }, { loadAuthority }, drift] = await Promise.all([
    import('node:fs'),
    import('../../paths/index.js'),
    import('../../guard/approval.js'),
    import('../../config/load.js'),
    import('../../context/authority.js'),
    import('../../other-agents/agent-drift.js'),
  ]);
  const { root } = findRepo(process.cwd());
  const cwd = realpathSync(process.cwd());
  const warnings: string[] = [];
  try {
    loadConfig({ root, home: hermesHome() });
  } catch (err) {
    warnings.push(`The config files do not load (${(err as Error).message}); the protect rules last approved here were compared.`);
  }
  const r = await drift.agentsReport(root, await loadAuthority({ cwd, root }), configInForce(hermesHome(), root), cwd);
  warnings.push(...r.warnings);
  const violations = r.conflicts.map((d) => ({
    rule: `context-${d.kind}`,
    file: d.file,
    line: d.line,
    message: d.message,
    text: d.text,
    authority: d.authority,
    agents: d.agents,
  }));
  await report(
    format,
    { violations, warnings },
    {
      json: () => ({ violations, warnings, authority: r.authority }),
      text: () => {
        const lines: string[] = [];
        for (const d of r.conflicts) {
          const [own, theirs] = drift.conflictLines(d);
          lines.push(own, theirs, `  ${d.message}`);
        }
        for (const w of warnings) lines.push(`warning: ${w}`);
        const read = [...new Set(r.agents.flatMap((a) => a.shadowed))];
        const summary =
          r.authority.length === 0
            ? 'No authority file here (HERMES.md, AGENTS.md, CLAUDE.md or Cursor rules): nothing to disagree with.'
            : `authority ${r.authority.join(', ')}; compared with ${read.length > 0 ? read.join(', ') : 'no other instruction file'}: `;
        if (r.conflicts.length > 0) {
          const n = r.conflicts.length;
          lines.push('', `${summary}${n} disagreement${n === 1 ? '' : 's'}.`);
          return lines.join('\n');
        }
        lines.push(color.green(r.authority.length === 0 ? summary : `${summary}they agree.`));
        return lines.join('\n');
      },
      rules: [
        { id: 'context-command', message: "An agent's own instruction file gives another build, test, lint, format or typecheck command than the authority." },
        {
          id: 'context-protected-path',
          message: "An agent's own instruction file keeps agents off a path nothing protects, or sends them to one the authority keeps them off.",
        },
      ],
    },
  );
  if (violations.length > 0) failWith(1);
}

export function register(program: Command): void {
  program
    .command('check')
    .description(
      'judge the repository rules on the work tree changes against HEAD, with --staged on exactly the staged snapshot, or with --commits on every commit of a range under the rules committed in its base (no daemon; CI, bare repositories); with --context, whether the instruction files agents read agree with the authority. Exit 1 on any violation',
    )
    .option('--staged', 'judge the staged snapshot (what pre-commit judges) instead of the work tree')
    .option('--commits <range>', 'judge every commit of a range, e.g. origin/main..HEAD, under the rules committed in its base (no daemon needed)')
    .option(
      '--context',
      'exit 1 where an instruction file an agent reads on its own (CLAUDE.md, GEMINI.md, Cursor rules, AGENTS.md) disagrees with the authority on a command or a protected path (no daemon needed)',
    )
    .option('--format <format>', `output: ${FORMATS.join(', ')} (SARIF 2.1.0, for code scanning); default text, or json with --json`)
    .option(
      '--no-daemon',
      "judge in this process, without the daemon (what a git hook does when no daemon could start): the rules only, the repository's checks not run",
    )
    .action(
      action(async (opts: { staged?: boolean; commits?: string; context?: boolean; format?: string; daemon?: boolean }, cmd: Command) => {
        const format = formatOf(opts, globals(cmd));
        if (opts.context) {
          if (opts.staged || opts.commits !== undefined)
            throw new UsageError('--context compares the instruction files, --staged and --commits judge changes; give one.');
          await checkContext(format);
          return;
        }
        if (opts.commits !== undefined) {
          if (opts.staged) throw new UsageError('--staged judges the staged snapshot and --commits a range of commits; give one.');
          await checkCommits(opts.commits, format);
          return;
        }
        // Inside a git hook during `git commit -a` or `git commit <paths>`, the snapshot being
        // committed is a temporary index that git names in GIT_INDEX_FILE.
        const indexFile = opts.staged && process.env.GIT_INDEX_FILE ? resolve(process.cwd(), process.env.GIT_INDEX_FILE) : undefined;
        const answer =
          opts.daemon === false
            ? await checkHere(Boolean(opts.staged), indexFile)
            : await (await daemon()).call<CheckAnswer>('POST', '/v1/check', { staged: Boolean(opts.staged), ...(indexFile ? { indexFile } : {}) });
        await report(format, answer, {
          json: () => ({ violations: answer.violations, warnings: answer.warnings }),
          text: () => {
            if (answer.violations.length === 0 && answer.warnings.length === 0) {
              return color.green(`no rule violations${answer.staged ? ' in the staged snapshot' : ' in the work tree changes'}`);
            }
            return formatViolations(answer);
          },
        });
        if (answer.violations.length > 0) failWith(1);
      }),
    );
}
