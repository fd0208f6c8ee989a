import { resolve } from 'node:path';
import type { Command } from 'commander';
import type { Violation } from '../../rules/engine.js';
import { formatViolations } from '../../rules/format.js';
import { action, color, daemon, failWith, globals, output } from '../runtime.js';

type CheckAnswer = { violations: Violation[]; warnings: string[]; staged: boolean };

export function register(program: Command): void {
  program
    .command('check')
    .description('judge the repository rules on the work tree changes against HEAD, or with --staged on exactly the staged snapshot (exit 1 on any violation)')
    .option('--staged', 'judge the staged snapshot (what pre-commit judges) instead of the work tree')
    .action(
      action(async (opts: { staged?: boolean }, cmd: Command) => {
        const client = await daemon();
        // Inside a git hook during `git commit -a` or `git commit <paths>`, the snapshot being
        // committed is a temporary index that git names in GIT_INDEX_FILE.
        const indexFile = opts.staged && process.env.GIT_INDEX_FILE ? resolve(process.cwd(), process.env.GIT_INDEX_FILE) : undefined;
        const answer = await client.call<CheckAnswer>('POST', '/v1/check', { staged: Boolean(opts.staged), ...(indexFile ? { indexFile } : {}) });
        output(globals(cmd), { violations: answer.violations, warnings: answer.warnings }, () => {
          if (answer.violations.length === 0 && answer.warnings.length === 0) {
            return color.green(`no rule violations${answer.staged ? ' in the staged snapshot' : ' in the work tree changes'}`);
          }
          return formatViolations(answer);
        });
        if (answer.violations.length > 0) failWith(1);
      }),
    );
}
