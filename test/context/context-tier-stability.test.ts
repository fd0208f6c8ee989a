import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ContextBuilder } from '../../src/context/builder.js';
import { ALL_TOOL_NAMES } from '../../src/context/tiers.js';
import { git, writeFiles } from '../helpers/env.js';

const base = realpathSync(mkdtempSync(join(tmpdir(), 'hd-tiers-')));
const home = join(base, 'home');
let repoA: string;
let repoB: string;

function makeRepo(name: string, files: Record<string, string>): string {
  const dir = join(base, name);
  writeFiles(dir, files);
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'add', '-A');
  git(dir, '-c', 'user.name=T', '-c', 'user.email=t@e', '-c', 'commit.gpgsign=false', 'commit', '-qm', 'init');
  return dir;
}

const session = (root: string, extra: Partial<ConstructorParameters<typeof ContextBuilder>[0]> = {}) =>
  new ContextBuilder({
    root,
    gitDir: join(root, '.git'),
    home,
    memorySnapshot: () => ({ memory: 'MEMORY: uses pnpm', user: 'USER: prefers terse answers' }),
    skillIndex: () => 'SKILLS: deploy',
    ...extra,
  });

const morning = new Date(2025, 4, 6, 8, 1, 2);
const evening = new Date(2025, 4, 6, 23, 59, 0);

beforeAll(() => {
  writeFiles(home, { 'SOUL.md': 'You are Hermes, calm and exact.' });
  repoA = makeRepo('a', { 'AGENTS.md': 'A rules', 'src/x.ts': 'x' });
  repoB = makeRepo('b', { 'CLAUDE.md': 'B rules' });
});
afterAll(() => rmSync(base, { recursive: true, force: true }));

describe('prompt tiers', () => {
  it('stable is byte-identical across sessions and repositories; context and volatile differ by repository only', async () => {
    const a1 = await session(repoA).build({ now: morning });
    const a2 = await session(repoA).build({ now: evening });
    const b1 = await session(repoB).build({ now: morning });
    expect(a1.tiers.stable.sha256).toBe(b1.tiers.stable.sha256);
    expect(a1.tiers.stable.text).toBe(a2.tiers.stable.text);
    expect(a1.tiers.context.text).toBe(a2.tiers.context.text);
    expect(a1.tiers.context.sha256).not.toBe(b1.tiers.context.sha256);
    // The date without time: the same all day.
    expect(a1.tiers.volatile.text).toBe(a2.tiers.volatile.text);
    expect(a1.tiers.volatile.text).toContain('Date: 2025-05-06');
    expect(a1.system).toBe(a2.system);
    expect(a1.tiers.stable.text).not.toContain(base);
    expect(a1.tiers.stable.text).not.toMatch(/\d{4}-\d{2}-\d{2}/);
  });

  it('joins stable, context, volatile in that order, separated by blank lines', async () => {
    const p = await session(repoA).build({ now: morning });
    expect(p.system).toBe(`${p.tiers.stable.text}\n\n${p.tiers.context.text}\n\n${p.tiers.volatile.text}`);
    expect(p.tiers.stable.text.startsWith('You are Hermes, calm and exact.')).toBe(true);
    expect(p.tiers.context.text).toMatch(/^# Workspace\n.*\nBranch: main\nHEAD: [0-9a-f]{7}\nWorking tree: 0 staged, 0 unstaged, 0 untracked/s);
    expect(p.tiers.context.text).toContain('## AGENTS.md\n\nA rules');
    const v = p.tiers.volatile.text;
    expect(v.indexOf('SKILLS')).toBeLessThan(v.indexOf('MEMORY'));
    expect(v.indexOf('MEMORY')).toBeLessThan(v.indexOf('USER'));
    expect(p.tiers.stable.bytes).toBe(Buffer.byteLength(p.tiers.stable.text));
    expect(Object.isFrozen(p)).toBe(true);
  });

  it('the same tool set in another order gives the same stable tier; a different set does not', async () => {
    const s = session(repoA);
    const all = await s.build({ now: morning, toolNames: [...ALL_TOOL_NAMES].reverse() });
    const def = await s.build({ now: morning });
    const fewer = await s.build({ now: morning, toolNames: ['read_file', 'terminal'] });
    expect(all.tiers.stable.text).toBe(def.tiers.stable.text);
    expect(fewer.tiers.stable.text).not.toBe(def.tiers.stable.text);
    expect(def.tiers.stable.text).toContain("'User prefers concise responses' ✓ — 'Always respond concisely' ✗");
    expect(fewer.tiers.stable.text).not.toContain('session_search');
  });

  it('the caller system message goes into the context tier', async () => {
    const p = await session(repoA).build({ now: morning, callerSystem: 'Answer in French.' });
    expect(p.tiers.context.text).toContain('Answer in French.');
    expect(p.tiers.stable.text).not.toContain('French');
  });

  it('a cached builder keeps serving its snapshot until invalidated, then sees the change', async () => {
    const s = session(repoA, { workspaceWatched: () => true });
    const before = await s.build({ now: morning });
    writeFileSync(join(repoA, 'AGENTS.md'), 'A rules v2');
    writeFileSync(join(repoA, 'src/x.ts'), 'changed');
    const cached = await s.build({ now: morning });
    expect(cached.tiers.context.text).toBe(before.tiers.context.text);
    s.invalidateAuthority();
    s.invalidateWorkspace();
    const after = await s.build({ now: morning });
    expect(after.tiers.context.text).toContain('A rules v2');
    expect(after.tiers.context.text).toContain('0 staged, 2 unstaged');
    // The session that began earlier still holds its frozen prompt.
    expect(before.tiers.context.text.endsWith('A rules')).toBe(true);
    expect(before.tiers.context.text).not.toContain('A rules v2');
    git(repoA, 'checkout', '-q', '--', '.');
  });
});
