/**
 * `hermesd init --server` pins the server's rules in the bare repository's git dir
 * (`<git-dir>/hermesd/server-config.yaml`, from the default branch's committed config, or
 * init's defaults where it has none), which the admin may edit. Every push is judged by the
 * pinned rules and by the rules committed in its base: the repository's file may tighten the
 * server's rules, never loosen them; identical findings of the two are reported once.
 * `--uninstall` gives back exactly what init changed. Real bare repositories, real pushes.
 * (Keys are built at run time.)
 */
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { gitIn, makeEnv, type TestEnv } from '../helpers/env.js';
import { serverSide } from '../helpers/server.js';

const KEY = 'AKIA' + 'Q3EGRV7YXH2MZK4P';
const RULES = `rules:
  - id: no-aws-keys
    message: Never commit credentials.
    forbid: "AKIA[0-9A-Z]{16}"
`;

/** Every file under `dir` with its bytes: what an install may change and an uninstall must give back. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) {
        out[`${relative(dir, p)}/`] = '';
        walk(p);
      } else out[relative(dir, p)] = readFileSync(p, 'base64');
    }
  };
  walk(dir);
  return out;
}

describe("the server's pinned rules", () => {
  let t: TestEnv;
  let server: string;
  let clone: string;
  let pin: string;
  let initOut: string;

  const { push, commit, serverTip } = serverSide(
    () => t,
    () => ({ server, clone }),
  );

  beforeAll(async () => {
    t = makeEnv();
    const seed = t.repo({ '.hermes/config.yaml': RULES, 'gen/api.ts': 'v1\n', 'README.md': '# project\n' });
    server = join(seed, '..', 'server.git');
    gitIn(t, seed, 'clone', '-q', '--bare', seed, server);
    const init = await t.cli(['init', '--server'], { cwd: server });
    expect(init.code, `init --server failed: ${init.stderr}`).toBe(0);
    initOut = init.stdout;
    pin = join(server, 'hermesd', 'server-config.yaml');
    clone = join(seed, '..', 'clone');
    gitIn(t, seed, 'clone', '-q', server, clone);
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it('init --server writes the pin from the default branch’s committed config and says where it is and that it may be edited', () => {
    expect(existsSync(pin), `no pinned config at ${pin}`).toBe(true);
    expect(readFileSync(pin, 'utf8'), 'the pin does not hold the committed rules').toContain('forbid: "AKIA[0-9A-Z]{16}"');
    expect(initOut, 'init does not say where the pin is').toContain(pin);
    expect(initOut, 'init does not say the admin may edit it').toMatch(/edit/i);
  });

  it('a push that loosens the committed config lands, and the next push is still judged by the pinned rules', () => {
    const loosened = commit({ '.hermes/config.yaml': 'rules: []\n' }, 'no more rules');
    const first = push('origin', 'HEAD:main');
    expect(first.code, `loosening the committed config was refused:\n${first.err}`).toBe(0);
    const bad = commit({ 'creds.txt': `key = "${KEY}"\n` }, 'a key under the loosened config');
    const second = push('origin', 'HEAD:main');
    expect(second.code, `a key was accepted once the committed config was loosened:\n${second.err}`).not.toBe(0);
    expect(second.err).toMatch(new RegExp(`${bad.slice(0, 10)}\\s+creds\\.txt:1\\s+no-aws-keys`));
    expect(second.err, 'the refusal does not name both rule sources').toContain(
      `judged by the rules of .hermes/config.yaml at ${loosened.slice(0, 10)} and the server's pinned rules (${pin})`,
    );
    gitIn(t, clone, 'reset', '-q', '--hard', 'HEAD~1');
  });

  it('the committed config may tighten the pinned rules', () => {
    const protect = `rules:\n  - id: generated\n    message: Generated, never edited.\n    protect: ["gen/**"]\n`;
    const tightened = commit({ '.hermes/config.yaml': protect }, 'protect gen/');
    expect(push('origin', 'HEAD:main').code).toBe(0);
    commit({ 'gen/api.ts': 'v2 by hand\n' }, 'edit generated');
    const r = push('origin', 'HEAD:main');
    expect(r.code, `a change the committed rules forbid was accepted:\n${r.err}`).not.toBe(0);
    expect(r.err).toMatch(/gen\/api\.ts:0\s+generated\s+Generated, never edited\./);
    expect(serverTip()).toBe(tightened);
    gitIn(t, clone, 'reset', '-q', '--hard', 'HEAD~1');
  });

  it('a finding both the pin and the committed config make is reported once', () => {
    commit({ '.hermes/config.yaml': RULES }, 'the same rules as the pin');
    expect(push('origin', 'HEAD:main').code).toBe(0);
    commit({ 'creds2.txt': `${KEY}\n` }, 'a key both rule sets forbid');
    const r = push('origin', 'HEAD:main');
    expect(r.code).not.toBe(0);
    expect(r.err.match(/creds2\.txt:1\s+no-aws-keys/g) ?? [], `the finding is not reported exactly once:\n${r.err}`).toHaveLength(1);
    gitIn(t, clone, 'reset', '-q', '--hard', 'HEAD~1');
  });

  it('the admin may edit the pin; one that does not parse refuses every push with the file and line', () => {
    writeFileSync(pin, `${readFileSync(pin, 'utf8')}  - id: docs-frozen\n    message: docs/ is frozen on this server.\n    protect: ["docs/**"]\n`);
    commit({ 'docs/new.md': 'new\n' }, 'a doc');
    const frozen = push('origin', 'HEAD:main');
    expect(frozen.code, `a change the admin's edited pin forbids was accepted:\n${frozen.err}`).not.toBe(0);
    expect(frozen.err).toMatch(/docs\/new\.md:0\s+docs-frozen/);
    gitIn(t, clone, 'reset', '-q', '--hard', 'HEAD~1');
    const good = readFileSync(pin, 'utf8');
    writeFileSync(pin, `${good}  - id: Bad Id\n    message: x\n    forbid: "y"\n`);
    commit({ 'ok.txt': 'fine\n' }, 'clean');
    const broken = push('origin', 'HEAD:main');
    expect(broken.code, `a push was accepted under a pin that does not parse:\n${broken.err}`).not.toBe(0);
    expect(broken.err).toMatch(/server-config\.yaml:\d+:\d+: rules\[\d+\]\.id/);
    writeFileSync(pin, good);
    expect(push('origin', 'HEAD:main').code).toBe(0);
  });

  it('a committed rule of the same id cannot excuse what a pinned rule forbids (a generator it adds does not)', () => {
    writeFileSync(pin, `${readFileSync(pin, 'utf8')}  - id: generated\n    message: Generated, never edited.\n    protect: ["gen/**"]\n`);
    const excuse = `rules:\n  - id: generated\n    message: Generated, never edited.\n    protect: ["gen/**"]\n    generator: "npm run gen"\n`;
    commit({ '.hermes/config.yaml': excuse }, 'a generator for gen/');
    expect(push('origin', 'HEAD:main').code).toBe(0);
    commit({ 'gen/api.ts': 'v3 by hand\n' }, 'edit generated, "regenerated"');
    const r = push('origin', 'HEAD:main');
    expect(r.code, `the committed rule's generator excused a change the pinned rule forbids:\n${r.err}`).not.toBe(0);
    expect(r.err).toMatch(/gen\/api\.ts:0\s+generated\s+Generated, never edited\./);
    gitIn(t, clone, 'reset', '-q', '--hard', 'HEAD~1');
  });

  it('init --server again keeps the admin’s pin; uninstall keeps an edited pin and gives back everything else', async () => {
    const edited = readFileSync(pin, 'utf8');
    expect((await t.cli(['init', '--server'], { cwd: server })).code).toBe(0);
    expect(readFileSync(pin, 'utf8'), 'init --server overwrote the admin’s pin').toBe(edited);
    const un = await t.cli(['init', '--server', '--uninstall', '--json'], { cwd: server });
    expect(un.code, un.stderr).toBe(0);
    expect(un.json().kept, 'uninstall does not report the edited pin it kept').toContain(pin);
    expect(readFileSync(pin, 'utf8')).toBe(edited);
  });

  it('an unedited pin is removed by uninstall: the git dir is as before init (besides what pushes added)', async () => {
    const seed = t.repo({ 'README.md': '# no config\n' });
    const fresh = join(seed, '..', 'fresh.git');
    gitIn(t, seed, 'clone', '-q', '--bare', seed, fresh);
    const was = snapshot(fresh);
    const init = await t.cli(['init', '--server'], { cwd: fresh });
    expect(init.code, init.stderr).toBe(0);
    // No committed config: the pin is init's defaults (the no-secrets rule).
    expect(readFileSync(join(fresh, 'hermesd', 'server-config.yaml'), 'utf8')).toContain('secrets: true');
    const un = await t.cli(['init', '--server', '--uninstall'], { cwd: fresh });
    expect(un.code, un.stderr).toBe(0);
    expect(snapshot(fresh), 'uninstall left the git dir different from before init').toEqual(was);
  });
});
