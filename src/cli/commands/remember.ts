/**
 * `hermesd remember "<sentence>"` and `hermesd proposals list|show|accept|reject <id>`: clients
 * of /v1/placement and /v1/proposals (docs/placement.md).
 */
import type { Command } from 'commander';
import type { PlacementAnswer } from '../../placement/place.js';
import type { Change, Proposal, ProposalSummary } from '../../proposals/schema.js';
import { action, color, daemon, globals, output } from '../runtime.js';

/** How a change reads for review: the patch, the entry, the SKILL.md, the archive move. */
export function renderChange(c: Change): string {
  switch (c.kind) {
    case 'authority':
    case 'config-rule':
    case 'skill-edit':
      return c.patch.trimEnd();
    case 'memory':
      return `${c.target === 'user' ? 'USER.md' : c.scope === 'repo' ? "this repository's MEMORY.md" : 'MEMORY.md'} gets the entry:\n  ${c.content}`;
    case 'skill-create':
      return `new skill ${c.name} (SKILL.md):\n${c.content.trimEnd()}`;
    case 'skill-archive':
      return `move skill ${c.name} to $HERMES_HOME/skills/.archive/ (one commit; hermesd skills revert ${c.name} <the commit before> brings it back)`;
  }
}

function humanAnswer(a: PlacementAnswer): string {
  const lines = [`${color.bold(`owner: ${a.owner}`)}  ${color.dim(`(classifier: ${a.classifier})`)}`];
  lines.push(
    `  scope:       ${a.reasons.scope}`,
    `  lifetime:    ${a.reasons.lifetime}`,
    `  type:        ${a.reasons.type}`,
    `  read timing: ${a.reasons.readTiming}`,
  );
  if (a.proposal) {
    const p = a.proposal;
    lines.push(
      '',
      `${color.bold(`proposal ${p.id}`)} ${p.created ? '(pending: nothing changes until you accept it)' : '(already pending)'}: ${p.summary}`,
      '',
      renderChange(p.change),
      '',
    );
    lines.push(`accept: hermesd proposals accept ${p.id}    reject: hermesd proposals reject ${p.id}`);
  }
  if (a.notes.length) lines.push('', ...a.notes.map((n) => color.yellow(`note: ${n}`)));
  return lines.join('\n');
}

function humanList(list: ProposalSummary[], all: boolean): string {
  if (list.length === 0) return all ? 'no proposals' : 'no pending proposals (hermesd remember "<sentence>" makes one; so does the review after a task)';
  return list
    .map(
      (p) =>
        `${p.id}  ${all ? `${p.status.padEnd(9)} ` : ''}${p.owner.padEnd(11)} ${p.source.padEnd(8)} ${p.createdAt.slice(0, 16).replace('T', ' ')}  ${p.summary}`,
    )
    .join('\n');
}

function humanProposal(p: Proposal): string {
  const head = [
    `${color.bold(p.id)}  ${p.status}  ${p.owner} (${p.change.kind}) from ${p.source}${p.sessionId ? ` (session ${p.sessionId})` : ''}, ${p.createdAt}`,
    p.summary,
  ];
  if (p.sentence) head.push(`sentence: ${p.sentence}`);
  if (p.reasons)
    head.push(`  scope: ${p.reasons.scope}`, `  lifetime: ${p.reasons.lifetime}`, `  type: ${p.reasons.type}`, `  read timing: ${p.reasons.readTiming}`);
  if (p.outcome) head.push(`outcome: ${p.outcome}`);
  return [...head, '', renderChange(p.change)].join('\n');
}

export function register(program: Command): void {
  program
    .command('remember <sentence>')
    .description('decide who owns a piece of information (authority file or config rule, USER.md, repository memory, skill, nothing) and propose the change')
    .option('--dry-run', 'decide and check, but record no proposal')
    .action(
      action(async (sentence: string, opts: { dryRun?: boolean }, cmd: Command) => {
        const a = await (await daemon({ modelWarnings: true })).call<PlacementAnswer>('POST', '/v1/placement', { sentence, dry_run: Boolean(opts.dryRun) });
        output(globals(cmd), a, () => humanAnswer(a));
      }),
    );

  const proposals = program.command('proposals').description('pending proposals from remember and the post-task review: list, show, accept, reject');
  proposals
    .command('list')
    .description('pending proposals of this repository and of none (USER.md, skills)')
    .option('--all', 'accepted and rejected ones too')
    .action(
      action(async (opts: { all?: boolean }, cmd: Command) => {
        const r = await (await daemon()).call<{ proposals: ProposalSummary[] }>('GET', `/v1/proposals${opts.all ? '?all=1' : ''}`);
        output(globals(cmd), r, () => humanList(r.proposals, Boolean(opts.all)));
      }),
    );
  proposals
    .command('show <id>')
    .description('a proposal with its patch or content')
    .action(
      action(async (id: string, _opts: unknown, cmd: Command) => {
        const p = await (await daemon()).call<Proposal>('GET', `/v1/proposals/${encodeURIComponent(id)}`);
        output(globals(cmd), p, () => humanProposal(p));
      }),
    );
  proposals
    .command('accept <id>')
    .description("apply a proposal through its owner's write path (repository files are changed in the work tree and left for you to commit)")
    .action(
      action(async (id: string, _opts: unknown, cmd: Command) => {
        const r = await (await daemon()).call<{ proposal: Proposal }>('POST', `/v1/proposals/${encodeURIComponent(id)}/accept`, {});
        output(globals(cmd), r, () => `${color.green(`accepted ${r.proposal.id}`)}: ${r.proposal.outcome ?? r.proposal.summary}`);
      }),
    );
  proposals
    .command('reject <id>')
    .description('drop a proposal; the same change is not proposed again')
    .option('--reason <text>', 'why (kept with the proposal)')
    .action(
      action(async (id: string, opts: { reason?: string }, cmd: Command) => {
        const r = await (
          await daemon()
        ).call<{ proposal: Proposal }>('POST', `/v1/proposals/${encodeURIComponent(id)}/reject`, opts.reason ? { reason: opts.reason } : {});
        output(globals(cmd), r, () => `rejected ${r.proposal.id}: ${r.proposal.summary} (it will not be proposed again)`);
      }),
    );
}
