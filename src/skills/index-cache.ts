/**
 * Two caches for the skill catalog, as in Hermes' build_skills_system_prompt: an in-process
 * LRU (a daemon builds prompts for many sessions) and a snapshot on disk (a fresh daemon
 * starts warm). The LRU caches the rendered directory, not a ranking of skills. The disk
 * snapshot is trusted only while its manifest of mtimes and sizes still matches the disk;
 * the LRU is trusted until an invalidation: this process's own change, a 'skills-changed'
 * event, or another process's change (seen through the generation file every change bumps).
 */
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import { writeFileAtomicSync } from '../storage/atomic.js';
import { buildCatalog, manifestFresh, renderIndex, type Catalog } from './catalog.js';

/** Several work trees (and so several project folders) may be served by one process. */
export const INDEX_LRU_ENTRIES = 16;
/** Bumped when the snapshot's shape changes, so an old snapshot is rebuilt instead of misread. */
const SNAPSHOT_VERSION = 1;

export type CachedCatalog = Catalog & { text: string; generation: string };

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

const lru = new Map<string, CachedCatalog>();

function keyOf(p: CatalogPaths): string {
  return `${p.userRoot}\0${p.projectRoot ?? ''}`;
}

function snapshotPath(p: CatalogPaths): string {
  return join(p.snapshotDir, createHash('sha256').update(keyOf(p)).digest('hex').slice(0, 16) + '.json');
}

export function readGeneration(file: string): string {
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

export type LoadSource = 'memory' | 'snapshot' | 'built';

/** The catalog and its rendered index, from the cheapest place that is still valid. */
export function loadCatalog(p: CatalogPaths, opts: { noMemory?: boolean } = {}): CachedCatalog & { source: LoadSource } {
  const key = keyOf(p);
  const generation = readGeneration(p.generationFile);
  const hit = opts.noMemory ? undefined : lru.get(key);
  if (hit && hit.generation === generation) {
    lru.delete(key);
    lru.set(key, hit);
    return { ...hit, source: 'memory' };
  }
  const file = snapshotPath(p);
  let cached: CachedCatalog | undefined;
  let source: LoadSource = 'snapshot';
  try {
    const snap = JSON.parse(readFileSync(file, 'utf8')) as { version: number; key: string } & CachedCatalog;
    if (snap.version === SNAPSHOT_VERSION && snap.key === key && snap.generation === generation && manifestFresh(snap.manifest)) {
      cached = { skills: snap.skills, warnings: snap.warnings, manifest: snap.manifest, text: snap.text, generation };
    }
  } catch {
    // no snapshot, or a torn/foreign one: rebuild
  }
  if (!cached) {
    source = 'built';
    const catalog = buildCatalog(p.userRoot, p.projectRoot);
    cached = { ...catalog, text: renderIndex(catalog.skills), generation };
    try {
      mkdirSync(p.snapshotDir, { recursive: true });
      // A cache, not state: rename for atomicity, but no fsync (a lost snapshot is only a cold start).
      const tmp = `${file}.${process.pid}.tmp`;
      writeFileSync(tmp, JSON.stringify({ version: SNAPSHOT_VERSION, key, ...cached }));
      renameSync(tmp, file);
    } catch {
      // a read-only home still gets an index, only not a warm start
    }
  }
  lru.delete(key);
  lru.set(key, cached);
  while (lru.size > INDEX_LRU_ENTRIES) lru.delete(lru.keys().next().value!);
  return { ...cached, source };
}

/** Test and benchmark hook: forget every in-process entry. */
export function clearCatalogMemory(): void {
  lru.clear();
}

