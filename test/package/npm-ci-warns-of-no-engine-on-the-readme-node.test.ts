/**
 * `npm ci`, the first step of README's install, prints no engine warning on the Node the README
 * names: every package the lockfile installs accepts it (a tool that needs a newer Node is
 * installed by the tests that run it, into their npm cache: test/helpers/npm-cache.ts).
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../helpers/env.js';

describe('npm ci on the README Node', () => {
  it('the lockfile holds no package whose engines refuse this Node, and npm ci (dry run) prints no EBADENGINE', () => {
    const readme = readFileSync(join(REPO_ROOT, 'README.md'), 'utf8');
    expect(readme, "README's requirements no longer name a Node version").toMatch(/Node ≥ 20\.\d+/);
    const dir = mkdtempSync(join(tmpdir(), 'hd-npmci-'));
    try {
      for (const f of ['package.json', 'package-lock.json']) copyFileSync(join(REPO_ROOT, f), join(dir, f));
      // Only npm's settings of this user (registry, cache): the lockfile is read, nothing is installed.
      const env: NodeJS.ProcessEnv = {};
      for (const [k, v] of Object.entries(process.env)) if (!k.toLowerCase().startsWith('npm_')) env[k] = v;
      const r = spawnSync('npm', ['ci', '--dry-run', '--no-audit', '--no-fund', '--prefer-offline'], { cwd: dir, env, encoding: 'utf8', timeout: 120_000 });
      const out = `${r.stdout}${r.stderr}`;
      expect(r.status, `npm ci --dry-run failed:\n${out.slice(-2000)}`).toBe(0);
      const warned = out.split('\n').filter((l) => l.includes('EBADENGINE'));
      expect(warned, `npm ci warns that a package refuses Node ${process.version}:\n${warned.join('\n')}`).toEqual([]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
