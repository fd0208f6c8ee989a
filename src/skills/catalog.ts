/**
 * The catalog: which skills exist, where, and whether they may be shown. Built by walking
 * the user and project skill folders, parsing each SKILL.md's front matter and scanning
 * every file; a skill that does not parse or scans dangerous is left out, with a warning.
 * The manifest (mtime and size of what the index depends on) lets a saved catalog be
 * checked against the disk with stat calls alone: every root and category folder (their
 * mtime changes when a skill or category comes or goes), every SKILL.md (an in-place edit
 * changes only the file), and — only for skills that have more than their SKILL.md — the
 * skill folder and each supporting folder and file (a hand edit there can make the skill
 * dangerous). A folder holding only SKILL.md is not stat'ed: that halves the warm start,
 * and the one change it misses (a file added by hand to such a folder while no daemon
 * watches) cannot change the index line; skill_view re-scans the folder before loading it.
 */
import { lstatSync, readdirSync, readFileSync, realpathSync, statSync, type Dirent } from 'node:fs';
import { join, sep } from 'node:path';
import { describeFindings, scanSkillFile, verdictOf, type Finding, type Verdict } from './skill-scan.js';
import { parseSkillMd, SKILL_NAME_PATTERN } from './validate.js';
import { byCodeUnit } from '../text/order.js';

export type SkillScope = 'user' | 'project';

export type SkillInfo = {
  name: string;
  /** One folder level above the skill, or null for a skill at the top. */
  category: string | null;
  description: string;
  scope: SkillScope;
  /** Absolute path of the skill folder. */
  dir: string;
  verdict: Verdict;
};

/** [path, mtimeMs, size]; size -1 for folders (their mtime changes when entries come and go). */
export type ManifestEntry = [string, number, number];

export type Catalog = { skills: SkillInfo[]; warnings: string[]; manifest: ManifestEntry[] };

export const SKILL_FILE = 'SKILL.md';

/**
 * Whether a caller's `file_path` names the skill's own SKILL.md: `SKILL.md`, or `<name>/SKILL.md`
 * as Hermes Agent's callers also write it (the skill's folder named in front). Empty means SKILL.md.
 */
export function isSkillFile(filePath: string | undefined, name: string): boolean {
  if (filePath === undefined || filePath === '') return true;
  const p = filePath.replace(/\\/g, '/').replace(/^(\.\/)+/, '');
  return p === SKILL_FILE || p === `${name}/${SKILL_FILE}`;
}

type Walk = { manifest: ManifestEntry[]; warnings: string[] };

function statEntry(path: string, isDir: boolean, w: Walk): boolean {
  try {
    const st = statSync(path);
    w.manifest.push([path, st.mtimeMs, isDir ? -1 : st.size]);
    return true;
  } catch {
    return false;
  }
}

function entriesOf(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  } catch {
    return [];
  }
}

/**
 * Scans all files of one skill folder (whose entries are already read) and records them in
 * the manifest. Returns the findings and SKILL.md's text, read once for both uses.
 */
function scanFolder(dir: string, top: Dirent[], w: Walk): { findings: Finding[]; skillMd?: string } {
  const findings: Finding[] = [];
  let skillMd: string | undefined;
  let realRoot: string | undefined;
  const rec = (rel: string, entries: Dirent[]) => {
    for (const e of entries) {
      const r = rel ? `${rel}/${e.name}` : e.name;
      const abs = join(dir, r);
      if (e.isSymbolicLink()) {
        let target = '';
        try {
          realRoot ??= realpathSync(dir);
          target = realpathSync(abs);
        } catch {
          // dangling
        }
        if (!target || !realRoot || (target !== realRoot && !target.startsWith(realRoot + sep))) {
          findings.push({
            file: r,
            id: 'symlink-escape',
            category: 'symlink',
            severity: 'dangerous',
            description: 'is a symlink that points outside the skill folder',
          });
          try {
            const st = lstatSync(abs);
            w.manifest.push([abs, st.mtimeMs, st.size]);
          } catch {
            // gone
          }
          continue;
        }
        try {
          if (statSync(abs).isDirectory()) {
            statEntry(abs, true, w);
            rec(r, entriesOf(abs));
            continue;
          }
        } catch {
          continue;
        }
      } else if (e.isDirectory()) {
        statEntry(abs, true, w);
        rec(r, entriesOf(abs));
        continue;
      } else if (!e.isFile()) continue;
      if (!statEntry(abs, false, w)) continue;
      try {
        const data = readFileSync(abs);
        if (r === SKILL_FILE) skillMd = data.toString('utf8');
        findings.push(...scanSkillFile(data, r));
      } catch {
        // vanished between readdir and read
      }
    }
  };
  rec('', top);
  return { findings, skillMd };
}

function loadSkill(dir: string, entries: Dirent[], name: string, category: string | null, scope: SkillScope, w: Walk): SkillInfo | undefined {
  const where = `${scope} skill ${category ? category + '/' : ''}${name}`;
  const onlySkillFile = entries.length === 1 && entries[0]!.name === SKILL_FILE && entries[0]!.isFile();
  if (!onlySkillFile) statEntry(dir, true, w);
  if (!SKILL_NAME_PATTERN.test(name) || (category !== null && !SKILL_NAME_PATTERN.test(category))) {
    w.warnings.push(`${where}: folder name is not a valid skill name; skipped.`);
    return undefined;
  }
  const { findings, skillMd } = scanFolder(dir, entries, w);
  if (skillMd === undefined) return undefined;
  let description: string;
  try {
    description = parseSkillMd(skillMd, `${where}: SKILL.md`).frontMatter.description;
  } catch (err) {
    w.warnings.push(`${(err as Error).message} Skipped from the skill index.`);
    return undefined;
  }
  const verdict = verdictOf(findings);
  if (verdict === 'dangerous') {
    w.warnings.push(`${where} scans dangerous and is kept out of the index: ${describeFindings(findings)}. Fix or delete ${dir}.`);
    return undefined;
  }
  return { name, category, description: description.trim(), scope, dir, verdict };
}

const hasSkillFile = (entries: Dirent[]) => entries.some((e) => e.name === SKILL_FILE && (e.isFile() || e.isSymbolicLink()));

/** Walks one skills root laid out as [category/]name/SKILL.md. */
export function walkRoot(root: string, scope: SkillScope, w: Walk): SkillInfo[] {
  const out: SkillInfo[] = [];
  if (!statEntry(root, true, w)) return out;
  for (const top of entriesOf(root)) {
    if (top.name.startsWith('.') || !top.isDirectory()) continue;
    const topDir = join(root, top.name);
    const topEntries = entriesOf(topDir);
    if (hasSkillFile(topEntries)) {
      const s = loadSkill(topDir, topEntries, top.name, null, scope, w);
      if (s) out.push(s);
      continue;
    }
    statEntry(topDir, true, w);
    for (const sub of topEntries) {
      if (sub.name.startsWith('.') || !sub.isDirectory()) continue;
      const dir = join(topDir, sub.name);
      const entries = entriesOf(dir);
      if (!hasSkillFile(entries)) {
        statEntry(dir, true, w);
        continue;
      }
      const s = loadSkill(dir, entries, sub.name, top.name, scope, w);
      if (s) out.push(s);
    }
  }
  return out;
}

/** Builds the catalog: project skills first, and they win a name collision. */
export function buildCatalog(userRoot: string, projectRoot?: string): Catalog {
  const w: Walk = { manifest: [], warnings: [] };
  const project = projectRoot ? walkRoot(projectRoot, 'project', w) : [];
  const user = walkRoot(userRoot, 'user', w);
  const seen = new Map<string, SkillInfo>();
  for (const s of project) {
    if (seen.has(s.name)) w.warnings.push(`project skill ${s.name} exists twice (${seen.get(s.name)!.dir} and ${s.dir}); using the first.`);
    else seen.set(s.name, s);
  }
  for (const s of user) {
    const other = seen.get(s.name);
    if (!other) seen.set(s.name, s);
    else if (other.scope === 'user') w.warnings.push(`skill ${s.name} exists twice (${other.dir} and ${s.dir}); using the first.`);
  }
  const skills = [...seen.values()].sort((a, b) => byCodeUnit(a.category ?? '', b.category ?? '') || byCodeUnit(a.name, b.name));
  return { skills, warnings: w.warnings, manifest: w.manifest };
}

/** The uncategorised skills' heading in the index. */
export const DEFAULT_CATEGORY = 'general';
/** Index lines stay short: the description is cut to this many characters (Hermes: 57 + '...'). */
export const INDEX_DESCRIPTION_MAX_CHARS = 60;

function cut(desc: string): string {
  const oneLine = desc.replace(/\s+/g, ' ').trim();
  return oneLine.length > INDEX_DESCRIPTION_MAX_CHARS ? oneLine.slice(0, INDEX_DESCRIPTION_MAX_CHARS - 3) + '...' : oneLine;
}

/**
 * The skill index for the volatile prompt tier, in Hermes' shape: categories sorted, one
 * line per skill, descriptions cut to 60 characters. Empty when there are no skills.
 */
export function renderIndex(skills: SkillInfo[]): string {
  if (skills.length === 0) return '';
  const byCategory = new Map<string, SkillInfo[]>();
  for (const s of skills) {
    const c = s.category ?? DEFAULT_CATEGORY;
    if (!byCategory.has(c)) byCategory.set(c, []);
    byCategory.get(c)!.push(s);
  }
  const lines = [
    '## Skills',
    'Before replying, scan the skills below. If one matches your task, load it with skill_view(name) and follow its instructions.',
    'Skills marked [project] belong to this repository and are read-only; create or patch your own with skill_manage.',
    '<available_skills>',
  ];
  for (const category of [...byCategory.keys()].sort()) {
    lines.push(`  ${category}:`);
    for (const s of byCategory.get(category)!.sort((a, b) => byCodeUnit(a.name, b.name))) {
      lines.push(`    - ${s.name}${s.scope === 'project' ? ' [project]' : ''}: ${cut(s.description)}`);
    }
  }
  lines.push('</available_skills>');
  return lines.join('\n');
}
