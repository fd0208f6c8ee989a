/**
 * Accepting a proposal: the change goes through the normal write path of its owner, never a
 * side door — a memory entry through the store (threat scan, budget, lock, atomic write), a
 * skill through skill_manage (scan, rollback, one commit), an archive through the skill
 * store's archive (one commit `skills revert` undoes). A change to the repository (its
 * authority file, `.hermes/config.yaml`) is applied to the work tree and left for the user
 * to review and commit: hermesd never commits to the user's repository. A config change that
 * loosens the guard still waits for `hermesd config approve` (the config service holds it).
 */
import { readTextIfAny } from '../storage/read.js';
import { sha256 } from '../text/hash.js';
import { shWord } from '../text/sh-quote.js';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { Conflict, NotFound, Refused } from '../errors/index.js';
import { gitTry } from '../git/run.js';
import type { Memories } from '../memory/memories.js';
import type { SkillFileView, SkillStore } from '../skills/store.js';
import { writeFileAtomicSync } from '../storage/atomic.js';
import { ruleIdsIn, withRule } from './config-edit.js';
import type { Proposal } from './schema.js';

export type ApplyDeps = { root: string; memories: Memories; skills: SkillStore };

/** A proposal for another repository is accepted there (its work tree is the one to change). */
export function refuseIfElsewhere(p: Proposal, project: string): void {
  if (p.project !== null && p.project !== project) {
    throw new Conflict(`Proposal ${p.id} belongs to the repository at ${p.repo}; accept it there (cd ${p.repo} && hermesd proposals accept ${p.id}).`);
  }
}

/** The file a repository change names, inside the work tree (a proposal file edited to point elsewhere is refused). */
function inTree(root: string, file: string): string {
  const abs = join(root, file);
  const rel = relative(root, abs);
  if (rel.startsWith('..') || rel.split(sep).includes('.git'))
    throw new Refused(`The proposal names ${file}, which is outside the work tree; it was not applied.`);
  return abs;
}

/** How to review what was written: `git diff` shows nothing for a file git does not track yet. */
function leftToCommit(root: string, file: string): string {
  const tracked = gitTry(['ls-files', '--', file], { cwd: root }).stdout.trim() !== '';
  const review = tracked
    ? `review it with \`git diff -- ${shWord(file)}\``
    : `${file} is new (git does not track it yet): review it with \`cat ${shWord(file)}\``;
  return `${review} and commit it yourself (hermesd does not commit to your repository).`;
}

/** Applies an accepted proposal; throws a named error (and changes nothing) when its owner refuses. Returns what was done. */
export async function applyProposal(p: Proposal, deps: ApplyDeps): Promise<string> {
  const c = p.change;
  switch (c.kind) {
    case 'memory': {
      const r = deps.memories.on(c.target, c.scope, (store) => store.add(c.target, c.content));
      const where = c.target === 'user' ? 'USER.md' : c.scope === 'repo' ? "this repository's MEMORY.md" : 'MEMORY.md';
      return `${r.message ?? 'Entry added.'} (${where}, ${r.usage.chars}/${r.usage.limit} chars; in the prompt from the next session)`;
    }
    case 'authority': {
      const abs = inTree(deps.root, c.file);
      const before = readTextIfAny(abs);
      if (before !== undefined && before.includes(c.line)) return `${c.file} already has this line; nothing changed.`;
      // The patch may touch only the file the proposal names (a hand-edited proposal file could say more).
      const touched = [...c.patch.matchAll(/^(?:\+\+\+|---) (?:[ab]\/)?(.+)$/gm)].map((m) => m[1]!).filter((f) => f !== '/dev/null');
      if (touched.some((f) => f !== c.file)) throw new Refused(`The proposal's patch touches ${touched.join(', ')}, not only ${c.file}; it was not applied.`);
      // git checks the patch's context against the file: what the user reviewed is what lands.
      const applied = gitTry(['apply', '--whitespace=nowarn', '-'], { cwd: deps.root, input: c.patch });
      if (applied.status === 0) return `Applied to ${c.file} in the work tree (not committed): ${leftToCommit(deps.root, c.file)}`;
      // The file changed since the proposal: the line still goes at its end, and the answer says so.
      if (before === undefined && existsSync(abs)) throw new Conflict(`${c.file} cannot be read; the rule was not added.`);
      mkdirSync(dirname(abs), { recursive: true });
      const text = before ?? '';
      writeFileAtomicSync(abs, `${text}${text && !text.endsWith('\n') ? '\n' : ''}${c.line}\n`, 0o644);
      return `${c.file} changed since the proposal, so the reviewed patch did not apply; the line was added at its end instead (not committed): ${leftToCommit(deps.root, c.file)}`;
    }
    case 'config-rule': {
      const abs = inTree(deps.root, c.file);
      const before = readTextIfAny(abs);
      const ids = ruleIdsIn(before);
      let id = c.rule.id;
      for (let n = 2; ids.includes(id); n++) id = `${c.rule.id}-${n}`;
      const after = withRule(before, { ...c.rule, id });
      mkdirSync(dirname(abs), { recursive: true });
      writeFileAtomicSync(abs, after, 0o644);
      return `Added rule ${id} to ${c.file} in the work tree (not committed); the daemon enforces it now: ${leftToCommit(deps.root, c.file)}`;
    }
    case 'skill-create': {
      const r = await deps.skills.manage(
        { action: 'create', name: c.name, content: c.content, ...(c.category ? { category: c.category } : {}) },
        { sessionId: `proposal ${p.id}` },
      );
      return r.message;
    }
    case 'skill-edit': {
      let view: SkillFileView;
      try {
        view = deps.skills.readFile(c.name, 'SKILL.md');
      } catch (err) {
        if (err instanceof NotFound || err instanceof Refused)
          throw new NotFound(`Skill "${c.name}" cannot be read (${err.message}); the patch was not applied.`);
        throw err;
      }
      if (sha256(view.content ?? '') !== c.baseSha256) {
        throw new Conflict(
          `Skill "${c.name}" changed since this proposal was made; the patch was not applied. Reject it and run the review again, or edit the skill yourself.`,
        );
      }
      const r = await deps.skills.manage({ action: 'edit', name: c.name, content: c.content }, { sessionId: `proposal ${p.id}` });
      return r.message;
    }
    case 'skill-archive': {
      const r = await deps.skills.archive(c.name, { sessionId: `proposal ${p.id}`, reason: `unused for ${Math.round(c.unusedDays)} days` });
      return r.message;
    }
  }
}
