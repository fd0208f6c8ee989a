import { rememberToolArgs } from '../../protocol/owners.js';
import { defineTool, ToolError } from './types.js';

export const remember = defineTool({
  name: 'remember',
  description:
    "Decide who owns a piece of information the user wants kept, before writing it anywhere: the repository's authority " +
    'file (a rule for every contributor; a .hermes/config.yaml rule when the daemon can enforce it), USER.md (a preference ' +
    "that holds in every project), this repository's memory (a fact about its environment), a skill (a procedure), or " +
    'nothing (state of the current task). Answers {owner, reasons: {scope, lifetime, type, readTiming}, classifier, proposal?, ' +
    'notes}. A durable owner gets a PENDING proposal that changes nothing until the user accepts it (hermesd proposals ' +
    'accept <id>); tell the user its id. Use it when the user says "remember …", "from now on …" or states a rule or ' +
    'preference; do not write such rules into files or memory yourself.',
  parameters: rememberToolArgs,
  summarize: (r) => {
    const a = r as { owner?: string; proposal?: { id: string } };
    return `${a.owner ?? '?'}${a.proposal ? ` (proposal ${a.proposal.id})` : ''}`;
  },
  async execute(args, ctx) {
    const place = ctx.services.placement;
    if (!place) throw new ToolError('remember needs the hermesd daemon (its proposals live in $HERMES_HOME/proposals); run the task through hermesd.');
    const a = await place(args.sentence, { sessionId: ctx.sessionId, signal: ctx.signal });
    // The model needs the decision and the id, not the patch text.
    return {
      owner: a.owner,
      reasons: a.reasons,
      classifier: a.classifier,
      ...(a.proposal
        ? { proposal: { id: a.proposal.id, summary: a.proposal.summary, created: a.proposal.created, accept: `hermesd proposals accept ${a.proposal.id}` } }
        : {}),
      notes: a.notes,
    };
  },
});
