/**
 * The sandbox's plan for a real repository, and its two renderings: bubblewrap arguments
 * (mounts in an order where a read-only path lands on the writable tree above it, never the
 * other way round) and the macOS Seatbelt profile (not run here: this suite runs on Linux;
 * its text is what is checked).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bwrapArgs, seatbeltProfile, type SandboxPlan } from '../../src/guard/sandbox.js';
import { guardOwnedPath, sandboxEnv, sandboxPlan } from '../../src/guard/sandbox-plan.js';

const base = realpathSync(mkdtempSync(join(tmpdir(), 'hd-plan-')));
afterAll(() => rmSync(base, { recursive: true, force: true }));

function repo(): { root: string; plan: (network?: boolean) => SandboxPlan } {
  const root = join(base, 'repo');
  for (const d of ['.hermes', 'src/generated', 'gen/out', '.husky/_', 'home/.ssh', 'hermes-home']) mkdirSync(join(root, d), { recursive: true });
  for (const f of ['.hermes/config.yaml', 'src/generated/api.ts', 'gen/out/a.ts', '.env', '.husky/pre-commit', 'schema.lock'])
    writeFileSync(join(root, f), 'x\n');
  execFileSync('git', ['init', '-q'], { cwd: root });
  const config = {
    rules: [
      { id: 'generated', message: 'm', protect: ['src/generated/**', 'schema.lock'] },
      { id: 'regenerated', message: 'm', protect: ['gen/out/**'], generator: 'true' },
    ],
  };
  return {
    root,
    plan: (network = false) =>
      sandboxPlan({
        root,
        gitDir: join(root, '.git'),
        commonDir: join(root, '.git'),
        home: join(root, 'hermes-home'),
        userHome: join(root, 'home'),
        config: { ...config, guard: { sandbox: { network } } },
        protectedFiles: [
          { rel: 'src/generated/api.ts', generator: false },
          { rel: 'schema.lock', generator: false },
          { rel: 'gen/out/a.ts', generator: true },
        ],
        secretFiles: [join(root, '.env')],
        hooksPath: '.husky/_',
        tmp: join(base, 'tmp'),
        empty: join(base, 'empty'),
        files: [['/shim/git', '/usr/bin/git']],
        socketDir: join(base, 'sockets'),
        socket: [join(base, 'sockets', 'x.agent.sock'), join(base, 'sockets', 'x.sock')],
        alsoVisible: [],
      }),
  };
}

describe('the sandbox plan', () => {
  const { root, plan } = repo();
  const p = plan();

  it('keeps the guard’s files and protected paths without a generator read-only, masks secrets', () => {
    // The git dir is a mount point of its own (it cannot be moved away), writable only where git writes.
    expect(p.writable).toEqual([root, join(root, '.git')]);
    expect(p.readOnly).toEqual(expect.arrayContaining(['.git/info', '.git/description'].map((r) => join(root, r))));
    expect(p.readOnly).not.toEqual(expect.arrayContaining(['.git/objects', '.git/refs', '.git/HEAD'].map((r) => join(root, r))));
    // HERMES_HOME and HOME sit inside the work tree here, so they too are bound read-only.
    expect(p.readOnly).toEqual(
      expect.arrayContaining(
        ['.hermes', '.husky', '.git/config', '.git/hooks', 'src/generated', 'schema.lock', 'hermes-home', 'home'].map((r) => join(root, r)),
      ),
    );
    // A generator's files stay writable: the agent regenerates them and is judged after.
    expect(p.readOnly).not.toContain(join(root, 'gen/out'));
    expect(p.maskFiles).toContain(join(root, '.env'));
    expect(p.maskDirs).toContain(join(root, 'home/.ssh'));
    expect(p.network).toBe(false);
  });

  it('bwrap: read-only mounts after the writable tree, masks after both, the agent socket in the hidden socket dir (where it still is)', () => {
    const args = bwrapArgs({ kind: 'bwrap', path: '/usr/bin/bwrap', disableUserns: true }, p, 'true');
    const at = (op: string, dest: string) => args.findIndex((a, i) => a === op && args[i + (op === '--tmpfs' ? 1 : 2)] === dest);
    const rootAt = at('--bind', root);
    expect(rootAt).toBeGreaterThan(at('--bind', '/tmp'));
    for (const r of ['.hermes', 'src/generated', '.git/config']) expect(at('--ro-bind', join(root, r))).toBeGreaterThan(rootAt);
    expect(args[at('--ro-bind', join(root, '.env')) + 1]).toBe('/dev/null');
    expect(at('--ro-bind-try', join(base, 'sockets', 'x.sock'))).toBeGreaterThan(at('--tmpfs', join(base, 'sockets')));
    expect(args).toEqual(
      expect.arrayContaining(['--unshare-user', '--unshare-pid', '--unshare-net', '--disable-userns', '--die-with-parent', '--new-session']),
    );
    expect(args.slice(-3)).toEqual(['/bin/sh', '-c', 'true']);
    expect(bwrapArgs({ kind: 'bwrap', path: 'b', disableUserns: false }, plan(true), 'x')).not.toContain('--unshare-net');
  });

  it('macOS: the Seatbelt profile denies writes outside and to read-only paths, reads of secrets, IP networking', () => {
    const profile = seatbeltProfile(p);
    expect(profile).toContain('(deny file-write* (require-not (require-any');
    expect(profile).toContain(`(subpath "${join(root, '.hermes')}")`);
    expect(profile).toContain(`(deny file-read* (literal "${join(root, '.env')}")`);
    expect(profile).toContain('(deny network-outbound (remote ip))');
    expect(profile).toContain(`(allow network-outbound (remote unix-socket (path-literal "${join(base, 'sockets', 'x.agent.sock')}")))`);
  });

  it('the environment is an allowlist: the daemon’s keys never pass', () => {
    const env = sandboxEnv(
      { PATH: '/usr/bin', HOME: '/h', OPENAI_API_KEY: 'sk-x', GITHUB_TOKEN: 'ghp_x', LC_ALL: 'C', NPM_TOKEN: 'n', HERMESD_SKIP: '1', HUSKY: '0' },
      { extra: ['NPM_TOKEN'], home: '/hh', socketDir: '/s' },
    );
    expect(env).toEqual({ PATH: '/usr/bin', HOME: '/h', LC_ALL: 'C', NPM_TOKEN: 'n', TMPDIR: '/tmp', HERMES_HOME: '/hh', HERMESD_SOCKET_DIR: '/s' });
  });

  it('guard-owned paths', () => {
    for (const yes of ['.hermes/config.yaml', '.hermes', '.husky/pre-commit', 'lefthook.yml', '.claude/settings.json', '.mcp.json'])
      expect(guardOwnedPath(yes), yes).toBe(true);
    for (const no of ['src/.hermes.ts', 'docs/lefthook.yml', '.hermesrc', 'README.md']) expect(guardOwnedPath(no), no).toBe(false);
  });
});
