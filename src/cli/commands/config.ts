/**
 * `hermesd config approve`: the user's confirmation of a guard configuration change that
 * loosens it (a rule removed, a policy set to allow, the sandbox opened). Until then the
 * approved values stay in force (docs/guardrails.md). Also the sandbox line of `hermesd doctor`.
 */
import type { Command } from 'commander';
import { createInterface } from 'node:readline';
import { UsageError } from '../../errors/index.js';
import type { Loosening } from '../../guard/approval.js';
import { action, color, daemon, failWith, globals, output, repo } from '../runtime.js';
import type { DoctorCheck as Check } from '../runtime.js';

/** doctor's sandbox line: what confines the agent's terminal and other agents' shell calls here. */
export async function sandboxCheck(): Promise<Check> {
  const { sandboxAvailability, sandboxFor } = await import('../../guard/sandbox.js');
  // The bubblewrap the config in force names (HERMESD_BWRAP is a loosening until approved).
  const config = await (async () => {
    try {
      const [{ configInForce }, { findRepo, hermesHome }] = await Promise.all([import('../../guard/approval.js'), import('../../paths/index.js')]);
      return configInForce(hermesHome(), findRepo(process.cwd()).root);
    } catch {
      return undefined;
    }
  })();
  const a = config ? sandboxFor(config) : sandboxAvailability();
  const asked = process.env.HERMESD_BWRAP;
  const held = config && asked && config.guard.sandbox.bwrap !== asked ? ` (HERMESD_BWRAP=${asked} waits for approval: hermesd config approve)` : '';
  if (a.kind === 'bwrap')
    return { name: 'sandbox', status: 'ok' as const, detail: `bubblewrap ${a.path}: terminal commands and other agents' shell calls run sandboxed${held}` };
  if (a.kind === 'sandbox-exec')
    return { name: 'sandbox', status: 'ok' as const, detail: `sandbox-exec ${a.path}: terminal commands run sandboxed (macOS Seatbelt profile)${held}` };
  return {
    name: 'sandbox',
    status: 'warn' as const,
    detail: `${a.reason}: the agent's terminal refuses to run (guard.sandbox.ifUnavailable: refuse) or runs unsandboxed with a warning (unsandboxed), and other agents' shell calls are checked only after they ran`,
    fix: a.install,
  };
}

const describe = (ls: Loosening[]) => ls.map((l) => `  ${l.key}: ${l.approved} → ${l.requested}`).join('\n');

export function register(program: Command): void {
  const config = program.command('config').description('the guard configuration: config approve applies a change that loosens the guard');
  config
    .command('approve')
    .description('apply the loosening changes of .hermes/config.yaml and $HERMES_HOME/config.yaml that wait for your confirmation (see hermesd status)')
    .action(
      action(async (_opts: unknown, cmd: Command) => {
        const client = await daemon();
        const { pending } = await client.call<{ pending: Loosening[] }>('GET', '/v1/config/approval');
        if (pending.length > 0) {
          // A person at a terminal approves a loosening: never a script, and never an agent (whose shell has no terminal).
          if (!process.stdin.isTTY) {
            throw new UsageError(
              `${pending.length} change(s) loosen the guard and wait for approval:\n${describe(pending)}\n` +
                '`hermesd config approve` asks you at a terminal, and this one has none: a loosening is approved by a person, not by a script or an agent. Run it yourself in a terminal.',
            );
          }
          process.stderr.write(`${pending.length} change(s) loosen the guard of ${repo().root}:\n${describe(pending)}\nApprove them? Type "yes" to approve: `);
          const answer = await new Promise<string>((resolve) => {
            const rl = createInterface({ input: process.stdin });
            rl.once('line', (line) => {
              resolve(line.trim());
              rl.close();
            });
            rl.once('close', () => resolve(''));
          });
          if (answer !== 'yes') {
            process.stderr.write('not approved: nothing changed.\n');
            failWith(1);
            return;
          }
        }
        const { writeApprovalRequest } = await import('../../guard/approval.js');
        // The request goes where the daemon looks: its $HERMES_HOME (a daemon a hook started may have another than this shell).
        const { home } = await client.call<{ home: string }>('GET', '/v1/status');
        const proof = writeApprovalRequest(home, repo().root);
        const r = await client.call<{ approved: Loosening[] }>('POST', '/v1/config/approve', { proof });
        output(globals(cmd), r, () =>
          r.approved.length === 0
            ? color.green('nothing to approve: the guard configuration in force is the one in the files')
            : `approved ${r.approved.length} change(s) that loosen the guard; in force from now on:\n${describe(r.approved)}`,
        );
      }),
    );
}
