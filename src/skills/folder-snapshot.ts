/**
 * Byte-exact snapshots of skill folders, so a change the scanner rejects can be undone
 * completely: files rewritten, created files and folders removed, deleted ones recreated.
 */
import { chmodSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, rmdirSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { byCodeUnit } from '../text/order.js';

type Entry = { kind: 'dir'; mode: number } | { kind: 'file'; mode: number; data: Buffer } | { kind: 'symlink'; target: string };

/** The state of one folder: undefined when it did not exist. */
export type TreeSnapshot = { root: string; entries: Map<string, Entry> | undefined };

function walk(root: string, rel: string, out: Map<string, Entry>): void {
  for (const name of readdirSync(join(root, rel))) {
    const r = rel ? `${rel}/${name}` : name;
    const st = lstatSync(join(root, r));
    if (st.isSymbolicLink()) out.set(r, { kind: 'symlink', target: readlinkSync(join(root, r)) });
    else if (st.isDirectory()) {
      out.set(r, { kind: 'dir', mode: st.mode & 0o7777 });
      walk(root, r, out);
    } else if (st.isFile()) out.set(r, { kind: 'file', mode: st.mode & 0o7777, data: readFileSync(join(root, r)) });
  }
}

export function snapshotTree(root: string): TreeSnapshot {
  try {
    if (!lstatSync(root).isDirectory()) return { root, entries: undefined };
  } catch {
    return { root, entries: undefined };
  }
  const entries = new Map<string, Entry>();
  entries.set('', { kind: 'dir', mode: lstatSync(root).mode & 0o7777 });
  walk(root, '', entries);
  return { root, entries };
}

function sameFile(path: string, e: Entry): boolean {
  try {
    const st = lstatSync(path);
    if (e.kind === 'symlink') return st.isSymbolicLink() && readlinkSync(path) === e.target;
    if (e.kind === 'dir') return st.isDirectory() && !st.isSymbolicLink();
    return st.isFile() && (st.mode & 0o7777) === e.mode && readFileSync(path).equals(e.data);
  } catch {
    return false;
  }
}

/**
 * Puts `snap.root` back exactly as snapshotted. Parent folders created since (a new
 * category) are removed by the caller with `removeEmptyDirs`.
 */
export function restoreTree(snap: TreeSnapshot): void {
  const { root, entries } = snap;
  if (!entries) {
    rmSync(root, { recursive: true, force: true });
    return;
  }
  // Remove whatever is not in the snapshot (deepest first), then write back what differs.
  const now = snapshotTree(root).entries ?? new Map<string, Entry>();
  const extra = [...now.keys()].filter((k) => k && (!entries.has(k) || entries.get(k)!.kind !== now.get(k)!.kind)).sort((a, b) => b.length - a.length);
  for (const rel of extra) rmSync(join(root, rel), { recursive: true, force: true });
  const ordered = [...entries.entries()].sort(([a], [b]) => a.split('/').length - b.split('/').length || byCodeUnit(a, b));
  for (const [rel, e] of ordered) {
    const p = rel ? join(root, rel) : root;
    if (sameFile(p, e)) continue;
    if (e.kind === 'dir') {
      mkdirSync(p, { recursive: true });
      chmodSync(p, e.mode);
    } else if (e.kind === 'symlink') {
      rmSync(p, { recursive: true, force: true });
      mkdirSync(dirname(p), { recursive: true });
      symlinkSync(e.target, p);
    } else {
      try {
        if (lstatSync(p).isSymbolicLink()) unlinkSync(p);
      } catch {
        // absent
      }
      mkdirSync(dirname(p), { recursive: true });
      writeFileSync(p, e.data, { mode: e.mode });
      chmodSync(p, e.mode);
    }
  }
}

/** Removes `dir` and its parents up to (not including) `stop` while they are empty. */
export function removeEmptyDirs(dir: string, stop: string): void {
  let d = dir;
  while (d.startsWith(stop + '/') && d !== stop) {
    try {
      rmdirSync(d);
    } catch {
      return;
    }
    d = dirname(d);
  }
}

/** Relative paths of the regular files and symlinks under `root` (not following links). */
export function listFiles(root: string): string[] {
  const out: string[] = [];
  const rec = (rel: string) => {
    let names: string[];
    try {
      names = readdirSync(rel ? join(root, rel) : root);
    } catch {
      return;
    }
    for (const name of names.sort()) {
      const r = rel ? `${rel}/${name}` : name;
      const st = lstatSync(join(root, r));
      if (st.isDirectory()) rec(r);
      else out.push(r);
    }
  };
  rec('');
  return out;
}
