/**
 * The folders of src/ are layers, and their order is written once: `LAYERS` in
 * .dependency-cruiser.cjs (which `npm run lint` enforces) and the map that opens
 * docs/architecture.md must be the same list. Independently of dependency-cruiser, every
 * import of src/ (static, dynamic and type-only) is read here and collapsed to its folder:
 * no folder imports a folder above it, so there is no cycle between folders.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/env.js';

const require = createRequire(import.meta.url);
const LAYERS: string[] = require(join(REPO_ROOT, '.dependency-cruiser.cjs')).LAYERS;
const SRC = join(REPO_ROOT, 'src');

/** The folder (layer) of a file under src/: '(root)' for the files directly in it. */
function layerOf(file: string): string {
  const rel = relative(SRC, file).split('\\').join('/');
  return rel.includes('/') ? rel.split('/')[0]! : '(root)';
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    return statSync(p).isDirectory() ? tsFiles(p) : p.endsWith('.ts') ? [p] : [];
  });
}

/** Every relative import of a file: `from '…'`, `import '…'`, `import('…')`, type-only ones included. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const specs = [...text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*|\bimport\s+)['"](\.{1,2}\/[^'"]+)['"]/g)].map((m) => m[1]!);
  return specs.map((s) => resolve(dirname(file), s.replace(/\.js$/, '.ts')));
}

describe('folders are layers, written once', () => {
  it('the map in docs/architecture.md lists the layers of .dependency-cruiser.cjs, in its order', () => {
    const doc = readFileSync(join(REPO_ROOT, 'docs/architecture.md'), 'utf8');
    const map = /<!-- layers:begin -->([\s\S]*?)<!-- layers:end -->/.exec(doc);
    expect(map, 'docs/architecture.md has no <!-- layers:begin --> … <!-- layers:end --> map').not.toBeNull();
    const listed = [...map![1]!.matchAll(/^\| `([^`]+)` \|/gm)].map((m) => (m[1] === 'src/*.ts' ? '(root)' : m[1]!));
    expect(listed, 'the map and LAYERS differ (same folders, same order, lowest first)').toEqual(LAYERS);
  });

  it('every folder of src/ is a layer, and every layer a folder', () => {
    const folders = readdirSync(SRC).filter((n) => statSync(join(SRC, n)).isDirectory());
    expect(
      folders.filter((f) => !LAYERS.includes(f)),
      'folders of src/ missing from LAYERS',
    ).toEqual([]);
    expect(
      LAYERS.filter((l) => l !== '(root)' && !folders.includes(l)),
      'layers with no folder',
    ).toEqual([]);
  });

  it('no folder imports a folder above it (so no cycle between folders)', () => {
    const upward: string[] = [];
    const edges = new Map<string, Set<string>>();
    for (const file of tsFiles(SRC)) {
      const from = layerOf(file);
      for (const target of importsOf(file)) {
        if (!target.startsWith(SRC + '/')) continue;
        const to = layerOf(target);
        if (to === from) continue;
        (edges.get(from) ?? edges.set(from, new Set()).get(from)!).add(to);
        if (LAYERS.indexOf(to) > LAYERS.indexOf(from))
          upward.push(`${relative(REPO_ROOT, file)} imports ${relative(REPO_ROOT, target)} (${from} → ${to}, a layer above)`);
      }
    }
    expect(upward, `upward imports:\n${upward.join('\n')}`).toEqual([]);
    // A cycle between folders, found by a walk of the collapsed graph (none can exist without an upward import; checked on its own).
    const cycles: string[] = [];
    const state = new Map<string, 'open' | 'done'>();
    const visit = (n: string, path: string[]) => {
      if (state.get(n) === 'done') return;
      if (state.get(n) === 'open') {
        cycles.push([...path.slice(path.indexOf(n)), n].join(' → '));
        return;
      }
      state.set(n, 'open');
      for (const m of edges.get(n) ?? []) visit(m, [...path, n]);
      state.set(n, 'done');
    };
    for (const n of edges.keys()) visit(n, []);
    expect(cycles, `cycles between folders:\n${cycles.join('\n')}`).toEqual([]);
    expect(edges.size, 'the import scan found no edges between folders (it reads nothing)').toBeGreaterThan(20);
  });
});
