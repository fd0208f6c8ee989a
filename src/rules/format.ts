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
