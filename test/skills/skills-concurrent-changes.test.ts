import { execFileSync, spawn } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/env.js';
import { skillMd, tempHome } from '../helpers/skills.js';
import { settled } from '../helpers/settled.js';

const STORE_JS = join(REPO_ROOT, 'dist', 'src', 'skills', 'store.js');
const CHANGES_PER_PROCESS = 6;

// Each child process is a separate "daemon" sharing the home: it creates its own skills and
// patches a shared one, all without waiting for the other.
const CHILD = `
import { SkillStore } from ${JSON.stringify(pathToFileURL(STORE_JS).href)};
const [home, who, n] = process.argv.slice(2);
const store = new SkillStore({ home });
const md = (name, body) => '---\\nname: ' + name + '\\ndescription: made by ' + who + '\\n---\\n' + body + '\\n';
const results = [];
for (let i = 0; i < Number(n); i++) {
  const r = i % 2 === 0
    ? store.manage({ action: 'create', name: who + '-' + i, content: md(who + '-' + i, 'step ' + i) }, { sessionId: who })
    : store.manage({ action: 'patch', name: 'shared', old_string: 'line-' + who + '-' + (i === 1 ? 0 : i - 2), new_string: 'line-' + who + '-' + i }, { sessionId: who });
  results.push(await r.then(() => 'ok', (err) => err.message));
}
process.stdout.write(JSON.stringify(results));
`;

function run(script: string, args: string[]): Promise<{ code: number; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('close', (code) => resolve({ code: code ?? -1, out, err }));
  });
}

describe('two processes changing skills at once', () => {
  let h: ReturnType<typeof tempHome>;
  beforeEach(() => {
    h = tempHome();
  });
  afterEach(() => h.cleanup());

  it('both land, each change is one commit, and no change is lost', async () => {
    expect(existsSync(STORE_JS), 'run npx tsc -p . first').toBe(true);
    const { SkillStore } = await import('../../src/skills/store.js');
    const store = new SkillStore({ home: h.home });
    // The shared skill holds one line per process that each patch moves forward.
    await settled(() =>
      store.manage({ action: 'create', name: 'shared', content: skillMd('shared', 'shared', 'line-p1-0\nline-p2-0\n') }, { sessionId: 'setup' }),
    );
    const base = await store.commitCount();
    expect(store.indexText()).toContain('shared');

    const script = join(h.home, 'child.mjs');
    writeFileSync(script, CHILD);
    const [a, b] = await Promise.all([run(script, [h.home, 'p1', String(CHANGES_PER_PROCESS)]), run(script, [h.home, 'p2', String(CHANGES_PER_PROCESS)])]);
    for (const r of [a, b]) {
      expect(r.code, r.err).toBe(0);
      expect(JSON.parse(r.out)).toEqual(Array(CHANGES_PER_PROCESS).fill('ok'));
    }
    expect(await store.commitCount()).toBe(base + 2 * CHANGES_PER_PROCESS);
    expect(execFileSync('git', ['status', '--porcelain'], { cwd: h.skills, encoding: 'utf8' })).toBe('');
    const shared = readFileSync(join(h.skills, 'shared/SKILL.md'), 'utf8');
    expect(shared).toContain(`line-p1-${CHANGES_PER_PROCESS - 1}\nline-p2-${CHANGES_PER_PROCESS - 1}\n`);
    // The parent's cached index sees the other processes' changes (generation file).
    const names = store.list().map((s) => s.name);
    for (const who of ['p1', 'p2']) for (let i = 0; i < CHANGES_PER_PROCESS; i += 2) expect(names).toContain(`${who}-${i}`);
  }, 60_000);
});
