/**
 * The `secrets` rule kind: no added line may hold a secret, by gitleaks' maintained rule set
 * (src/security/gitleaks-rules.ts: ~220 token formats and service assignments with their
 * keywords, entropy thresholds, allowlists and stopwords), evaluated as gitleaks evaluates a
 * commit: on each run of consecutive added lines of a file (a hunk's added lines), with the
 * file's path for the rules and allowlists scoped to paths. A finding on a line that says
 * `gitleaks:allow` is left alone, as gitleaks does; a rule's `allow` regexes name values
 * that are known test fixtures. A finding names the gitleaks rule, the file and the line, with
 * the value masked.
 */
import { fileScope, findWithRules, gitleaksFileRuleSet, pathFindings, type FileScope, type RuleSet } from '../security/gitleaks.js';

/** gitleaks' catch-all for `…key = value` assignments. */
const GENERIC_RULE = 'generic-api-key';
/** A finding whose line says this is left alone (gitleaks' inline allow comment). */
const INLINE_ALLOW = 'gitleaks:allow';

export type SecretFinding = { line: number; ruleId: string; masked: string };

/**
 * A secret as a finding shows it: a few leading characters (a token's prefix, `ghp_`) and its
 * length, never enough of it to use.
 */
export function maskSecret(value: string): string {
  const shown = value.length >= 20 ? 4 : value.length >= 12 ? 2 : 0;
  return `${value.slice(0, shown)}…(${value.length} chars)`;
}

/** Collects one file's added lines in runs of consecutive lines and judges each run whole. */
export class SecretScanner {
  private run: Array<{ line: number; text: string }> = [];
  private readonly set: RuleSet = gitleaksFileRuleSet();
  /** What of the rule set applies to this file, worked out once for all its runs. */
  private readonly scope: FileScope;

  constructor(
    private readonly path: string,
    /** Regexes of allowed values (the rule's `allow`). */
    private readonly allow: RegExp[],
    private readonly report: (f: SecretFinding) => void,
  ) {
    // A rule that is only a path (a PKCS #12 file): the file itself is the finding.
    for (const ruleId of pathFindings(path, this.set)) report({ line: 0, ruleId, masked: path });
    this.scope = fileScope(this.set, path);
  }

  line(line: number, text: string): void {
    const last = this.run[this.run.length - 1];
    if (last && line !== last.line + 1) this.flush();
    this.run.push({ line, text });
  }

  /** Judges the lines collected so far (call at the end of the file). */
  flush(): void {
    const run = this.run;
    if (run.length === 0) return;
    this.run = [];
    const text = run.length === 1 ? run[0]!.text : run.map((l) => l.text).join('\n');
    const found = findWithRules(text, this.set, this.path, this.scope);
    if (found.length === 0) return;
    // Where each line starts in the joined text, to turn an offset into a line number.
    const starts: number[] = [];
    let at = 0;
    for (const l of run) {
      starts.push(at);
      at += l.text.length + 1;
    }
    const lineAt = (offset: number): number => {
      let lo = 0;
      let hi = starts.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        if (starts[mid]! <= offset) lo = mid;
        else hi = mid - 1;
      }
      return lo;
    };
    // Where a service's own rule and the generic assignment rule find the same value, the service's says it (as gitleaks reports it).
    const findings = found.sort((a, b) => Number(a.ruleId === GENERIC_RULE) - Number(b.ruleId === GENERIC_RULE));
    const taken: Array<[number, number]> = [];
    for (const f of findings) {
      if (taken.some(([s, e]) => f.start < e && s < f.end)) continue;
      taken.push([f.start, f.end]);
      const first = lineAt(f.start);
      const last = lineAt(Math.max(f.start, f.end - 1));
      if (run.slice(first, last + 1).some((l) => l.text.includes(INLINE_ALLOW))) continue;
      if (this.allow.some((r) => r.test(f.secret))) continue;
      this.report({ line: run[first]!.line, ruleId: f.ruleId, masked: maskSecret(f.secret) });
    }
  }
}
