/**
 * Two caches for the skill catalog, as in Hermes' build_skills_system_prompt: an in-process
 * LRU (a daemon builds prompts for many sessions) and a snapshot on disk (a fresh daemon
 * starts warm). The LRU caches the rendered directory, not a ranking of skills. The disk
 * snapshot is trusted only while its manifest of mtimes and sizes still matches the disk;
 * the LRU is trusted until an invalidation: this process's own change, a 'skills-changed'
 * event, or another process's change (seen through the generation file every change bumps).
 *
 * The snapshot is laid out for the warm start, whose cost is the manifest check: one JSON
 * header line (generation, warnings, the manifest as paths relative to the skill roots),
 * then the rendered index text, then the skill list as compact JSON that is parsed only
 * when something asks for the list (the prompt needs the text alone).
 */
import { existsSync, mkdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { dirname, join, sep } from 'node:path';
import { writeFileAtomicSync, writeRuntimeFileSync } from '../storage/atomic.js';
import { buildCatalog, renderIndex, type Catalog, type ManifestEntry, type SkillInfo, type SkillScope } from './catalog.js';
import type { Verdict } from './skill-scan.js';

/** Several work trees (and so several project folders) may be served by one process. */
export const INDEX_LRU_ENTRIES = 16;
/** Bumped when the snapshot's shape changes, so an old snapshot is rebuilt instead of misread. */
const SNAPSHOT_VERSION = 2;

export type CatalogPaths = {
  /** `$HERMES_HOME/skills` */
  userRoot: string;
  /** `<repo>/.hermes/skills`, when serving a repository */
  projectRoot?: string;
  /** Where snapshots live, e.g. `$HERMES_HOME/.skills-index` */
  snapshotDir: string;
  /** The file every accepted change rewrites, e.g. `$HERMES_HOME/.skills-generation` */
  generationFile: string;
};

export type LoadSource = 'memory' | 'snapshot' | 'built';

export type LoadedCatalog = Catalog & { text: string; generation: string; source: LoadSource };

/** A skill in the snapshot: [name, category, description, scope, verdict]; its folder is derived. */
type CompactSkill = [string, string | null, string, 'u' | 'p', Verdict];

type SnapshotHeader = {
  version: number;
  key: string;
  generation: string;
  warnings: string[];
  /** The skill roots the manifest paths are relative to (index into this list). */
  roots: string[];
  /** Flat [rootIndex, relPath, mtimeMs, size, …]; rootIndex -1 means relPath is absolute. */
  manifest: Array<number | string>;
  /** Length of the index text that follows the header line. */
  textLength: number;
};

/** One cached catalog; the skill list and the absolute manifest are materialised on demand. */
class Entry {
  private skillList: SkillInfo[] | undefined;
  private absManifest: ManifestEntry[] | undefined;
  constructor(
    readonly text: string,
    readonly warnings: string[],
    readonly generation: string,
    private readonly skillsOf: SkillInfo[] | (() => SkillInfo[]),
    private readonly manifestOf: ManifestEntry[] | (() => ManifestEntry[]),
  ) {}
  get skills(): SkillInfo[] {
    return (this.skillList ??= typeof this.skillsOf === 'function' ? this.skillsOf() : this.skillsOf);
  }
  get manifest(): ManifestEntry[] {
    return (this.absManifest ??= typeof this.manifestOf === 'function' ? this.manifestOf() : this.manifestOf);
  }
}

const lru = new Map<string, Entry>();

function keyOf(p: CatalogPaths): string {
  return `${p.userRoot}\0${p.projectRoot ?? ''}`;
}

function rootsOf(p: CatalogPaths): string[] {
  return p.projectRoot ? [p.projectRoot, p.userRoot] : [p.userRoot];
}

function snapshotPath(p: CatalogPaths): string {
  return join(p.snapshotDir, createHash('sha256').update(keyOf(p)).digest('hex').slice(0, 16) + '.snap');
}

export function readGeneration(file: string): string {
  // Read on every status answer: a home that never changed a skill has no file, and an ENOENT error costs more than the check.
  if (!existsSync(file)) return 'none';
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return 'none';
  }
}

/** Marks every cached catalog of this home stale, in this process and (through the file) in others. */
export function bumpGeneration(file: string): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileAtomicSync(file, `${Date.now()}-${process.pid}-${randomBytes(6).toString('hex')}`);
}

/** Drops the in-process entry and the disk snapshot of these paths. */
export function invalidateCatalog(p: CatalogPaths): void {
  lru.delete(keyOf(p));
  rmSync(snapshotPath(p), { force: true });
}

function compactManifest(manifest: ManifestEntry[], roots: string[]): Array<number | string> {
  const out: Array<number | string> = [];
  for (const [path, mtime, size] of manifest) {
    const i = roots.findIndex((r) => path === r || path.startsWith(r + sep));
    if (i === -1) out.push(-1, path, mtime, size);
    else out.push(i, path.slice(roots[i]!.length), mtime, size);
  }
  return out;
}

function expandManifest(flat: Array<number | string>, roots: string[]): ManifestEntry[] {
  const out: ManifestEntry[] = [];
  for (let i = 0; i < flat.length; i += 4) {
    const r = flat[i] as number;
    out.push([(r === -1 ? '' : roots[r]!) + (flat[i + 1] as string), flat[i + 2] as number, flat[i + 3] as number]);
  }
  return out;
}

/**
 * True when every path of the compact manifest still has the same mtime (and, for files,
 * size). This loop is the warm start: one stat per entry, no allocation beyond the path.
 */
function compactFresh(flat: Array<number | string>, roots: string[]): boolean {
  const opts = { throwIfNoEntry: false } as const;
  for (let i = 0; i < flat.length; i += 4) {
    const r = flat[i] as number;
    const st = statSync((r === -1 ? '' : roots[r]!) + (flat[i + 1] as string), opts);
    if (!st || st.mtimeMs !== flat[i + 2] || (flat[i + 3] !== -1 && st.size !== flat[i + 3])) return false;
  }
  return true;
}

function compactSkills(skills: SkillInfo[]): CompactSkill[] {
  return skills.map((s) => [s.name, s.category, s.description, s.scope === 'project' ? 'p' : 'u', s.verdict]);
}

function expandSkills(json: string, p: CatalogPaths): SkillInfo[] {
  return (JSON.parse(json) as CompactSkill[]).map(([name, category, description, sc, verdict]) => {
    const scope: SkillScope = sc === 'p' ? 'project' : 'user';
    const root = scope === 'project' ? p.projectRoot! : p.userRoot;
    return { name, category, description, scope, verdict, dir: category === null ? join(root, name) : join(root, category, name) };
  });
}

function readSnapshot(p: CatalogPaths, key: string, generation: string): Entry | undefined {
  let raw: string;
  try {
    raw = readFileSync(snapshotPath(p), 'utf8');
  } catch {
    return undefined;
  }
  try {
    const nl = raw.indexOf('\n');
    const head = JSON.parse(raw.slice(0, nl)) as SnapshotHeader;
    const roots = rootsOf(p);
    if (head.version !== SNAPSHOT_VERSION || head.key !== key || head.generation !== generation) return undefined;
    if (head.roots.length !== roots.length || head.roots.some((r, i) => r !== roots[i])) return undefined;
    const textEnd = nl + 1 + head.textLength;
    if (textEnd > raw.length) return undefined;
    if (!compactFresh(head.manifest, roots)) return undefined;
    const skillsJson = raw.slice(textEnd);
    return new Entry(
      raw.slice(nl + 1, textEnd),
      head.warnings,
      generation,
      () => expandSkills(skillsJson, p),
      () => expandManifest(head.manifest, roots),
    );
  } catch {
    // a torn or foreign snapshot: rebuild
    return undefined;
  }
}

function writeSnapshot(p: CatalogPaths, key: string, e: Entry, catalog: Catalog): void {
  const roots = rootsOf(p);
  const head: SnapshotHeader = {
    version: SNAPSHOT_VERSION,
    key,
    generation: e.generation,
    warnings: e.warnings,
    roots,
    manifest: compactManifest(catalog.manifest, roots),
    textLength: e.text.length,
  };
  const file = snapshotPath(p);
  try {
    mkdirSync(p.snapshotDir, { recursive: true });
    // A cache, not state: no fsync (a lost snapshot is only a cold start).
    writeRuntimeFileSync(file, `${JSON.stringify(head)}\n${e.text}${JSON.stringify(compactSkills(catalog.skills))}`);
  } catch {
    // a read-only home still gets an index, only not a warm start
  }
}

function loaded(e: Entry, source: LoadSource): LoadedCatalog {
  return {
    text: e.text,
    warnings: e.warnings,
    generation: e.generation,
    get skills() {
      return e.skills;
    },
    get manifest() {
      return e.manifest;
    },
    source,
  };
}

/** The catalog and its rendered index, from the cheapest place that is still valid. */
export function loadCatalog(p: CatalogPaths, opts: { noMemory?: boolean } = {}): LoadedCatalog {
  const key = keyOf(p);
  const generation = readGeneration(p.generationFile);
  const hit = opts.noMemory ? undefined : lru.get(key);
  if (hit && hit.generation === generation) {
    lru.delete(key);
    lru.set(key, hit);
    return loaded(hit, 'memory');
  }
  let entry = readSnapshot(p, key, generation);
  let source: LoadSource = 'snapshot';
  if (!entry) {
    source = 'built';
    const catalog = buildCatalog(p.userRoot, p.projectRoot);
    entry = new Entry(renderIndex(catalog.skills), catalog.warnings, generation, catalog.skills, catalog.manifest);
    writeSnapshot(p, key, entry, catalog);
  }
  lru.delete(key);
  lru.set(key, entry);
  while (lru.size > INDEX_LRU_ENTRIES) lru.delete(lru.keys().next().value!);
  return loaded(entry, source);
}

/** Test and benchmark hook: forget every in-process entry. */
export function clearCatalogMemory(): void {
  lru.clear();
}
