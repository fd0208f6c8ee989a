/**
 * `remember`: one sentence → its owner, the reason for each of the four answers, and (for a
 * durable owner) a pending proposal. The model, or the rule-based classifier, decides what
 * the sentence is; deterministic checks decide what a classifier cannot: whether the
 * authority file or a memory store already says it, whether a store has room, whether it
 * passes the threat scan, and whether a rule can be enforced by `.hermes/config.yaml`.
 */
import { readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { HermesConfig } from '../config/schema.js';
import { loadAuthority, type Authority } from '../context/authority.js';
import { HermesError, UsageError } from '../errors/index.js';
import type { Memories } from '../memory/memories.js';
import { charCount, ENTRY_SEPARATOR } from '../memory/entries.js';
import { ruleIdsIn, withRule } from '../proposals/config-edit.js';
import { sha256 } from '../text/hash.js';
import { summaryOf, type Change, type ProposalDraft, type ProposalSummary } from '../proposals/schema.js';
import type { ProposalStore } from '../proposals/store.js';
import { redactSecrets } from '../security/redact.js';
import { scanText, type ThreatScope } from '../security/scan.js';
import type { SkillFileView, SkillStore } from '../skills/store.js';
import { checkSkillMd } from '../skills/validate.js';
import { unifiedDiff } from '../text/unified-diff.js';
import { repoConfigPath } from '../paths/index.js';
import { repoEntry, ruleLine, skillDraft, stripLead, userEntry } from './draft.js';
import { checked, enforceableRule, type EnforceableRule } from './enforce.js';
import type { StructuredModel } from '../model/structured.js';
import { classifyByModel, type ModelPlacement } from './classify-by-model.js';
import type { Classifier, Owner, Reasons } from '../protocol/owners.js';
import { classifyByRules } from './classify-by-rules.js';

/** Longest sentence `remember` takes: a sentence, not a document (a document belongs in a file of the repository). */
export const PLACEMENT_MAX_CHARS = 2_000;
/** Tokens the model may answer a classification with (four short reasons and an entry). */
export const PLACEMENT_MAX_OUTPUT_TOKENS = 600;
/** Word overlap above which a procedure is taken as a patch of an existing skill rather than a new one. */
const SKILL_MATCH_MIN = 0.5;
/** Word overlap above which a line of the authority file already says what the sentence says. */
const DUPLICATE_MIN = 0.8;

export type PlacementDeps = {
  /** The work tree (realpath). */
  root: string;
  /** Its project id (worktrees share it). */
  project: string;
  memories: Memories;
  skills: SkillStore;
  proposals: ProposalStore;
  /** The configuration in force (its rules: is an enforceable rule already there?). */
  config: HermesConfig;
  /** The model, when one is configured and `placement.classifier` allows it. */
  model?: StructuredModel;
  /** Why there is no model (said in the answer when the rules decide). */
  noModel?: string;
};

export type PlaceOptions = {
  source: 'remember' | 'review';
  sessionId?: string;
  /** false: decide and check, but record no proposal (a dry run). */
  propose?: boolean;
  timeoutMs?: number;
  signal?: AbortSignal;
  /** The classification to use instead of asking (the review hands over what its own model call decided). */
  decided?: Decided;
};

export type ProposalView = ProposalSummary & { created: boolean; change: Change };

export type PlacementAnswer = {
  sentence: string;
  owner: Owner;
  reasons: Reasons;
  classifier: Classifier;
  proposal?: ProposalView;
  /** What the deterministic checks found, and why there is no proposal when there is none. */
  notes: string[];
};

export type Decided = {
  owner: Owner;
  reasons: Reasons;
  classifier: Classifier;
  entry?: string;
  rule?: EnforceableRule;
  skill?: { name: string; description: string; steps: string[] };
};

const words = (text: string) =>
  new Set(
    text
      .toLowerCase()
      .match(/[a-z0-9][a-z0-9_.-]*/g)
      ?.filter((w) => w.length > 2) ?? [],
  );

/** Shared words over the smaller set's (`contained`) or the larger set's (`same`): the first finds a related skill, the second a repeat. */
function overlap(a: string, b: string, of: 'contained' | 'same' = 'contained'): number {
  const x = words(a);
  const y = words(b);
  if (x.size === 0 || y.size === 0) return 0;
  let both = 0;
  for (const w of x) if (y.has(w)) both++;
  return both / (of === 'same' ? Math.max(x.size, y.size) : Math.min(x.size, y.size));
}

const norm = (t: string) =>
  t
    .toLowerCase()
    .replace(/[`*_]/g, '')
    .replace(/\s+/g, ' ')
    .replace(/[.!;:,\s]+$/, '')
    .trim();

/** Whether `text` already says `sentence`: its words in one line, or the sentence verbatim. */
function alreadySays(text: string, sentence: string): string | undefined {
  const s = norm(stripLead(sentence));
  if (!s) return undefined;
  if (norm(text).includes(s)) return s;
  for (const line of text.split('\n')) {
    const l = line.replace(/^\s*([-*+]|\d+[.)])\s+/, '').trim();
    if (l.length > 8 && overlap(l, s, 'same') >= DUPLICATE_MIN) return l;
  }
  return undefined;
}

/** The threat scan and the secret check every text gets before it may enter a prompt. */
function scanRefusal(text: string, scope: ThreatScope): string | undefined {
  const secrets = redactSecrets(text).redactions;
  if (secrets.length > 0)
    return `it holds a secret-shaped value (${[...new Set(secrets.map((r) => r.kind))].join(', ')}), which never goes into a file the prompt carries`;
  const hits = scanText(text, scope);
  return hits.length ? `it matches the threat scan (${[...new Set(hits.map((h) => h.id))].join(', ')})` : undefined;
}

function fromModel(m: ModelPlacement): Decided {
  const rule = m.rule
    ? checked({
        id: 'rule',
        message: m.entry ?? '',
        ...(m.rule.protect?.length ? { protect: m.rule.protect } : {}),
        ...(m.rule.forbid ? { forbid: m.rule.forbid } : {}),
      })
    : undefined;
  return { owner: m.owner, reasons: m.reasons, classifier: 'model', entry: m.entry ?? undefined, rule, skill: m.skill ?? undefined };
}

async function classify(deps: PlacementDeps, sentence: string, authority: Authority, opts: PlaceOptions, notes: string[]): Promise<Decided> {
  if (opts.decided) return opts.decided;
  if (deps.model) {
    const signal = AbortSignal.any([AbortSignal.timeout(opts.timeoutMs ?? 30_000), ...(opts.signal ? [opts.signal] : [])]);
    try {
      const { placement, structured } = await classifyByModel(deps.model, sentence, {
        authorityFile: authority.files[0]?.label,
        maxTokens: PLACEMENT_MAX_OUTPUT_TOKENS,
        signal,
      });
      if (!structured) notes.push('The model endpoint does not take a JSON schema (response_format json_schema); its JSON answer was parsed strictly instead.');
      return fromModel(placement);
    } catch (err) {
      notes.push(`The model could not classify it (${(err as Error).message}); the rule-based classifier answered instead.`);
    }
  } else if (deps.noModel) notes.push(deps.noModel);
  const r = classifyByRules(sentence);
  return { owner: r.owner, reasons: r.reasons, classifier: 'rules' };
}

type Outcome = { owner: Owner; reasons?: Partial<Reasons>; draft?: Omit<ProposalDraft, 'reasons' | 'classifier' | 'sentence' | 'sessionId' | 'source'> };

/** Decides who owns `sentence` and records the change it calls for as a pending proposal. */
export async function placeSentence(deps: PlacementDeps, raw: string, opts: PlaceOptions): Promise<PlacementAnswer> {
  const sentence = (raw ?? '').trim();
  if (!sentence) throw new UsageError('Give the sentence to remember, e.g. hermesd remember "Do not edit generated files directly".');
  if (charCount(sentence) > PLACEMENT_MAX_CHARS) {
    throw new UsageError(
      `The sentence is ${charCount(sentence)} characters; remember takes one statement of at most ${PLACEMENT_MAX_CHARS}. A longer text belongs in a file of the repository.`,
    );
  }
  const notes: string[] = [];
  const authority = await loadAuthority({ cwd: deps.root, root: deps.root, maxFileChars: deps.config.context.maxFileChars });
  const decided = await classify(deps, sentence, authority, opts, notes);
  const outcome = await decide(deps, sentence, decided, authority, notes);
  const reasons = { ...decided.reasons, ...outcome.reasons };
  const answer: PlacementAnswer = { sentence, owner: outcome.owner, reasons, classifier: decided.classifier, notes };
  if (!outcome.draft) return answer;
  if (opts.propose === false) {
    notes.push('Dry run: no proposal was recorded.');
    return answer;
  }
  const made = deps.proposals.create({
    ...outcome.draft,
    source: opts.source,
    sentence,
    reasons,
    classifier: decided.classifier,
    ...(opts.sessionId ? { sessionId: opts.sessionId } : {}),
  });
  if ('rejected' in made) {
    notes.push(`You rejected the same change before (${made.rejected.id}, ${made.rejected.rejectedAt.slice(0, 10)}); it is not offered again.`);
    return answer;
  }
  if (!made.created) notes.push(`The same change is already pending as ${made.proposal.id}.`);
  return { ...answer, proposal: { ...summaryOf(made.proposal), created: made.created, change: made.proposal.change } };
}

/** The deterministic half: duplicates, enforceability, budgets, the scan; the change a durable owner gets. */
async function decide(deps: PlacementDeps, sentence: string, d: Decided, authority: Authority, notes: string[]): Promise<Outcome> {
  const repo = { repo: deps.root, project: deps.project };
  switch (d.owner) {
    case 'none':
      notes.push('Nothing durable is written: the transcript keeps the words, and session_search finds them later.');
      return { owner: 'none' };
    case 'authority':
    case 'config-rule': {
      const rule = enforceableRule(stripLead(sentence)) ?? (d.owner === 'config-rule' ? d.rule : undefined);
      if (rule) return configRule(deps, sentence, rule, notes, repo);
      return authorityLine(deps, d.entry ?? sentence, authority, notes, repo);
    }
    case 'user':
    case 'repo-memory':
      return memoryEntry(deps, d, sentence, authority, notes, repo);
    case 'skill':
      return skillChange(deps, sentence, d, notes);
  }
}

function authorityLine(deps: PlacementDeps, text: string, authority: Authority, notes: string[], repo: { repo: string; project: string }): Outcome {
  const file = authority.files[0];
  const rel = file ? relative(deps.root, file.path).split(sep).join('/') : 'AGENTS.md';
  const before = file ? readFileSync(file.path, 'utf8') : undefined;
  const same = before !== undefined ? alreadySays(before, text) : undefined;
  if (same) {
    notes.push(`${rel} already says it ("${same.slice(0, 120)}"); nothing to add.`);
    return { owner: 'authority' };
  }
  const line = ruleLine(text);
  const refused = scanRefusal(line, 'context');
  if (refused) {
    notes.push(`Not proposed: ${refused}; an authority file holding it would be blocked from every prompt.`);
    return { owner: 'authority' };
  }
  const base = before ?? '';
  // A list gets one more item; other text gets the line after a blank line.
  const last = base.trimEnd().split('\n').pop() ?? '';
  const blank = base.trim() && !/^\s*([-*+]|\d+[.)])\s/.test(last) ? '\n' : '';
  // Only appended: the file's own bytes stay as they are (a final newline is added where it lacked one).
  let after = base && !base.endsWith('\n') ? `${base}\n` : base;
  if (blank && !after.endsWith('\n\n')) after += '\n';
  after += `${line}\n`;
  if (!file) notes.push('No authority file is in force here; the proposal creates AGENTS.md.');
  return {
    owner: 'authority',
    draft: {
      owner: 'authority',
      summary: `Add to ${rel}: ${line.slice(2)}`,
      ...repo,
      change: { kind: 'authority', file: rel, line, patch: unifiedDiff(rel, before, after) },
    },
  };
}

/** An enforced rule reappears differently from a rule the model reads: at every write and commit that breaks it. */
const ENFORCED: Partial<Reasons> = {
  readTiming: 'whenever a tool write or a commit would break it: the daemon refuses and quotes the rule (not as prompt text)',
};

function configRule(deps: PlacementDeps, sentence: string, rule: EnforceableRule, notes: string[], repo: { repo: string; project: string }): Outcome {
  const existing = deps.config.rules.find(
    (r) => (rule.protect && r.protect && rule.protect.every((g) => r.protect!.includes(g))) || (rule.forbid !== undefined && r.forbid === rule.forbid),
  );
  if (existing) {
    notes.push(`Rule ${existing.id} of the configuration already enforces it; nothing to add.`);
    return { owner: 'config-rule', reasons: ENFORCED };
  }
  const path = repoConfigPath(deps.root);
  let before: string | undefined;
  try {
    before = readFileSync(path, 'utf8');
  } catch {
    before = undefined;
  }
  const ids = ruleIdsIn(before);
  let id = rule.id;
  for (let n = 2; ids.includes(id); n++) id = `${rule.id}-${n}`;
  const message = stripLead(sentence).replace(/\s+/g, ' ');
  const full = { id, message, ...(rule.protect ? { protect: rule.protect } : {}), ...(rule.forbid !== undefined ? { forbid: rule.forbid } : {}) };
  let after: string;
  try {
    after = withRule(before, full);
  } catch (err) {
    notes.push(`Not proposed: ${(err as Error).message}`);
    return { owner: 'config-rule', reasons: ENFORCED };
  }
  const rel = relative(deps.root, path).split(sep).join('/');
  const what = rule.protect ? `protect: ${rule.protect.join(', ')}` : `forbid: ${rule.forbid}`;
  notes.push(`Enforceable: the daemon can hold every tool and commit to it (${what}), so it goes to ${rel} rather than only to the authority file.`);
  return {
    owner: 'config-rule',
    reasons: ENFORCED,
    draft: {
      owner: 'config-rule',
      summary: `Add rule ${id} to ${rel} (${what})`,
      ...repo,
      change: { kind: 'config-rule', file: rel, rule: full, patch: unifiedDiff(rel, before, after) },
    },
  };
}

function memoryEntry(
  deps: PlacementDeps,
  d: Decided,
  sentence: string,
  authority: Authority,
  notes: string[],
  repo: { repo: string; project: string },
): Outcome {
  const user = d.owner === 'user';
  const entry = (d.entry?.trim() || (user ? userEntry(sentence) : repoEntry(sentence))).replace(/\s+/g, ' ');
  const target = user ? 'user' : 'memory';
  const scope = user ? 'global' : 'repo';
  const name = user ? 'USER.md' : "this repository's MEMORY.md";
  if (!user && !deps.memories.repo) {
    notes.push('There is no repository here, so there is no repository memory to propose for.');
    return { owner: d.owner };
  }
  const all = deps.memories.allEntries();
  const pool = [...all.user, ...all.memory, ...all.repo];
  const dup = pool.find((e) => norm(e) === norm(entry) || overlap(e, entry, 'same') >= DUPLICATE_MIN);
  if (dup) {
    notes.push(`Memory already has it ("${dup.slice(0, 120)}"); nothing to add.`);
    return { owner: d.owner };
  }
  const inAuthority = authority.text ? alreadySays(authority.text, entry) : undefined;
  if (inAuthority) {
    notes.push(`The authority file already says it ("${inAuthority.slice(0, 120)}"); a memory entry would only repeat it.`);
    return { owner: d.owner };
  }
  const refused = scanRefusal(entry, 'memory');
  if (refused) {
    notes.push(`Not proposed: ${refused}.`);
    return { owner: d.owner };
  }
  const usage = deps.memories.usage(target, scope);
  if (usage) {
    const next = usage.chars + (usage.chars > 0 ? charCount(ENTRY_SEPARATOR) : 0) + charCount(entry);
    if (next > usage.limit) {
      notes.push(
        `Not proposed: ${name} is at ${usage.chars}/${usage.limit} chars and this entry (${charCount(entry)} chars) would not fit. ` +
          `Consolidate it first (hermesd memory list${user ? ' --target user' : ' --scope repo'}), then remember again.`,
      );
      return { owner: d.owner };
    }
  }
  return {
    owner: d.owner,
    draft: {
      owner: user ? 'user' : 'repo-memory',
      summary: `Add to ${name}: ${entry}`,
      ...(user ? { repo: null, project: null } : repo),
      change: { kind: 'memory', target, scope, content: entry },
    },
  };
}

async function skillChange(deps: PlacementDeps, sentence: string, d: Decided, notes: string[]): Promise<Outcome> {
  const drafted = d.skill ? skillDraft(`${d.skill.description}: ${d.skill.steps.join(', then ')}`, d.skill.name) : skillDraft(sentence);
  const content = d.skill
    ? `---\nname: ${drafted.name}\ndescription: ${drafted.description}\n---\n\n# ${drafted.name}\n\n${d.skill.steps.map((s, i) => `${i + 1}. ${s.trim()}`).join('\n')}\n`
    : drafted.content;
  const refused = scanRefusal(content, 'skill');
  if (refused) {
    notes.push(`Not proposed: ${refused}.`);
    return { owner: 'skill' };
  }
  const skills = deps.skills.list();
  const match = skills
    .map((s) => ({
      s,
      score: Math.max(
        overlap(`${s.name.replace(/-/g, ' ')} ${s.description}`, `${drafted.name.replace(/-/g, ' ')} ${drafted.description}`),
        s.name === drafted.name ? 1 : 0,
      ),
    }))
    .sort((a, b) => b.score - a.score)[0];
  if (match && match.score >= SKILL_MATCH_MIN) {
    const s = match.s;
    if (s.scope === 'project') {
      notes.push(`It matches the project skill ${s.name} (.hermes/skills, read-only to hermesd); change it through the repository instead.`);
      return { owner: 'skill' };
    }
    const current = readableSkill(deps.skills, s.name);
    if (current?.content !== undefined) {
      const old = current.content;
      if (alreadySays(old, sentence)) {
        notes.push(`Skill ${s.name} already covers it; nothing to add.`);
        return { owner: 'skill' };
      }
      const next = `${old}${old.endsWith('\n') ? '' : '\n'}\n## Also\n\n${stripLead(sentence)}\n`;
      notes.push(`It matches the existing skill ${s.name}, so the proposal patches it rather than adding a second skill.`);
      return {
        owner: 'skill',
        draft: {
          owner: 'skill',
          summary: `Patch skill ${s.name}: ${stripLead(sentence).slice(0, 100)}`,
          repo: null,
          project: null,
          change: { kind: 'skill-edit', name: s.name, baseSha256: sha256(old), content: next, patch: unifiedDiff(join(s.name, 'SKILL.md'), old, next) },
        },
      };
    }
  }
  let name = drafted.name;
  for (let n = 2; skills.some((s) => s.name === name); n++) name = `${drafted.name}-${n}`;
  const final = name === drafted.name ? content : content.replace(`name: ${drafted.name}\n`, `name: ${name}\n`);
  try {
    checkSkillMd(final, name);
  } catch (err) {
    notes.push(`Not proposed: the drafted SKILL.md is not valid (${(err as Error).message}).`);
    return { owner: 'skill' };
  }
  return {
    owner: 'skill',
    draft: {
      owner: 'skill',
      summary: `Create skill ${name}: ${drafted.description}`,
      repo: null,
      project: null,
      change: { kind: 'skill-create', name, content: final },
    },
  };
}

/** A skill's SKILL.md as it is, or undefined when the store will not serve it (gone, or scans dangerous). */
function readableSkill(skills: SkillStore, name: string): SkillFileView | undefined {
  try {
    return skills.readFile(name, 'SKILL.md');
  } catch (err) {
    if (err instanceof HermesError) return undefined;
    throw err;
  }
}
