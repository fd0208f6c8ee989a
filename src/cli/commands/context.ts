import type { Command } from 'commander';
import type { ContextReport } from '../../protocol/context-report.js';
import type { AgentsReport } from '../../other-agents/agent-drift.js';
import { action, color, daemon, globals, output } from '../runtime.js';

function human(r: ContextReport): string {
  const lines = ['authority'];
  if (r.authority.length === 0) lines.push(color.dim('  (none: no .hermes.md, HERMES.md, AGENTS.md, CLAUDE.md or Cursor rules here)'));
  for (const a of r.authority) lines.push(`  ${a}`);
  lines.push('', 'tiers');
  for (const name of ['stable', 'context', 'volatile'] as const) {
    const t = r.tiers[name];
    lines.push(`  ${name.padEnd(9)} ${String(t.bytes).padStart(7)} bytes  sha256 ${t.sha256.slice(0, 12)}`);
  }
  if (r.warnings.length > 0) {
    lines.push('', 'warnings');
    for (const w of r.warnings) lines.push(color.yellow(`  ${w}`));
  }
  return lines.join('\n');
}

export function register(program: Command): void {
  program
    .command('context')
    .description(
      'show the authority files in force, the three prompt tiers (bytes, sha256) and warnings; --agents: per agent, what it reads, how it gets the authority, and where a file it reads disagrees with it',
    )
    .option('--agents', 'per agent: the files it reads on its own, the authority hermesd gives it, what is shadowed and where a shadowed file disagrees')
    .action(
      action(async (opts: { agents?: boolean }, cmd: Command) => {
        const client = await daemon();
        if (opts.agents) {
          const [report, { formatAgentsReport }] = await Promise.all([
            client.call<AgentsReport>('GET', `/v1/context/agents?cwd=${encodeURIComponent(process.cwd())}`),
            import('../../other-agents/agent-drift.js'),
          ]);
          output(globals(cmd), report, () => formatAgentsReport(report));
          return;
        }
        const report = await client.call<ContextReport>('GET', `/v1/context?cwd=${encodeURIComponent(process.cwd())}`);
        output(globals(cmd), report, () => human(report));
      }),
    );
}
