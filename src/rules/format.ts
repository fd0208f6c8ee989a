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

/** What a range's verdict needs to be shown (range.ts's RangeVerdict). */
type RangeReport = {
  commits: readonly string[];
  rules: { commit: string; found: boolean; from?: string; pushed?: boolean };
  violations: ReadonlyArray<CheckResult['violations'][number] & { commit: string }>;
  warnings: readonly string[];
  configChanges: readonly string[];
  secretValues: { judged: boolean; note: string };
};

const short = (id: string) => id.slice(0, 10);

/**
 * `commit  file:line  rule-id  message` per violation, then warnings and notes (a change to the
 * rules file, rules missing), then a summary that names the rules that judged and how to fix.
 */
export function formatRangeVerdict(v: RangeReport): string {
  const lines: string[] = [];
  const where = v.violations.map((x) => `${x.file}:${x.line}`);
  const width = Math.min(60, Math.max(0, ...where.map((w) => w.length)));
  const ruleWidth = Math.min(30, Math.max(0, ...v.violations.map((x) => x.rule.length)));
  v.violations.forEach((x, i) => lines.push(`${short(x.commit)}  ${where[i]!.padEnd(width)}  ${x.rule.padEnd(ruleWidth)}  ${x.message}`));
  for (const w of v.warnings) lines.push(`warning: ${w}`);
  const base = short(v.rules.commit);
  if (v.rules.pushed) lines.push(`note: the repository had no commits, so the rules this push brings (.hermes/config.yaml at ${base}) judge it.`);
  for (const c of v.rules.pushed ? [] : v.configChanges) {
    lines.push(`note: ${short(c)} changes .hermes/config.yaml; these commits are judged by the rules committed in ${base}, which a commit cannot loosen (its rules judge what comes after it).`);
  }
  if (!v.rules.found) lines.push(`note: ${base} has no .hermes/config.yaml: there are no rules to judge with.`);
  if (v.secretValues.judged) lines.push(`note: secret values ${v.secretValues.note}.`);
  const n = v.commits.length;
  const rulesOf = `the rules of .hermes/config.yaml at ${base}${v.rules.from ? ` (its version from ${short(v.rules.from)})` : ''}`;
  if (v.violations.length === 0) {
    lines.push(`no rule violations in ${n} commit${n === 1 ? '' : 's'}, judged by ${rulesOf}`);
  } else {
    const bad = new Set(v.violations.map((x) => x.commit)).size;
    const k = v.violations.length;
    lines.push('', `${k} rule violation${k === 1 ? '' : 's'} in ${bad} of ${n} commit${n === 1 ? '' : 's'}, judged by ${rulesOf}.`);
    lines.push(`To fix: rewrite the commits that carry them (e.g. git rebase -i ${base}) so that none does, then push again.`);
  }
  return lines.join('\n');
}
