/**
 * `hermesd config approve`: the user's confirmation of a guard configuration change that
 * loosens it (a rule removed, a policy set to allow, the sandbox opened). Until then the
 * approved values stay in force (docs/guardrails.md). Also contributes the sandbox check
 * to `hermesd doctor`.
 */
import type { Command } from 'commander';
import type { Loosening } from '../../guard/approval.js';
import { action, color, daemon, globals, output } from '../runtime.js';
import { doctorChecks } from './doctor.js';

doctorChecks.push(async () => {
  const { sandboxAvailability } = await import('../../guard/sandbox.js');
  const a = sandboxAvailability();
  if (a.kind === 'bwrap') return { name: 'sandbox', status: 'ok' as const, detail: `bubblewrap ${a.path}: terminal commands run sandboxed` };
  if (a.kind === 'sandbox-exec') return { name: 'sandbox', status: 'ok' as const, detail: `sandbox-exec ${a.path}: terminal commands run sandboxed (macOS Seatbelt profile)` };
  return {
    name: 'sandbox',
    status: 'warn' as const,
    detail: `${a.reason}: the agent's terminal refuses to run (guard.sandbox.ifUnavailable: refuse) or runs unsandboxed with a warning (unsandboxed)`,
    fix: a.install,
  };
});

const describe = (ls: Loosening[]) => ls.map((l) => `  ${l.key}: ${l.approved} → ${l.requested}`).join('\n');

export function register(program: Command): void {
  const config = program.command('config').description('the guard configuration: config approve applies a change that loosens the guard');
  config
    .command('approve')
    .description('apply the loosening changes of .hermes/config.yaml and $HERMES_HOME/config.yaml that wait for your confirmation (see hermesd status)')
    .action(
      action(async (_opts: unknown, cmd: Command) => {
        const client = await daemon();
        const r = await client.call<{ approved: Loosening[] }>('POST', '/v1/config/approve', {});
        output(globals(cmd), r, () =>
          r.approved.length === 0
            ? color.green('nothing to approve: the guard configuration in force is the one in the files')
            : `approved ${r.approved.length} change(s) that loosen the guard; in force from now on:\n${describe(r.approved)}`,
        );
      }),
    );
}
