/**
 * The skill curator: a user skill nobody viewed or changed for `skills.archiveAfterDays` is
 * proposed for archiving — a move into the skills repository's `.archive/`, one commit that
 * `hermesd skills revert` undoes. Never a deletion (the reference's curator hard-deletes, and
 * its users report that as lost work), and never without the user's accept.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ProposalStore } from '../proposals/store.js';
import type { SkillStore } from '../skills/store.js';
import { writeFileAtomicSync } from '../storage/atomic.js';

/** The curator looks at most once a day: skills age in days, and each look reads every skill's history. */
export const CURATOR_INTERVAL_MS = 24 * 60 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;
const STAMP = '.curator-last-run';

export type Unused = { name: string; lastUsed: string | null; unusedDays: number };

/** User skills whose last view or change is older than `afterDays` (0: none, the curator is off). */
export async function unusedSkills(skills: SkillStore, afterDays: number, now = Date.now()): Promise<Unused[]> {
  if (afterDays <= 0) return [];
  const views = skills.lastViews();
  const out: Unused[] = [];
  for (const s of skills.list()) {
    if (s.scope !== 'user') continue;
    const changed = await skills.lastChanged(s.name);
    const times = [views[s.name], changed].map((t) => Date.parse(t ?? '')).filter(Number.isFinite);
    const last = times.length ? Math.max(...times) : undefined;
    const idle = last === undefined ? Infinity : now - last;
    if (idle >= afterDays * DAY_MS)
      out.push({
        name: s.name,
        lastUsed: last === undefined ? null : new Date(last).toISOString(),
        unusedDays: last === undefined ? afterDays : idle / DAY_MS,
      });
  }
  return out;
}

/** Proposes archiving each unused skill, at most once per CURATOR_INTERVAL_MS; returns the new proposals' ids. */
export async function curate(skills: SkillStore, proposals: ProposalStore, afterDays: number, now = Date.now()): Promise<string[]> {
  const stamp = join(proposals.dir, STAMP);
  let last = NaN;
  try {
    last = Date.parse(readFileSync(stamp, 'utf8').trim());
  } catch {
    // never ran
  }
  if (Number.isFinite(last) && now - last < CURATOR_INTERVAL_MS) return [];
  const ids: string[] = [];
  for (const u of await unusedSkills(skills, afterDays, now)) {
    const made = proposals.create({
      owner: 'skill',
      summary: `Archive skill ${u.name} (${u.lastUsed ? `not viewed or changed for ${Math.floor(u.unusedDays)} day(s)` : 'never used'}); skills revert brings it back`,
      source: 'curator',
      repo: null,
      project: null,
      change: { kind: 'skill-archive', name: u.name, lastUsed: u.lastUsed, unusedDays: u.unusedDays },
    });
    if ('proposal' in made && made.created) ids.push(made.proposal.id);
  }
  mkdirSync(proposals.dir, { recursive: true, mode: 0o700 });
  writeFileAtomicSync(stamp, new Date(now).toISOString(), 0o600);
  return ids;
}
