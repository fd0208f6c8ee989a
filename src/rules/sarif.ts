/**
 * A check's result as a SARIF 2.1.0 log (`hermesd check --format sarif`), the format code
 * scanning uploads take (GitHub's upload-sarif action, GitLab, Azure DevOps). One run; each
 * violation a result at its file and line (a protected path: the file alone), with the commit
 * that brought it; warnings are the run's tool notifications. test/rules/check-sarif-validates-against-the-schema.test.ts
 * validates it against the SARIF 2.1.0 schema.
 */
import { sha256 } from '../text/hash.js';
import type { Violation } from './engine.js';

/** The schema a SARIF 2.1.0 log names (the one GitHub's documentation shows). */
const SARIF_SCHEMA = 'https://json.schemastore.org/sarif-2.1.0.json';

export type Finding = Violation & { commit?: string };

/** A path as a relative URI reference: each segment percent-encoded (a space, `#`, `%` are not URI characters). */
function pathUri(path: string): string {
  return path.split('/').map(encodeURIComponent).join('/');
}

/**
 * The SARIF log of `violations`. `rules`: the rules that judged (id and message), so the log
 * lists them even when none was broken; rules only a violation names are added from it.
 * `judgedBy`: where those rules came from (a range's base, init's defaults, a server's pin), in
 * the run's property bag.
 */
export function sarifLog(
  result: { violations: readonly Finding[]; warnings: readonly string[] },
  opts: { version: string; rules?: ReadonlyArray<{ id: string; message: string }>; judgedBy?: string },
): object {
  const rules = new Map<string, string>();
  for (const r of opts.rules ?? []) rules.set(r.id, r.message);
  for (const v of result.violations) if (!rules.has(v.rule)) rules.set(v.rule, v.message);
  const index = new Map([...rules.keys()].map((id, i) => [id, i] as const));
  return {
    $schema: SARIF_SCHEMA,
    version: '2.1.0',
    runs: [
      {
        tool: {
          driver: {
            name: 'hermesd',
            version: opts.version,
            rules: [...rules].map(([id, message]) => ({ id, shortDescription: { text: message }, defaultConfiguration: { level: 'error' } })),
          },
        },
        invocations: [
          {
            executionSuccessful: true,
            toolExecutionNotifications: result.warnings.map((text) => ({ level: 'warning', message: { text } })),
          },
        ],
        results: result.violations.map((v) => ({
          ruleId: v.rule,
          ruleIndex: index.get(v.rule)!,
          level: 'error',
          message: { text: v.commit ? `${v.message} (commit ${v.commit.slice(0, 10)})` : v.message },
          locations: [
            {
              physicalLocation: {
                artifactLocation: { uri: pathUri(v.file), uriBaseId: '%SRCROOT%' },
                ...(v.line > 0 ? { region: { startLine: v.line } } : {}),
              },
            },
          ],
          // Code scanning tells a new alert from one it has seen by this: the same rule, file, line and commit.
          partialFingerprints: { 'hermesd/v1': sha256(`${v.rule}\0${v.file}\0${v.line}\0${v.commit ?? ''}`) },
          ...(v.commit ? { properties: { commit: v.commit } } : {}),
        })),
        ...(opts.judgedBy ? { properties: { judgedBy: opts.judgedBy } } : {}),
      },
    ],
  };
}
