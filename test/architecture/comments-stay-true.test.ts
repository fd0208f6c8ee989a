/**
 * Comments that stay true: every repository path a comment names exists (a file moved or
 * renamed takes its mentions with it), and so does every test test/README.md names, no comment carries a tracker number (the tracker is
 * not the code's), and no comment in src/ carries one machine's timing (figures belong in
 * docs/benchmarks.md, beside the run that measured them; a bound the code sets — "every
 * 500 ms" — is not a measurement).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/env.js';

const LAYERS: string[] = createRequire(import.meta.url)(join(REPO_ROOT, '.dependency-cruiser.cjs')).LAYERS;

function files(dir: string, exts: RegExp, skip: RegExp = /$^/): string[] {
  return readdirSync(join(REPO_ROOT, dir)).flatMap((name) => {
    const rel = `${dir}/${name}`;
    if (skip.test(rel)) return [];
    return statSync(join(REPO_ROOT, rel)).isDirectory() ? files(rel, exts, skip) : exts.test(name) ? [rel] : [];
  });
}

const CODE = /\.(ts|c|sh|mjs|cjs)$/;
const SOURCES = [...files('src', CODE), ...files('test', CODE, /^test\/fixtures$/), ...files('bench', CODE), ...files('scripts', CODE)];

/** Each comment line of a file, with its line number: TypeScript's own scanner finds them in .ts and .mjs; `/* */ ` and `; //` in C; `#` in sh. */
function commentLines(rel: string): Array<{ line: number; text: string }> {
  const text = readFileSync(join(REPO_ROOT, rel), 'utf8');
  const out: Array<{ line: number; text: string }> = [];
  const lineAt = (pos: number) => text.slice(0, pos).split('\n').length;
  const push = (start: number, end: number) =>
    text
      .slice(start, end)
      .split('\n')
      .forEach((t, k) => out.push({ line: lineAt(start) + k, text: t }));
  if (rel.endsWith('.sh')) {
    text.split('\n').forEach((l, i) => {
      const at = l.trimStart().startsWith('#') ? l.indexOf('#') : l.indexOf(' # ');
      if (at >= 0 && !l.startsWith('#!')) out.push({ line: i + 1, text: l.slice(at) });
    });
    return out;
  }
  if (rel.endsWith('.c')) {
    for (const m of text.matchAll(/\/\*[\s\S]*?\*\/|\/\/[^\n]*/g)) push(m.index!, m.index! + m[0].length);
    return out;
  }
  const source = ts.createSourceFile(rel, text, ts.ScriptTarget.Latest, true);
  const seen = new Set<number>();
  const take = (ranges: ts.CommentRange[] | undefined) => {
    for (const r of ranges ?? []) if (!seen.has(r.pos)) (seen.add(r.pos), push(r.pos, r.end));
  };
  const visit = (node: ts.Node) => {
    take(ts.getLeadingCommentRanges(text, node.pos));
    take(ts.getTrailingCommentRanges(text, node.end));
    node.forEachChild(visit);
  };
  visit(source);
  take(ts.getLeadingCommentRanges(text, source.endOfFileToken.pos));
  return out;
}

const COMMENTS = SOURCES.flatMap((rel) => commentLines(rel).map((c) => ({ ...c, rel })));

/** Repository paths in a comment: under a top-level folder, or under a folder of src/ named without `src/`. */
const TOP = /(?<![\w./-])((?:src|test|bench|scripts|docs|templates)\/[\w./-]*[\w])/g;
const IN_SRC = new RegExp(`(?<![\\w./-])((?:${LAYERS.filter((l) => l !== '(root)').join('|')})\\/[\\w./-]*\\.(?:ts|c|sh))\\b`, 'g');

describe('comments that stay true', () => {
  it('reads the comments of every source file', () => {
    expect(SOURCES.length, 'no source files found').toBeGreaterThan(300);
    expect(COMMENTS.length, 'no comments found').toBeGreaterThan(5000);
  });

  it('every repository path a comment names exists', () => {
    const missing: string[] = [];
    for (const c of COMMENTS) {
      for (const m of c.text.matchAll(TOP)) {
        const p = m[1]!.replace(/[.]+$/, '');
        if (/[*<>{}…]/.test(p) || existsSync(join(REPO_ROOT, p))) continue;
        // src/ followed by anything but a folder of ours is a path in someone's repository (an example: src/generated/).
        if (p.startsWith('src/') && !LAYERS.includes(p.split('/')[1]!) && p !== 'src/version.ts') continue;
        missing.push(`${c.rel}:${c.line}: ${p}`);
      }
      for (const m of c.text.matchAll(IN_SRC)) {
        const p = m[1]!;
        const from = join(REPO_ROOT, c.rel, '..');
        if (existsSync(join(REPO_ROOT, 'src', p)) || existsSync(join(from, p)) || existsSync(join(REPO_ROOT, p))) continue;
        missing.push(`${c.rel}:${c.line}: ${p} (src/${p})`);
      }
    }
    expect(missing, `comments name paths that do not exist:\n${missing.join('\n')}`).toEqual([]);
  });

  it('every test test/README.md names exists (its helpers guide and its invariant map)', () => {
    const text = readFileSync(join(REPO_ROOT, 'test', 'README.md'), 'utf8');
    const named = [...text.matchAll(/`([a-z-]+)\/([\w-]+?)(?:\.test\.ts)?`/g)].filter(
      (m) => statSync(join(REPO_ROOT, 'test', m[1]!), { throwIfNoEntry: false })?.isDirectory() && m[1] !== 'helpers' && m[1] !== 'fixtures',
    );
    expect(named.length, 'test/README.md names no tests').toBeGreaterThan(20);
    const missing = named.map((m) => `test/${m[1]}/${m[2]}.test.ts`).filter((p) => !existsSync(join(REPO_ROOT, p)));
    expect(missing, `test/README.md names tests that do not exist:\n${missing.join('\n')}`).toEqual([]);
  });

  it('no comment carries a tracker number', () => {
    const found = COMMENTS.filter((c) => /\bissues? #?\d+\b/i.test(c.text)).map((c) => `${c.rel}:${c.line}: ${c.text.trim()}`);
    expect(found, `tracker numbers in comments:\n${found.join('\n')}`).toEqual([]);
  });

  it("no comment in src/ carries one machine's timing", () => {
    // A measured figure: approximate (~, ≈, about), a cost or a duration measured (costs, took, added, here), a range or a decimal.
    const MEASURED =
      /(?:[~≈]|\babout |\bcosts? |\btook |\btakes |\badded |\bmeasured )\s*\d[\d.,]*\s?(?:ms|µs|us|s)\b|\d+\s?[–-]\s?\d+\s?(?:ms|µs)\b|\b\d+\.\d+\s?(?:ms|µs)\b|\d\s?(?:ms|µs)[^.;)]*\bhere\b/;
    const found = COMMENTS.filter((c) => c.rel.startsWith('src/') && MEASURED.test(c.text)).map((c) => `${c.rel}:${c.line}: ${c.text.trim()}`);
    expect(found, `timings in comments (they belong in docs/benchmarks.md):\n${found.join('\n')}`).toEqual([]);
  });
});
