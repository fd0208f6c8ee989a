/** The human rendering of a check result, shared by `hermesd check` and the pre-commit hook. */
import type { CheckResult } from './engine.js';

export const BYPASS_HINT = 'To commit anyway (once): HERMESD_SKIP=1 git commit …  or  git commit --no-verify';

/** `file:line  rule-id  message` per violation, then warnings, then how to bypass. Empty when clean and warning-free. */
export function formatViolations(result: Pick<CheckResult, 'violations' | 'warnings'>): string {
  const lines: string[] = [];
  const where = result.violations.map((v) => `${v.file}:${v.line}`);
  const width = Math.min(60, Math.max(0, ...where.map((w) => w.length)));
  const ruleWidth = Math.min(30, Math.max(0, ...result.violations.map((v) => v.rule.length)));
  result.violations.forEach((v, i) => lines.push(`${where[i]!.padEnd(width)}  ${v.rule.padEnd(ruleWidth)}  ${v.message}`));
  for (const w of result.warnings) lines.push(`warning: ${w}`);
  if (result.violations.length) {
    const n = result.violations.length;
    lines.push('', `${n} rule violation${n === 1 ? '' : 's'}.`, BYPASS_HINT);
  }
  return lines.join('\n');
}

/** The rules that judged a range (range.ts's RulesUsed, without their list). */
type RangeRulesReport = { commit?: string; found: boolean; defaults?: boolean; from?: string; pinned?: string };

/** What a range's verdict needs to be shown (range.ts's RangeVerdict). */
type RangeReport = {
  commits: readonly string[];
  objects?: ReadonlyArray<{ ref: string; id: string; type: string }>;
  rules: RangeRulesReport;
  violations: ReadonlyArray<CheckResult['violations'][number] & { commit: string; object?: string }>;
  warnings: readonly string[];
  configChanges: readonly string[];
  secretValues: { judged: boolean; note: string };
};

const short = (id: string) => id.slice(0, 10);
const AFTER_IT = 'its rules judge what comes after it';
const plural = (n: number, one: string, many = `${one}s`) => `${n} ${n === 1 ? one : many}`;

/**
 * The rules that judged, named as they were: the committed file at the base (or its last version
 * that parses), or init's defaults where the base has none or there is no base; and a server's pin.
 */
export function rulesUsed(r: RangeRulesReport): string {
  const base = r.commit ? short(r.commit) : undefined;
  const committed = r.found
    ? `the rules of .hermes/config.yaml at ${base}${r.from ? ` (its version from ${short(r.from)})` : ''}`
    : `init's default rules (${base ? `the base ${base} has no .hermes/config.yaml` : 'no base to take rules from: the ref is new and HEAD names no commit'})`;
  return r.pinned ? `${committed} and the server's pinned rules (${r.pinned})` : committed;
}

/**
 * `commit  file:line  rule-id  message` per violation, then warnings and notes (a change to the
 * rules file), then a summary that names the rules that judged and how to fix.
 */
export function formatRangeVerdict(v: RangeReport): string {
  const lines: string[] = [];
  const where = v.violations.map((x) => `${x.file}:${x.line}`);
  const width = Math.min(60, Math.max(0, ...where.map((w) => w.length)));
  const ruleWidth = Math.min(30, Math.max(0, ...v.violations.map((x) => x.rule.length)));
  v.violations.forEach((x, i) => lines.push(`${short(x.commit)}  ${where[i]!.padEnd(width)}  ${x.rule.padEnd(ruleWidth)}  ${x.message}`));
  for (const w of v.warnings) lines.push(`warning: ${w}`);
  const rules = rulesUsed(v.rules);
  const judging = v.rules.found && v.rules.commit ? `the rules committed in ${short(v.rules.commit)}` : rules;
  for (const c of v.configChanges) {
    lines.push(`note: ${short(c)} changes .hermes/config.yaml; these commits are judged by ${judging}, which a commit cannot loosen (${AFTER_IT}).`);
  }
  if (v.secretValues.judged) lines.push(`note: secret values ${v.secretValues.note}.`);
  const n = v.commits.length;
  const m = v.objects?.length ?? 0;
  const inObjects = v.violations.filter((x) => x.object);
  /** What was judged ("3 commits", "2 of 3 commits and 1 of 2 other objects…"), with how many of each broke a rule. */
  const judged = (bad?: { commits: number; objects: number }) => {
    const commits = `${bad ? `${bad.commits} of ` : ''}${plural(n, 'commit')}`;
    const objects = `${bad ? `${bad.objects} of ` : ''}${plural(m, 'other object')} the refs name (tags, trees, blobs)`;
    return m === 0 ? commits : n === 0 ? objects : `${commits} and ${objects}`;
  };
  if (v.violations.length === 0) {
    lines.push(`no rule violations in ${judged()}, judged by ${rules}`);
  } else {
    const bad = { commits: new Set(v.violations.filter((x) => !x.object).map((x) => x.commit)).size, objects: new Set(inObjects.map((x) => x.commit)).size };
    lines.push('', `${plural(v.violations.length, 'rule violation')} in ${judged(bad)}, judged by ${rules}.`);
    const rebase = v.rules.commit ? short(v.rules.commit) : '--root';
    if (bad.commits > 0) lines.push(`To fix: rewrite the commits that carry them (e.g. git rebase -i ${rebase}) so that none does, then push again.`);
    if (bad.objects > 0) lines.push('To fix a tag, tree or blob a ref names: make one without them (a tag: git tag -d, then tag again), then push it.');
  }
  return lines.join('\n');
}
